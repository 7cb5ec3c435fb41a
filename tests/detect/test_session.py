"""Firing semantics shared by every dimension, resets, independence, profiles, bounded state."""

from __future__ import annotations

import json
import sys

from otel_cycleguard.config import load_config
from otel_cycleguard.detect import Detector, Dimension, Level, ModelTurn, ToolCall


def session(**config):
    return Detector(load_config(environ={}, **config)).session("s1")


def grep(s, result="hit", q="x"):
    return s.observe_tool_call(ToolCall("grep", {"q": q}, result))


def dims(signals):
    return [(sig.dimension.value, sig.level.value) for sig in signals]


# -- the gate (its unit tests are the core's: rust/cycleguard-core/src/signal.rs) ------------


def test_session_re_arms_identical_call_after_a_different_call():
    s = session()
    fired = []
    for _ in range(3):
        fired += grep(s)
    s.observe_tool_call(ToolCall("read", {"p": 1}, "y"))
    for _ in range(3):
        fired += grep(s)
    assert dims(fired) == [("identical_call", "warn"), ("identical_call", "warn")]


def test_at_most_one_signal_per_dimension_per_call_at_the_highest_level():
    s = session(profiles={"general": {"identical_call": {"warn": 1, "term": 1}}})
    first = s.observe_tool_call(ToolCall("grep", {}, "r"))
    assert dims(first) == [("identical_call", "term")]
    s = session(profiles={"general": {"identical_call": {"warn": 1, "term": 2}}})
    seen = [dims(s.observe_tool_call(ToolCall("grep", {}, "r"))) for _ in range(3)]
    assert seen == [[("identical_call", "warn")], [("identical_call", "term")], []]


def test_several_dimensions_fire_on_one_call_in_the_table_order():
    s = session(
        profiles={
            "general": {
                "identical_call": {"warn": 2, "term": 3},
                "category_streak": {"exploration": {"warn": 2, "term": 3}},
                "error_streak": {"warn": 2, "term": 3},
                "budget": {"enabled": True, "max_tool_calls": 3},
            }
        }
    )
    last = []
    for _ in range(3):
        last = s.observe_tool_call(ToolCall("grep", {"q": 1}, "boom", error=True))
    assert dims(last) == [
        ("identical_call", "term"),
        ("category_streak", "term"),
        ("error_streak", "term"),
        ("budget", "term"),
    ]
    assert all(sig.step == 2 for sig in last)


# -- reset and independence ------------------------------------------------------------


def test_reset_makes_the_next_matching_call_count_one():
    s = session()
    for _ in range(5):
        grep(s)
    s.reset(Dimension.IDENTICAL_CALL)
    assert s.counters()["identical_call"] == 0
    grep(s)
    assert s.counters()["identical_call"] == 1


def test_after_reset_the_full_warn_and_term_thresholds_apply_again():
    s = session()
    for _ in range(5):
        grep(s)
    s.reset(Dimension.IDENTICAL_CALL)
    fired = {}
    for n in range(1, 6):
        for sig in grep(s):
            if sig.dimension is Dimension.IDENTICAL_CALL:
                fired[n] = sig.level.value
    assert fired == {3: "warn", 5: "term"}


def test_reset_of_one_dimension_does_not_touch_another():
    s = session()
    for _ in range(5):
        s.observe_tool_call(ToolCall("bash", {"c": "make"}, "err", error=True))
    before = s.counters()
    s.reset(Dimension.IDENTICAL_CALL)
    after = s.counters()
    assert after["identical_call"] == 0
    assert after["error_streak"] == before["error_streak"] == 5
    assert after["category_streak"] == before["category_streak"] == 5
    s.reset(Dimension.ERROR_STREAK)
    assert s.counters()["error_streak"] == 0
    assert s.counters()["category_streak"] == 5


