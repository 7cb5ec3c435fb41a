"""The quality benchmark's judgement of whether a termination costs a successful run its result."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "quality.py"


@pytest.fixture(scope="module")
def quality():
    spec = importlib.util.spec_from_file_location("quality_benchmark", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def _call(quality, tool: str, args: dict, error: bool = False):
    return quality.Call(tool, json.dumps(args).encode(), "output", error)


def _calls(quality, after: list):
    """An edit, then a failing command the run repeats, then ``after``."""
    fix = _call(quality, "edit", {"path": "src/a.py", "old": "x", "new": "y"})
    retry = _call(quality, "bash", {"command": "javac Test.java"}, error=True)
    return [fix, retry, retry, retry, *after]


def test_failing_repeats_after_the_stop_keep_a_diff_judged_result(quality) -> None:
    retry = _call(quality, "bash", {"command": "javac Test.java"}, error=True)
    calls = _calls(quality, [retry] * 5)
    assert quality.termination_keeps_result("mini_swe_gemini3", calls, terminated_at=3)


def test_reads_after_the_stop_keep_the_result(quality) -> None:
    reads = [
        _call(quality, "bash", {"command": "cat src/a.py"}),
        _call(quality, "open", {"path": "src/a.py"}),
    ]
    assert quality.termination_keeps_result("multiswe_sweagent_java", _calls(quality, reads), 3)


def test_an_edit_after_the_stop_loses_the_result(quality) -> None:
    edit = _call(quality, "edit", {"path": "src/b.py", "old": "1", "new": "2"})
    assert not quality.termination_keeps_result("mini_swe_gemini3", _calls(quality, [edit]), 3)


def test_a_shell_edit_that_fails_later_in_its_line_still_counts_as_a_change(quality) -> None:
    sed = _call(quality, "bash", {"command": "sed -i 's/a/b/' src/a.py && pytest"}, error=True)
    assert not quality.termination_keeps_result("mini_swe_gemini3", _calls(quality, [sed]), 3)


def test_a_successful_unknown_tool_after_the_stop_counts_as_a_change(quality) -> None:
    build = _call(quality, "bash", {"command": "mvn -q compile"})
    assert not quality.termination_keeps_result(
        "multiswe_sweagent_java", _calls(quality, [build]), 3
    )


def test_runs_not_judged_on_their_diff_always_lose_the_result(quality) -> None:
    assert not quality.termination_keeps_result("taubench", _calls(quality, []), 3)
    assert not quality.termination_keeps_result("react_hotpotqa", _calls(quality, []), 3)


def test_a_label_with_only_episodes_is_completed_from_the_corpus_record(quality) -> None:
    record = {"source": "taubench", "outcome": {"success": True}}
    episode = {"type": "cycle", "first_step": 2, "last_step": 8, "escaped": False}
    label = quality.complete_label({"run_id": "r", "episodes": [episode]}, record)
    assert label["source"] == "taubench"
    assert label["outcome_success"] is True
    assert label["has_loop"] is True
    assert label["terminal_loop"] is False


def test_a_labellers_own_fields_win_over_the_corpus_record(quality) -> None:
    record = {"source": "taubench", "outcome": {"success": True}}
    label = quality.complete_label(
        {"run_id": "r", "episodes": [], "outcome_success": False, "has_loop": False}, record
    )
    assert label["outcome_success"] is False
    assert label["has_loop"] is False


def test_first_contact_rows_stand_beside_todays_figures(quality):
    now = quality.Score(terminal_runs=1, terminal_caught=1, loop_free=23, successful=8)
    text = quality.first_contact_table({"tau2_telecom_solo": now}, markdown=False)
    assert "tau2_telecom_solo (first contact, rules 806abaa)" in text
    first, current = (line for line in text.splitlines() if line.startswith("tau2_telecom_solo"))
    assert "0/1 (0.0 %)" in first and "1/1 (100.0 %)" in current
