"""Every file in collector-config/ run by the real OpenTelemetry Collector (built from
collector/manifest.yaml), with real ``cycleguard serve`` instances behind it and real OTLP
exporters (gRPC and HTTP) sending multi-trace agent conversations into it.

Only addresses are rewritten (free loopback ports; the "tempo" backend becomes an OTLP sink
here; a DNS name becomes ``localhost``): components, pipelines, routing, retry and queue
settings run as shipped. Per config: every span reaches the tracing backend once and the
cycleguard instance(s) once, and every loop is caught by exactly one instance at the same
step as an instance fed straight from the agents.
"""

from __future__ import annotations

import socket
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.service.collector import (
    CONFIG_DIR,
    CONVERSATIONS,
    CollectorProcess,
    TraceSink,
    free_port,
    load_config,
    reference_signals,
    rewrite,
    run_agents,
    scrape_sum,
    signals_by_session,
    start_instance,
    wait_processed,
)
from tests.service.fleet_agent import kind_of, tool_calls_of

pytestmark = pytest.mark.slow

CONFIG_NAMES = sorted(p.name for p in CONFIG_DIR.glob("*.yaml"))
GRPC_AGENTS = CONVERSATIONS[:5]
HTTP_AGENTS = CONVERSATIONS[5:10]


def cycleguard_backends(config: dict) -> int:
    """How many cycleguard instances a config names (static hostnames, else one)."""
    for name, body in config["exporters"].items():
        if name.startswith("loadbalancing") and "static" in body["resolver"]:
            return len(body["resolver"]["static"]["hostnames"])
    return 1


def routed_by_trace(config: dict) -> bool:
    """Several instances, each trace to one: a conversation's turns may land on several."""
    return any(
        name.startswith("loadbalancing") and body.get("routing_key", "traceID") == "traceID"
        for name, body in config["exporters"].items()
    )


def localhost_name() -> str:
    """``localhost`` where it resolves to 127.0.0.1 only (the service binds IPv4 loopback);
    else the literal, which the DNS resolver passes through all the same."""
    addresses = {a[4][0] for a in socket.getaddrinfo("localhost", None)}
    return "localhost" if addresses == {"127.0.0.1"} else "127.0.0.1"


def addresses_for(config: dict, instances: list, sink: TraceSink, ports: dict) -> dict:
    """The replacement of every address in a shipped config."""
    out = {
        "0.0.0.0:4317": f"127.0.0.1:{ports['grpc']}",
        "0.0.0.0:4318": f"127.0.0.1:{ports['http']}",
        "0.0.0.0:8889": f"127.0.0.1:{ports['prometheus']}",
        "tempo:4317": sink.address,
        "127.0.0.1:14317": f"127.0.0.1:{instances[0].grpc_port}",
        "127.0.0.1:14318": f"127.0.0.1:{instances[0].http_port}",
    }
    for i, svc in enumerate(instances):
        out[f"cycleguard-{i}:14317"] = f"127.0.0.1:{svc.grpc_port}"
    for name, body in config["exporters"].items():
        if name.startswith("loadbalancing") and "dns" in body["resolver"]:
            out[body["resolver"]["dns"]["hostname"]] = localhost_name()
            out[str(body["resolver"]["dns"]["port"])] = str(instances[0].grpc_port)
    return out


def spanmetrics_calls(port: int) -> float:
    """Tool-call spans counted by the spanmetrics connector (its Prometheus exporter)."""
    return scrape_sum(
        f"http://127.0.0.1:{port}/metrics",
        "traces_span_metrics_calls_total",
        gen_ai_operation_name="execute_tool",
    )


@pytest.mark.parametrize("name", CONFIG_NAMES)
def test_the_real_collector_delivers_every_span_once_and_every_loop_to_one_instance(
    name, otelcol, services, tmp_path: Path
):
    config = load_config(name)
    instances = [
        start_instance(services, tmp_path, "--state-file", "")
        for _ in range(cycleguard_backends(config))
    ]
    sink = TraceSink()
    ports = {"grpc": free_port(), "http": free_port(), "prometheus": free_port()}
    collector = CollectorProcess(
        otelcol, rewrite(config, addresses_for(config, instances, sink, ports)), tmp_path
    ).start()
    try:
        spans = run_agents(f"127.0.0.1:{ports['grpc']}", GRPC_AGENTS, processes=2)
        spans += run_agents(
            f"http://127.0.0.1:{ports['http']}", HTTP_AGENTS, processes=2, protocol="http"
        )
        wait_processed(instances, spans)
        time.sleep(0.5)  # anything duplicated would arrive now
        accepted = [
            svc.metric("cycleguard_service_spans_total", outcome="accepted") for svc in instances
        ]
        assert sum(accepted) == spans, f"{name}: {accepted} accepted of {spans} sent"
        assert sink.spans == spans, f"{name}: the tracing backend got {sink.spans} of {spans}"

        reference = reference_signals()
        checked = GRPC_AGENTS + HTTP_AGENTS
        if routed_by_trace(config):  # the documented limit: see test_collector_fleet.py
            checked = [c for c in checked if kind_of(c) == "in_trace_identical"]
        seen: Counter = Counter()
        for svc in instances:
            for session, signals in signals_by_session(svc).items():
                if session in checked:
                    seen[session] += 1
                    if routed_by_trace(config):  # same call of the loop; steps count only
                        # the turns this instance saw (test_collector_fleet.py)
                        signals = [(d, lv, None, None, k) for d, lv, _, _, k in signals]
                        want = [(d, lv, None, None, k) for d, lv, _, _, k in reference[session]]
                    else:
                        want = reference[session]
                    assert signals == want, (name, session)
        expected = {c for c in checked if c in reference}  # loop_free ones raise nothing
        assert set(seen) == expected, f"{name}: loops caught {sorted(seen)}"
        assert all(n == 1 for n in seen.values()), f"{name}: a session on two instances {seen}"

        if "spanmetrics" in (config.get("connectors") or {}):
            tools = sum(tool_calls_of(c) for c in GRPC_AGENTS + HTTP_AGENTS)
            end = time.monotonic() + 30  # two metrics_flush_interval (5 s as shipped)
            while spanmetrics_calls(ports["prometheus"]) < tools and time.monotonic() < end:
                time.sleep(0.5)
            assert spanmetrics_calls(ports["prometheus"]) == tools

        failed = collector.metric("otelcol_exporter_send_failed_spans_total")
        assert failed == 0, f"{name}: the Collector failed to send {failed} spans"
    finally:
        code = collector.stop()
        sink.close()
    errors = [line for line in collector.log if "\terror\t" in line]
    assert code == 0 and not errors, "".join(errors)


def test_a_config_address_without_a_loopback_replacement_fails_the_rewrite():
    """A new address in a shipped file cannot slip through un-rewritten (and reach out)."""
    config = load_config("agents-to-backend-and-cycleguard.yaml")
    with pytest.raises(AssertionError, match="unmapped address 'tempo:4317'"):
        rewrite(config, {"0.0.0.0:4317": "127.0.0.1:1", "0.0.0.0:4318": "127.0.0.1:2"})
    assert len(CONFIG_NAMES) >= 6  # every file in collector-config/ is a case above