def test_self_heal_of_one_dimension_does_not_use_up_another():
    s = session()
    fired = []
    for _ in range(5):
        fired += s.observe_tool_call(ToolCall("bash", {"c": "make"}, "err", error=True))
    assert ("identical_call", "term") in dims(fired)
    s.reset(Dimension.IDENTICAL_CALL)
    more = []
    for _ in range(3):
        more += s.observe_tool_call(ToolCall("bash", {"c": "make"}, "err", error=True))
    assert ("error_streak", "term") in dims(more)  # 8th failure: error_streak's own TERM


def test_error_streak_reset_clears_global_and_per_tool_counts():
    s = session()
    for n in range(6):
        s.observe_tool_call(ToolCall("edit", {"n": n}, "ok"))
        s.observe_tool_call(ToolCall("bash", {"c": "make"}, f"e{n}", error=True))
    s.reset(Dimension.ERROR_STREAK)
    s.observe_tool_call(ToolCall("bash", {"c": "make"}, "e", error=True))
    assert s.counters()["error_streak"] == 1


def test_tool_pattern_reset_requires_the_full_number_of_laps_again():
    s = session()
    fired = {}
    for _ in range(5):
        s.observe_tool_call(ToolCall("read", {"p": "a"}, "A"))
        s.observe_tool_call(ToolCall("grep", {"q": "b"}, "B"))
    s.reset(Dimension.TOOL_PATTERN)
    assert s.counters()["tool_pattern"] == 0
    for lap in range(1, 6):
        for sig in s.observe_tool_call(ToolCall("read", {"p": "a"}, "A")) + s.observe_tool_call(
            ToolCall("grep", {"q": "b"}, "B")
        ):
            if sig.rule == "tool_pattern":  # the dimension's own counter (nothing_new warns too)
                fired[lap] = sig.level.value
    assert fired == {3: "warn", 5: "term"}


def test_each_dimension_resets_to_zero():
    s = session(
        profiles={"general": {"budget": {"enabled": True, "max_tool_calls": 1000}}},
        poll_tools=["check"],
    )
    for _ in range(4):
        s.observe_tool_call(ToolCall("grep", {"q": 1}, "r", error=True, state_fingerprint="S"))
        s.observe_tool_call(ToolCall("check", {}, "pending"))
        s.observe_model_turn(ModelTurn(text="same words again and again"))
    for dim in Dimension:
        s.reset(dim)
    counters = s.counters()
    for dim in Dimension:
        if dim is not Dimension.BUDGET:
            assert counters[dim.value] == 0, dim


def test_text_loop_reset_counts_the_next_turn_as_one():
    s = session()
    for _ in range(5):
        s.observe_model_turn(ModelTurn(text="let me check the file again"))
    s.reset(Dimension.TEXT_LOOP)
    s.observe_model_turn(ModelTurn(text="let me check the file again"))
    assert s.counters()["text_loop"] == 1


def test_disabled_dimensions_count_but_never_emit():
    s = session(disabled_dimensions=["identical_call"])
    fired = []
    for _ in range(6):
        fired += grep(s)
    assert [sig for sig in fired if sig.dimension is Dimension.IDENTICAL_CALL] == []
    assert s.counters()["identical_call"] == 6


# -- profiles, agents, signals ----------------------------------------------------------


def test_subagent_sessions_use_the_subagent_profile():
    det = Detector(load_config(environ={}))
    child = det.session("c", subagent=True)
    assert child.profile_name == "subagent"
    fired = []
    for _ in range(30):
        fired += child.observe_tool_call(ToolCall("read", {"n": len(fired)}, f"r{_}"))
    streak = [(s.level.value, s.streak) for s in fired if s.dimension is Dimension.CATEGORY_STREAK]
    assert streak == [("warn", 20), ("term", 30)]


def test_agent_name_selects_its_profile_and_is_carried_on_signals():
    det = Detector(load_config(environ={}, agents={"coder": "coding"}))
    s = det.session("k", agent="coder", subagent=True)  # the agent's own mapping wins
    assert s.profile_name == "coding"
    fired = []
    for _ in range(4):
        fired += s.observe_tool_call(ToolCall("grep", {"q": 1}, "r"))
    (sig,) = fired
    assert (sig.agent, sig.profile, sig.session, sig.streak) == ("coder", "coding", "k", 4)


