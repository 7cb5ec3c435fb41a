"""Hibernation (rust/cycleguard-core/src/hibernate.rs): a quiet session's state packed small and
unpacked on its next call, detection unchanged."""

from __future__ import annotations

import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.detect import Detector, Dimension, ModelTurn, ToolCall

# Every part of a session in use: budgets on, a poll tool, text and state hashes in the turns.
BUSY = CycleGuardConfig(
    poll_tools=("job_status",),
    profiles={
        "general": {
            "budget": {"enabled": True, "max_tool_calls": 40, "max_tokens": 5000,
                       "max_wall_seconds": 300, "call_seconds": {"action": 5}},
        }
    },
)  # fmt: skip

TOOLS = ("bash", "read_file", "edit_file", "grep", "job_status", "search", "unknown_tool")

calls = st.builds(
    ToolCall,
    tool=st.sampled_from(TOOLS),
    arguments=st.one_of(
        st.fixed_dictionaries({"command": st.sampled_from(["ls", "make", "pytest -x", "cat a"])}),
        st.fixed_dictionaries({"path": st.sampled_from(["a.py", "b.py"]), "q": st.integers(0, 2)}),
        st.sampled_from(['{"query": "x"}', None]),
    ),
    result=st.sampled_from(["ok", "error: no such file 12", "3 matches", "", None, "same"]),
    error=st.booleans(),
    start_s=st.floats(0, 100),
    end_s=st.floats(100, 110),
    state_fingerprint=st.sampled_from([None, "s1", "s2"]),
)
turns = st.builds(
    ModelTurn,
    text=st.sampled_from([None, "let me try again", "I will run the tests now", "done"]),
    input_tokens=st.integers(0, 300),
    output_tokens=st.integers(0, 300),
    end_s=st.floats(0, 400),
    state_fingerprint=st.sampled_from([None, "s1", "s2", "s3"]),
    error=st.booleans(),
    error_text=st.sampled_from([None, "provide exactly one action (3)"]),
)
steps = st.lists(st.one_of(calls, turns, st.sampled_from(list(Dimension))), max_size=60)


def _observe(session, step):
    if isinstance(step, ToolCall):
        return session.observe_tool_call(step)
    if isinstance(step, ModelTurn):
        return session.observe_model_turn(step)
    session.reset(step)
    return []


def _busy_session(detector: Detector, key: str = "k"):
    s = detector.session(key)
    for i in range(30):
        s.observe_tool_call(ToolCall("job_status", {"id": 1}, "running", end_s=float(i)))
        s.observe_tool_call(ToolCall("bash", {"command": "make"}, "error: 1", error=True))
        s.observe_model_turn(
            ModelTurn("trying again", 50, 50, end_s=float(i), state_fingerprint="s")
        )
    return s


@settings(max_examples=300, deadline=None)
@given(steps)
def test_a_session_hibernated_after_every_step_detects_exactly_as_one_never_hibernated(seq):
    detector = Detector(BUSY)
    awake, sleeper = detector.session("k"), detector.session("k")
    for step in seq:
        expected = _observe(awake, step)
        assert sleeper.hibernate() is True
        assert sleeper.hibernated
        assert [repr(s) for s in _observe(sleeper, step)] == [repr(s) for s in expected]
        if not isinstance(step, Dimension):
            assert not sleeper.hibernated  # the observation woke it
    sleeper.hibernate()
    assert sleeper.to_state() == awake.to_state()
    assert sleeper.counters() == awake.counters()


def test_a_hibernated_session_is_a_fraction_of_an_awake_one():
    s = _busy_session(Detector(BUSY))
    awake = sys.getsizeof(s)
    s.hibernate()
    assert sys.getsizeof(s) < awake / 2


def test_reading_a_hibernated_session_does_not_wake_it():
    s = _busy_session(Detector(BUSY))
    before = (s.counters(), s.to_state())
    s.hibernate()
    assert (s.counters(), s.to_state()) == before
    assert s.hibernated
    assert (s.key, s.tool_calls, s.model_turns, s.profile_name) == ("k", 60, 30, "general")


def test_hibernating_twice_is_a_no_op():
    s = _busy_session(Detector(BUSY))
    assert s.hibernate() is True
    state = s.to_state()
    assert s.hibernate() is False
    assert s.to_state() == state


def test_a_reset_and_a_restore_wake_a_hibernated_session():
    detector = Detector(BUSY)
    s = _busy_session(detector)
    saved = s.to_state()
    s.hibernate()
    s.reset(Dimension.POLL_NO_PROGRESS)
    assert not s.hibernated and s.counters()["poll_no_progress"] == 0
    fresh = detector.session("k")
    fresh.hibernate()
    fresh.restore_state(saved)
    assert not fresh.hibernated and fresh.to_state() == saved


def test_remembered_answers_and_known_calls_survive_hibernation():
    """The answer memory (`replay_cycle`'s news), the calls `nothing_new` remembers and the
    count of known calls in a category streak are packed too: reading page after page, an
    email triage and the pages read again detect the same hibernated after every call as
    awake, and end in the same state."""
    sequence = []
    for n in range(12):
        sequence.append(ToolCall("scroll", {"direction": "down"}, "Scrolled down."))
        sequence.append(ToolCall("get_page_text", {}, f"Section {n}: words {n} more {n}"))
    for n in range(10):
        sequence.append(ToolCall("list_messages", {"page": n}, f"{n}: 3 unread"))
        sequence.append(ToolCall("send_message", {"to": f"a{n}"}, "sent"))
    # the pages read again in another order: nothing new, 20 calls in a row (nothing_new)
    sequence += [sequence[2 * n + 1] for n in (11, 3, 7, 0, 9, 5, 1, 10, 2, 6) * 2]
    detector = Detector(CycleGuardConfig())
    awake, sleeper = detector.session("k"), detector.session("k")
    fired_awake, fired_sleeper = [], []
    for call in sequence:
        fired_awake += awake.observe_tool_call(call)
        sleeper.hibernate()
        fired_sleeper += sleeper.observe_tool_call(call)
    assert [repr(s) for s in fired_sleeper] == [repr(s) for s in fired_awake]
    state = awake.to_state()
    assert len(state["answers"]) == 16 and state["category_known"] >= 1
    assert len(state["known_calls"]) == 33  # scroll once, twelve pages, ten lists, ten sends
    assert [s.level.value for s in fired_awake if s.rule == "nothing_new"] == ["warn", "term"]
    assert sleeper.to_state() == state
