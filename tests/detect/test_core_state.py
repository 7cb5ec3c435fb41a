"""The session's saved state where it cannot carry over: a profile of another shape starts
those parts fresh, and another format is refused (``test_state_compat.py``: a state written by
the pure-Python detector before the port loads and means the same)."""

from __future__ import annotations

import json

import pytest

from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.detect import Detector, ToolCall


def _roundtrip(state: dict) -> dict:
    return json.loads(json.dumps(state))


def test_a_state_from_another_profile_shape_starts_fresh_where_it_does_not_fit():
    # max_period, the state window and max_gap differ: those parts start fresh
    other = CycleGuardConfig(
        profiles={"general": {"tool_pattern": {"max_period": 3}, "state_hash": {"window": 4},
                              "replay_cycle": {"max_gap": 5}}}
    )  # fmt: skip
    s = Detector(CycleGuardConfig()).session("k")
    for c in "abab" * 3:
        s.observe_tool_call(ToolCall("bash", {"command": c}, "x", state_fingerprint="s"))
    saved = _roundtrip(s.to_state())
    assert saved["words"]["tool_pattern"]["full_run"] == [10, 0, 8]
    assert saved["calls"]["words"][2] & ~1  # replay bits
    restored = Detector(other).session("k")
    restored.restore_state(saved)
    state = restored.to_state()
    assert state["words"]["tool_pattern"]["full_run"] == [0, 0]
    assert "state" not in state["objects"]
    assert all(w & ~1 == 0 for w in state["calls"]["words"][2::3])  # replay bits dropped
    assert state["words"]["identical_call"] == saved["words"]["identical_call"]


def test_a_state_of_another_format_is_refused():
    s = Detector(CycleGuardConfig()).session("k")
    bad_ring = {
        "v": 2,
        "tool_calls": 3,
        "model_turns": 0,
        "calls": {"tools": ["a"], "words": [1, 2]},
    }
    for bad in ({"v": 1}, [], bad_ring):
        with pytest.raises(ValueError):
            s.restore_state(bad)


def test_the_answers_a_session_has_seen_survive_a_save_and_restore():
    """A session saved and restored mid-way goes on exactly as one that never stopped: the
    answers it remembers (what counts as news) are in the saved state."""

    def call(n: int) -> ToolCall:
        return ToolCall("open", {"path": f"f{n % 3}.py"}, f"content {n % 3}")

    def search() -> ToolCall:
        return ToolCall("search", {"query": "q"}, "3 files match")

    awake = Detector(CycleGuardConfig()).session("k")
    for n in range(4):
        awake.observe_tool_call(search())
        awake.observe_tool_call(call(n))
    saved = _roundtrip(awake.to_state())
    assert len(saved["answers"]) == 4  # the search's answer and the three files'
    restored = Detector(CycleGuardConfig()).session("k")
    restored.restore_state(saved)
    later_awake, later_restored = [], []
    for n in range(4, 14):
        for target, out in ((awake, later_awake), (restored, later_restored)):
            out += target.observe_tool_call(search())
            out += target.observe_tool_call(call(n))
    assert [(s.step, s.rule, s.level) for s in later_restored] == [
        (s.step, s.rule, s.level) for s in later_awake
    ]
    assert any(s.rule == "replay_cycle" for s in later_awake)
    assert restored.to_state() == awake.to_state()


@pytest.mark.parametrize("answers", [["x"], [-1], [2**70], 5, [None]])
def test_remembered_answers_that_are_not_words_are_refused(answers):
    """A damaged state file: the core refuses the session state with an error (the service
    then skips that session) rather than loading nonsense or panicking."""
    s = Detector(CycleGuardConfig()).session("k")
    s.observe_tool_call(ToolCall("read", {"path": "a.py"}, "x"))
    state = {**s.to_state(), "answers": answers}
    with pytest.raises((ValueError, TypeError, OverflowError)):
        Detector(CycleGuardConfig()).session("k").restore_state(state)


def test_at_most_sixteen_remembered_answers_are_loaded():
    s = Detector(CycleGuardConfig()).session("k")
    s.observe_tool_call(ToolCall("read", {"path": "a.py"}, "x"))
    restored = Detector(CycleGuardConfig()).session("k")
    restored.restore_state({**s.to_state(), "answers": list(range(1, 101))})
    assert restored.to_state()["answers"] == list(range(1, 17))


def test_a_state_saved_before_vouched_calls_were_counted_counts_every_call_of_the_streak():
    s = Detector(CycleGuardConfig()).session("k")
    for n in range(20):
        s.observe_tool_call(ToolCall("send_message", {"to": f"a{n}"}, "sent"))
    state = _roundtrip(s.to_state())
    assert state.pop("category_known") == 20
    restored = Detector(CycleGuardConfig()).session("k")
    restored.restore_state(state)
    assert restored.to_state()["category_known"] == 20
    fired = []
    for n in range(20, 25):
        fired += restored.observe_tool_call(ToolCall("send_message", {"to": f"a{n}"}, "sent"))
    assert [(x.step, x.level.value) for x in fired if x.rule == "category_streak"] == [(24, "term")]
