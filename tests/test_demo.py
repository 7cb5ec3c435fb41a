"""The demo (the README's first command) catches every scripted loop and leaves the healthy run alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_cycleguard.demo import run_demo


@pytest.fixture(name="demo_run", scope="module")
def fixture_demo_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[dict[str, str], list[str], Path]:
    out_dir = tmp_path_factory.mktemp("demo") / "out"
    lines: list[str] = []
    outcomes = run_demo(metrics_port=0, output_dir=out_dir, hitl_timeout_s=0.3, out=lines.append)
    return outcomes, lines, out_dir


def _section(lines: list[str], agent: str) -> list[str]:
    start = next(i for i, line in enumerate(lines) if line.startswith(f"[{agent}]"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    return lines[start:end]


def test_looping_agents_are_caught_and_the_silent_human_terminates_the_fixer(demo_run) -> None:
    outcomes, _, _ = demo_run
    assert outcomes == {
        "researcher": "finished",
        "fixer": "terminated",
        "builder": "finished",
        "poller": "finished",
        "planner": "finished",
        "healthy": "finished",
    }


@pytest.mark.parametrize(
    ("agent", "dimension"),
    [
        ("researcher", "identical_call"),
        ("fixer", "tool_pattern"),  # replay_cycle: the whole lap comes back unchanged
        ("builder", "error_streak"),
        ("poller", "poll_no_progress"),
        ("planner", "text_loop"),
    ],
)
def test_each_scenario_reports_its_dimension_and_what_the_agent_was_told(
    demo_run, agent, dimension
) -> None:
    _, lines, _ = demo_run
    section = _section(lines, agent)
    assert any(line.strip().startswith("TERM") and dimension in line for line in section), section
    assert any("agent receives (system): [cycleguard]" in line for line in section), section


def test_healthy_run_gets_no_signal(demo_run) -> None:
    _, lines, _ = demo_run
    section = _section(lines, "healthy")
    assert not any(line.strip().startswith(("WARN", "TERM")) for line in section), section


def test_demo_leaves_traces_with_signal_spans_and_saved_progress(demo_run) -> None:
    _, lines, out_dir = demo_run
    documents = [
        json.loads(line) for line in (out_dir / "traces.otlp.jsonl").read_text().splitlines()
    ]
    names = [
        span["name"]
        for document in documents
        for resource in document["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]
    assert names.count("cycleguard.signal") >= 10
    progress = list((out_dir / "progress").glob("*.json"))
    assert len(progress) == 1
    record = json.loads(progress[0].read_text())
    assert record["reason"] == "cycle_detected" and record["resumable"] is True
    assert any("Where to look:" in line for line in lines)


def test_after_the_run_no_line_points_at_the_metrics_endpoint_that_is_gone(demo_run) -> None:
    """Without --linger the endpoint stops with the demo: the closing lines say how to keep it."""
    _, lines, _ = demo_run
    closing = lines[next(i for i, line in enumerate(lines) if line == "Where to look:") :]
    assert not any("http://" in line for line in closing), closing
    assert any("--linger" in line for line in closing), closing
