"""A real Prometheus scrapes the demo agent process: every rule and panel query has data."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prom import PrometheusServer, dashboard_queries, free_port, recording_rule_names

pytestmark = pytest.mark.slow


@pytest.fixture(name="demo_prometheus", scope="module")
def fixture_demo_prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusServer]:
    """The demo runs its scenarios in rounds a few seconds apart, so rates have increases."""
    port = free_port()
    workdir: Path = tmp_path_factory.mktemp("demo")
    demo = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "otel_cycleguard.demo",
            "--port",
            str(port),
            "--rounds",
            "4",
            "--round-pause",
            "2.5",
            "--hitl-timeout",
            "0.3",
            "--linger",
            "90",
            "--output",
            str(workdir / "out"),
        ],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        with PrometheusServer(f"127.0.0.1:{port}") as prometheus:
            yield prometheus
    finally:
        demo.terminate()
        demo.wait(timeout=10)


def test_demo_process_feeds_every_recording_rule(demo_prometheus: PrometheusServer) -> None:
    """Each of the recording rules returns at least one sample from the demo's traffic."""
    assert demo_prometheus.wait_for("cycleguard_tool_calls_total"), demo_prometheus.log()
    empty = [name for name in recording_rule_names() if not demo_prometheus.wait_for(name)]
    assert empty == []


def test_demo_process_feeds_every_dashboard_panel(demo_prometheus: PrometheusServer) -> None:
    """Every panel query of the Grafana dashboard returns data from the demo."""
    assert demo_prometheus.wait_for("cycleguard_signals_total")
    empty = [
        (query.panel, query.ref_id, query.resolved)
        for query in dashboard_queries()
        if not demo_prometheus.wait_for(query.resolved)
    ]
    assert empty == []


def test_demo_terminations_are_counted_by_reason(demo_prometheus: PrometheusServer) -> None:
    """The fixer agent is terminated once per round for a cycle, never for another reason."""
    result = demo_prometheus.wait_for(
        'cycleguard_terminations_total{agent="fixer",reason="cycle_detected"} >= 1'
    )
    assert result
    assert not demo_prometheus.query('cycleguard_terminations_total{agent="healthy"} > 0')


RATIOS = [
    f"{level}:cycleguard_{name}"
    for level in ("agent", "fleet")
    for name in (
        "cycle_detected:ratio_rate5m",
        "break_success:ratio_rate1h",
        "human_escalation:ratio_rate5m",
    )
]


def test_the_readme_walk_through_fills_the_three_rates(tmp_path: Path) -> None:
    """As the README says: the demo with --linger only, and Prometheus started once the first
    round is over. The counters must still move while Prometheus watches, or every ratio of
    two rates is empty; and the last line names no endpoint that is gone."""
    port = free_port()
    demo = subprocess.Popen(
        [sys.executable, "-m", "otel_cycleguard.demo", "--port", str(port),
         "--hitl-timeout", "0.3", "--linger", "40", "--output", str(tmp_path / "out")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert demo.stdout is not None
        for line in demo.stdout:  # the narrated round is over before Prometheus starts
            if line.startswith("Where to look:"):
                break
        with PrometheusServer(f"127.0.0.1:{port}") as prometheus:
            end = time.monotonic() + 35
            missing = list(RATIOS)
            while missing and time.monotonic() < end:
                missing = [name for name in missing if not prometheus.query(name)]
                time.sleep(1)
            assert missing == [], prometheus.log()
        rest, errors = demo.communicate(timeout=60)
    finally:
        if demo.poll() is None:
            demo.terminate()
            demo.wait(timeout=10)
    assert demo.returncode == 0, errors
    last = rest.strip().splitlines()[-1]
    assert "http://" not in last and "stopped" in last, last