def test_cycle_class_is_mixed_when_tool_and_text_loops_coincide():
    s = session()
    fired = []
    for _ in range(3):
        s.observe_model_turn(ModelTurn(text="I will grep for it once more"))
        fired += grep(s)
    sig = next(x for x in fired if x.dimension is Dimension.IDENTICAL_CALL)
    assert sig.cycle_class.value == "mixed_cycle"
    assert sig.break_strategy.value == "reset_context_or_rollback"


def test_plain_tool_loop_is_a_tool_cycle_with_change_arguments_strategy():
    s = session()
    fired = []
    for _ in range(3):
        fired += grep(s)
    (sig,) = fired
    assert sig.cycle_class.value == "tool_cycle"
    assert sig.break_strategy.value == "change_arguments_or_tool"


def test_signal_attributes_are_flat_and_carry_no_raw_content():
    s = session()
    fired = []
    for _ in range(3):
        fired += s.observe_tool_call(ToolCall("grep", {"q": "SECRET-ARG"}, "SECRET-RESULT"))
    attrs = fired[0].as_attributes()
    assert attrs["cycleguard.dimension"] == "identical_call"
    assert attrs["cycleguard.level"] == "warn"
    assert attrs["cycleguard.step"] == 2
    assert all(isinstance(v, str | int) for v in attrs.values())
    assert "SECRET" not in repr(attrs) and "SECRET" not in repr(fired)


def test_odd_tool_names_do_not_raise():
    s = session()
    for tool in ("", None, 42, "x" * 10_000, "ünïcødé", "\x00"):
        s.observe_tool_call(ToolCall(tool, None, None))  # type: ignore[arg-type]
    assert s.counters()["tool_calls"] == 6


# -- no raw content in state, bounded memory --------------------------------------------


def test_no_raw_arguments_results_or_texts_are_kept_in_session_state():
    marker = "UNIQUE-MARKER-7f3a9c"
    s = session(
        profiles={"general": {"error_streak": {"result_patterns": ["never-matches"]}}},
        result_fields={"bash": ["exit_code", "output"]},
    )
    s.observe_tool_call(ToolCall("grep", {"q": marker, "nested": [marker]}, f"found {marker}"))
    s.observe_tool_call(
        ToolCall("bash", f'{{"command": "echo {marker}"}}', {"output": marker, "exit_code": 0})
    )
    s.observe_tool_call(
        ToolCall("edit", {"new": marker}, marker.encode(), state_fingerprint=marker)
    )
    s.observe_model_turn(
        ModelTurn(text=f"I will look for {marker} again", state_fingerprint=marker)
    )
    # all a session holds is in its saved state (hashes and small integers, tool names)
    assert marker.lower() not in json.dumps(s.to_state()).lower()


def mixed_calls(n):
    """A varied but periodic stream (period 20) touching every dimension's state."""
    for i in range(n):
        j = i % 20
        if j < 4:
            yield ToolCall("grep", {"q": "same"}, "hit")
        elif j < 8:
            yield ToolCall(f"tool_{i % 97:06d}", {"i": j}, f"r{j}", error=True)
        elif j < 12:
            yield ToolCall(f"job_{i % 89:06d}_status", {}, "running", state_fingerprint=f"S{j % 3}")
        elif j < 16:
            yield ToolCall("edit", {"new": f"v{j}"}, "ok", start_s=float(j), end_s=float(j) + 0.5)
        else:
            yield ToolCall("read", {"p": j % 2}, f"text {j % 2}")


def feed(s, n):
    for k, c in enumerate(mixed_calls(n)):
        s.observe_tool_call(c)
        if k % 20 == 0:
            s.observe_model_turn(ModelTurn(text="the same thought again", input_tokens=5))


