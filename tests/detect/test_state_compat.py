"""Session state saved before any of the core was compiled still loads, and means the same.

``data/session_state_pre_port.json`` was written by the pure-Python detector (main at 51726ef)
after the observations below; the service keeps such states in its state file.
"""

from __future__ import annotations

import json
from pathlib import Path

from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.detect import Detector, ModelTurn, ToolCall

_STATE = Path(__file__).with_name("data") / "session_state_pre_port.json"
TEXTS = (
    "I will look at the file again now 2024-01-02 pid 77",
    "I will look at the file again now 2024-01-03 pid 78",
    "Let me check deadbeef12 again",
)


def _observed(session) -> list:
    out = []
    for i in range(12):
        out += session.observe_model_turn(ModelTurn(text=TEXTS[i % 2 if i < 8 else 2]))
        out += session.observe_tool_call(
            ToolCall("read", {"path": "a.py"}, f"line {i % 2} took 1.{i}s")
        )
    return out


def test_the_same_observations_give_the_state_saved_before_the_port():
    session = Detector(CycleGuardConfig()).session("k")
    _observed(session)
    expected = json.loads(_STATE.read_text())
    # The one rule change since: a look (``read``) repeats in a tool pattern only with the
    # same result, and "line 0" / "line 1" alternate, so no period-3 run (index 1) builds up.
    pattern = expected["words"]["tool_pattern"]
    assert (pattern["full_run"][1], pattern["name_laps"][1]) == (9, 4)
    pattern["full_run"][1], pattern["name_laps"][1] = 0, 1
    saved = session.to_state()
    # Added since, beside the words (whose layout is kept): the distinct answers of looks the
    # session remembers ("line 0 ...", "line 1 ..."), and which calls of the ring answered
    # something new (none: the two answers came first in calls that have left the ring of nine).
    assert (len(saved.pop("answers")), saved.pop("answers_next")) == (2, 0)
    # and how many calls of the category streak are of tools the guard knows (all twelve)
    assert saved.pop("category_known") == 12
    assert saved["calls"].pop("news") == [0] * 9
    # nothing_new: the two distinct calls with their answers, and the ten calls since that
    # brought nothing new (past its warn of 8: the gate holds WARN)
    assert (len(saved.pop("known_calls")), saved.pop("known_calls_next")) == (2, 0)
    nothing_new = saved["words"].pop("nothing_new")
    assert (nothing_new["run"], nothing_new["$gates"], nothing_new["last"] != [0]) == (
        [10],
        [1],
        True,  # the last call's pair
    )
    assert saved == expected


def test_a_state_saved_before_the_port_loads_and_goes_on_as_it_would_have():
    state = json.loads(_STATE.read_text())
    restored = Detector(CycleGuardConfig()).session("k")
    restored.restore_state(state)
    # a state saved before answers were remembered loads with none remembered and no news;
    # before nothing_new, with no call known and its run at zero
    assert restored.to_state() == {
        **state,
        "calls": {**state["calls"], "news": [0] * 9},
        "answers": [],
        "answers_next": 0,
        "known_calls": [],
        "known_calls_next": 0,
        "category_known": state["words"]["category_streak"]["count"][0],
        "words": {
            **state["words"],
            "nothing_new": {"last": [0], "run": [0], "$gates": [0]},
        },
    }
    fired = []
    for i in range(6):
        fired += restored.observe_model_turn(ModelTurn(text=TEXTS[i % 2]))
        fired += restored.observe_tool_call(ToolCall("read", {"path": "a.py"}, "same"))
    # what the pure-Python detector fired after the same restore
    assert [(s.dimension.value, s.level.value, s.streak) for s in fired] == [
        ("text_loop", "warn", 3),
        ("identical_call", "warn", 3),
        ("text_loop", "term", 5),
        ("identical_call", "term", 5),
    ]
