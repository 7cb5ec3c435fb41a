"""The compiled session's saved state (rust/cycleguard-core: state.rs) against the Python
reference: the same observations give the same state, and a state saved by either detector
loads into the other and goes on as it would have (``test_state_compat.py`` holds both to the
state the pure-Python detector wrote before the port)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, reject, settings
from test_core_session import _STEPS, CONFIGS, DETECTORS, _signal  # (tests/detect is on sys.path)

from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.detect import Detector, ToolCall
from otel_cycleguard.detect.compiled import CompiledDetector


def _observe(session, step):
    if isinstance(step, tuple):
        session.reset(step[1])
        return []
    observe = "observe_tool_call" if isinstance(step, ToolCall) else "observe_model_turn"
    return [_signal(s) for s in getattr(session, observe)(step)]


def _roundtrip(state: dict) -> dict:
    """What the service's state file holds (JSON)."""
    return json.loads(json.dumps(state))


@pytest.mark.parametrize("which", range(len(DETECTORS)))
@settings(max_examples=150, deadline=None)
@given(first=_STEPS, then=_STEPS)
def test_states_are_the_same_and_load_across(which, first, then):
    py_det, rs_det = DETECTORS[which]
    py, rs = py_det.session("k", agent="a"), rs_det.session("k", agent="a")
    for step in first:
        try:
            want = _observe(py, step)
        except IndexError:  # the reference's `| xargs sudo` failure (test_core_session.py)
            reject()
        assert _observe(rs, step) == want
    saved = _roundtrip(py.to_state())
    assert _roundtrip(rs.to_state()) == saved
    # the Python state into a compiled session, the compiled state into a Python session
    rs2, py2 = rs_det.session("k", agent="a"), py_det.session("k", agent="a")
    rs2.restore_state(saved)
    py2.restore_state(_roundtrip(rs.to_state()))
    for step in then:
        try:
            want = _observe(py2, step)
        except IndexError:
            reject()
        assert _observe(rs2, step) == want
    assert _roundtrip(rs2.to_state()) == _roundtrip(py2.to_state())


def test_a_state_from_another_profile_shape_starts_fresh_where_it_does_not_fit():
    # max_period, the state window and max_gap differ: those parts start fresh, as in Python
    other = CycleGuardConfig(
        profiles={"general": {"tool_pattern": {"max_period": 3}, "state_hash": {"window": 4},
                              "replay_cycle": {"max_gap": 5}}}
    )  # fmt: skip
    py, rs = Detector(CONFIGS[0]).session("k"), CompiledDetector(CONFIGS[0]).session("k")
    calls = [ToolCall("bash", {"command": c}, "x", state_fingerprint="s") for c in "abab" * 3]
    for c in calls:
        py.observe_tool_call(c)
        rs.observe_tool_call(c)
    saved = _roundtrip(py.to_state())
    py2, rs2 = Detector(other).session("k"), CompiledDetector(other).session("k")
    py2.restore_state(saved)
    rs2.restore_state(saved)
    assert _roundtrip(rs2.to_state()) == _roundtrip(py2.to_state())
    assert rs2.to_state()["words"]["tool_pattern"]["full_run"] == [0, 0]
    assert "state" not in rs2.to_state()["objects"]


def test_a_state_of_another_format_is_refused():
    rs = CompiledDetector(CONFIGS[0]).session("k")
    for bad in ({"v": 1}, [], {"v": 2, "tool_calls": 3, "model_turns": 0,
                                   "calls": {"tools": ["a"], "words": [1, 2]}}):  # fmt: skip
        with pytest.raises(ValueError):
            rs.restore_state(bad)
