"""A real Prometheus scrapes CycleGuardMetrics: every rule and every dashboard query has data."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prom import PrometheusServer, dashboard_queries, recording_rule_names
from prometheus_client import CollectorRegistry

from otel_cycleguard.metrics import CycleGuardMetrics

pytestmark = pytest.mark.slow

AGENTS = ("coder", "planner")


def record_round(metrics: CycleGuardMetrics) -> None:
    """One round of known events touching every metric (later: the demo agent process)."""
    for agent in AGENTS:
        for _ in range(4):
            metrics.session_started(agent)
        metrics.tool_call(agent, "read_file")
        metrics.tool_call(agent, "bash")
        metrics.model_turn(agent)
        metrics.signal(agent, "identical_call", "warn", tool="read_file")
        metrics.signal(agent, "identical_call", "term", tool="read_file")
        metrics.signal(agent, "text_loop", "term")
        metrics.self_heal(agent, "identical_call")
        metrics.self_heal(agent, "text_loop")
        metrics.break_succeeded(agent, "identical_call")
        metrics.human_escalation(agent, "text_loop")
        metrics.hitl_decision(agent, "timeout")
        metrics.termination(agent, "cycle_detected")
        metrics.session_with_cycle(agent, 12)
    metrics.session_evicted("idle")
    metrics.set_sessions_active(3)
    for span_kind in ("tool", "model", "other"):
        metrics.processor_cost(span_kind, 4e-6)


@pytest.fixture(name="metrics")
def fixture_metrics() -> CycleGuardMetrics:
    return CycleGuardMetrics(CollectorRegistry())


@pytest.fixture(name="prometheus")
def fixture_prometheus(metrics: CycleGuardMetrics) -> Iterator[PrometheusServer]:
    """Prometheus scraping the in-test exporter every second, after one round of events."""
    server, _thread = metrics.start_http_server(0)
    try:
        record_round(metrics)
        with PrometheusServer(f"127.0.0.1:{server.server_port}") as prometheus:
            yield prometheus
    finally:
        server.shutdown()
        server.server_close()


def test_every_recording_rule_and_panel_query_returns_data(
    metrics: CycleGuardMetrics, prometheus: PrometheusServer
) -> None:
    """Rates need two scrapes with an increase in between, so events are recorded twice."""
    assert prometheus.wait_for('cycleguard_sessions_started_total{agent="coder"}'), prometheus.log()
    record_round(metrics)
    # Both rounds scraped: the counter reads exactly what was recorded.
    total = prometheus.wait_for('cycleguard_sessions_started_total{agent="coder"} == 8')
    assert [float(s["value"][1]) for s in total] == [8.0]

    empty_rules = [name for name in recording_rule_names() if not prometheus.wait_for(name)]
    assert empty_rules == []

    empty_panels = [
        (query.panel, query.ref_id, query.resolved)
        for query in dashboard_queries()
        if not prometheus.wait_for(query.resolved)
    ]
    assert empty_panels == []

    unhealthy = [rule["name"] for rule in prometheus.rules() if rule.get("health") != "ok"]
    assert unhealthy == []


def test_cycle_detected_ratio_matches_the_recorded_events(
    metrics: CycleGuardMetrics, prometheus: PrometheusServer
) -> None:
    """Per round each agent starts 4 sessions and 1 loops: the recorded ratio is 1/4."""
    assert prometheus.wait_for('cycleguard_sessions_started_total{agent="coder"}')
    record_round(metrics)

    # Wait for the value rather than for any sample: a scrape may land mid-round.
    result = prometheus.wait_for(
        'agent:cycleguard_cycle_detected:ratio_rate5m{agent="coder"} == 0.25'
    )

    assert [float(sample["value"][1]) for sample in result] == [0.25]


def test_agent_variable_lists_the_recorded_agents(prometheus: PrometheusServer) -> None:
    """The dashboard's agent variable (label_values on sessions started) sees both agents."""
    assert prometheus.wait_for("cycleguard_sessions_started_total")

    values = prometheus.api(
        "label/agent/values", **{"match[]": "cycleguard_sessions_started_total"}
    )

    assert sorted(values) == sorted(AGENTS)
