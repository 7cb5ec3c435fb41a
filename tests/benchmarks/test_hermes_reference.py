"""The Hermes guardrail the detector benchmark times beside: fetched, imported, and driven the
way the benchmark drives it (a wrong call would time a no-op)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from hermes_reference import load_guardrail


@pytest.fixture(scope="module")
def guardrail():
    loaded = load_guardrail()
    if isinstance(loaded, str):
        assert "\n" not in loaded and loaded.startswith("hermes-agent")
        pytest.skip(loaded)  # no package registry here: the benchmark leaves the column out
    return loaded


def test_the_reference_blocks_an_identical_call_that_keeps_failing(guardrail):
    controller, config = guardrail
    guard = controller(config(hard_stop_enabled=True))
    decisions = []
    for _ in range(7):
        decisions.append(guard.before_call("terminal", {"command": "make"}).action)
        guard.after_call("terminal", {"command": "make"}, "error: no rule", failed=True)
    assert decisions[0] == "allow"
    assert "block" in decisions


def test_the_reference_lets_a_varied_healthy_run_through(guardrail):
    controller, config = guardrail
    guard = controller(config(hard_stop_enabled=True))
    for i in range(20):
        assert guard.before_call("read_file", {"path": f"src/m{i}.py"}).action == "allow"
        guard.after_call("read_file", {"path": f"src/m{i}.py"}, f"content {i}", failed=False)


def test_the_reference_shadows_no_module_already_imported(guardrail, monkeypatch):
    taken = ModuleType("agent")
    monkeypatch.setitem(sys.modules, "agent", taken)
    monkeypatch.delitem(sys.modules, "utils", raising=False)
    assert not isinstance(load_guardrail(), str)
    assert sys.modules["agent"] is taken
    assert "utils" not in sys.modules