def test_session_state_does_not_grow_with_the_length_of_the_run():
    config = dict(profiles={"general": {"budget": {"enabled": True, "max_tool_calls": 10**9}}})
    short, long = session(**config), session(**config)
    feed(short, 1_000)
    feed(long, 100_000)
    assert long.counters()["tool_calls"] == 100_000
    assert sys.getsizeof(long) == sys.getsizeof(short)


def test_per_tool_tables_stay_bounded_with_ever_new_tool_names():
    s = session()
    base = None
    for i in range(5_000):
        s.observe_tool_call(ToolCall(f"t{i:06d}_status", {}, "x", error=True))
        s.observe_tool_call(ToolCall(f"e{i:06d}", {"i": i}, "x", error=True))
        if i == 500:
            base = sys.getsizeof(s)
    assert sys.getsizeof(s) == base


# -- memory of idle sessions: state created on first use ----------------------------------


def _lazy(s) -> dict:
    """Which of the tables and objects created on first use a session holds."""
    state = s.to_state()
    return {
        **{name: state[name] is not None for name in ("failures", "polls", "recur", "same")},
        **{name: name in state["objects"] for name in ("text", "state", "budget")},
    }


def test_an_idle_session_creates_no_table_or_dimension_object_it_did_not_need():
    s = session()
    for i in range(5):
        s.observe_tool_call(ToolCall("read", {"path": f"src/m{i}.py"}, f"text {i}"))
    assert not any(_lazy(s).values())
    # a service holds thousands of these (the pure-Python session held about 1.25 KB)
    assert sys.getsizeof(s) < 1_200


def test_lazily_created_state_appears_once_a_call_needs_it():
    s = session()
    s.observe_tool_call(ToolCall("bash", {"command": "make"}, "make: *** Error 1", error=True))
    assert s.to_state()["failures"] == ["bash", 1]
    assert _lazy(s) == {"failures": True, "polls": False, "recur": True, "same": True,
                        "text": False, "state": False, "budget": False}  # fmt: skip
    s.observe_tool_call(ToolCall("job_status", {"id": 7}, "running"))
    assert _lazy(s)["polls"] and s.counters()["poll_no_progress"] == 1
    s.observe_tool_call(ToolCall("bash", {"command": "make"}, "ok"))
    assert not _lazy(s)["failures"]  # every streak broken: the table goes again
    s.observe_model_turn(ModelTurn(text="let me think", input_tokens=3, state_fingerprint="S"))
    assert _lazy(s)["text"] and _lazy(s)["state"] and _lazy(s)["budget"]
    assert s.counters()["tokens"] == 3


def test_an_enabled_budget_is_counted_from_the_first_call():
    s = session(profiles={"general": {"budget": {"enabled": True, "max_tool_calls": 3}}})
    fired = [dims(s.observe_tool_call(ToolCall("read", {"i": i}, "x"))) for i in range(3)]
    assert fired[-1] == [("budget", "term")]


def test_a_restored_session_fires_at_the_same_calls_as_the_original():
    config = dict(
        profiles={"general": {"budget": {"enabled": True, "max_tool_calls": 150}}},
        poll_tools=["job_000001_status"],
    )
    original, restored = session(**config), session(**config)
    calls = list(mixed_calls(300))
    for k, c in enumerate(calls):
        if k % 7 == 0:  # save and restore through JSON every few calls
            state = json.loads(json.dumps(restored.to_state()))
            restored = session(**config)
            restored.restore_state(state)
        fired = original.observe_tool_call(c)
        assert restored.observe_tool_call(c) == fired, k
        if k % 20 == 0:
            turn = ModelTurn(text="the same thought again", input_tokens=5, state_fingerprint="S")
            on_turn = original.observe_model_turn(turn)
            assert restored.observe_model_turn(turn) == on_turn, k
            fired += on_turn
        for sig in fired:
            if sig.level is Level.TERM:  # self-heal, as the ladder does
                original.reset(sig.dimension)
                restored.reset(sig.dimension)
        assert restored.counters() == original.counters()
