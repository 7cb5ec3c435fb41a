"""Each dimension of docs/detection.md: what fires it, what must not, and worked examples."""

from __future__ import annotations

import pytest

from otel_cycleguard.config import load_config
from otel_cycleguard.detect import Detector, Dimension, Level, ModelTurn, Signal, ToolCall


def make_session(profile: str = "general", **config):
    cfg = load_config(environ={}, profile=profile, **config)
    return Detector(cfg).session("s1")


def call(session, tool, args=None, result="ok", **kw) -> list[Signal]:
    return session.observe_tool_call(ToolCall(tool, args, result, **kw))


def of(signals, dimension: Dimension) -> list[Signal]:
    """The signals of one dimension's own counter (not of the rules reported under it)."""
    return [s for s in signals if s.dimension is dimension and s.rule == dimension.value]


def levels(signals, dimension: Dimension) -> list[str]:
    return [s.level.value for s in of(signals, dimension)]


def run(session, calls, dimension: Dimension) -> dict[int, str]:
    """Feed calls; {1-based call number: level} for the signals of one dimension."""
    fired = {}
    for n, (tool, args, result, *rest) in enumerate(calls, start=1):
        kw = rest[0] if rest else {}
        for s in of(call(session, tool, args, result, **kw), dimension):
            fired[n] = s.level.value
    return fired


# -- identical_call ----------------------------------------------------------------------


def test_five_identical_greps_warn_at_three_and_term_at_five_in_general():
    s = make_session()
    grep = ("grep", {"pattern": "def main", "path": "src"}, "src/app.py:12: def main():")
    assert run(s, [grep] * 5, Dimension.IDENTICAL_CALL) == {3: "warn", 5: "term"}
    sig = of(call(s, *grep), Dimension.IDENTICAL_CALL)
    assert sig == []  # already fired TERM for this crossing
    assert s.counters()["identical_call"] == 6


def test_identical_call_signal_carries_streak_threshold_tool_and_evidence():
    s = make_session()
    fired = []
    for _ in range(3):
        fired += call(s, "grep", {"q": "x"}, "hit")
    (sig,) = of(fired, Dimension.IDENTICAL_CALL)
    assert (sig.level, sig.streak, sig.threshold, sig.tool, sig.step) == (
        Level.WARN,
        3,
        3,
        "grep",
        2,
    )
    assert sig.profile == "general"
    assert sig.category == "exploration"
    assert [d.tool for d in sig.evidence] == ["grep", "grep", "grep"]
    assert len({d.args_hash for d in sig.evidence}) == 1


def test_coding_profile_identical_call_thresholds_are_four_and_seven():
    s = make_session("coding")
    grep = ("grep", {"q": "x"}, "hit")
    assert run(s, [grep] * 7, Dimension.IDENTICAL_CALL) == {4: "warn", 7: "term"}


def test_same_call_with_changing_result_is_not_identical():
    s = make_session()
    calls = [("bash", {"command": "pytest -q"}, f"{n} failed") for n in (5, 4, 3, 2, 1, 0)]
    assert run(s, calls, Dimension.IDENTICAL_CALL) == {}


def test_rerunning_tests_after_an_edit_that_changed_code_does_not_fire_identical_call():
    s = make_session()
    fired = {}
    for n in range(8):
        call(s, "edit", {"path": "a.py", "new": f"v{n}"}, "edited")
        fired.update(
            run(s, [("bash", {"command": "pytest"}, f"FAILED test_{n}")], Dimension.IDENTICAL_CALL)
        )
    assert fired == {}


def test_different_search_queries_do_not_fire_identical_call():
    s = make_session()
    calls = [("web_search", {"query": f"python asyncio {topic}"}, "results") for topic in range(10)]
    assert run(s, calls, Dimension.IDENTICAL_CALL) == {}


def test_any_other_call_in_between_resets_identical_call_to_one():
    s = make_session()
    grep = ("grep", {"q": "x"}, "hit")
    run(s, [grep, grep], Dimension.IDENTICAL_CALL)
    call(s, "read", {"path": "a"}, "text")
    assert run(s, [grep, grep], Dimension.IDENTICAL_CALL) == {}
    assert s.counters()["identical_call"] == 2


def test_identical_call_ignores_volatile_content_in_results():
    s = make_session()
    calls = [
        (
            "bash",
            {"command": "make"},
            f"2024-05-0{n}T10:00:0{n}Z build failed after {n}.{n}s pid {1000 + n}",
        )
        for n in range(1, 6)
    ]
    assert run(s, calls, Dimension.IDENTICAL_CALL) == {3: "warn", 5: "term"}


def test_identical_call_sees_key_order_and_json_strings_as_the_same_arguments():
    s = make_session()
    calls = [
        ("grep", {"a": 1, "b": 2}, "hit"),
        ("grep", '{"b": 2, "a": 1}', "hit"),
        ("grep", {"b": 2, "a": 1}, "hit"),
    ]
    assert run(s, calls, Dimension.IDENTICAL_CALL) == {3: "warn"}


def test_a_legitimate_retry_that_succeeds_does_not_fire():
    s = make_session()
    fetch = {"url": "https://example.com/api"}
    calls = [
        ("fetch", fetch, "503 Service Unavailable", {"error": True}),
        ("fetch", fetch, "503 Service Unavailable", {"error": True}),
        ("fetch", fetch, '{"status": "ok", "items": [1, 2]}', {}),
    ]
    fired = []
    for tool, args, result, kw in calls:
        fired += call(s, tool, args, result, **kw)
    assert fired == []
    assert s.counters()["identical_call"] == 1


# -- category_streak -----------------------------------------------------------------------


def test_exploration_streak_warns_at_thirty_and_terms_at_fifty():
    s = make_session()
    calls = [("read", {"path": f"f{n}.py"}, f"text {n}") for n in range(50)]
    assert run(s, calls, Dimension.CATEGORY_STREAK) == {30: "warn", 50: "term"}


def test_action_streak_warns_at_fifteen_and_terms_at_twenty_five():
    s = make_session()
    calls = [("delete_file", {"n": n}, f"done {n}") for n in range(25)]
    assert run(s, calls, Dimension.CATEGORY_STREAK) == {15: "warn", 25: "term"}


def test_switching_category_resets_the_streak_to_one():
    s = make_session()
    for n in range(20):
        call(s, "read", {"path": f"f{n}"}, "x")
    call(s, "deploy_service", {}, "ok")
    assert s.counters()["category_streak"] == 1
    call(s, "read", {"path": "g"}, "x")
    assert s.counters()["category_streak"] == 1


def test_progress_aware_halving_follows_the_documented_example():
    s = make_session()
    seen = []
    for version in ("v1", "v2", "v2", "v3", "v3", "v3", "v4"):
        call(s, "edit", {"path": "a.py", "content": version}, "edited")
        seen.append(s.counters()["category_streak"])
    assert seen == [1, 1, 2, 1, 2, 3, 2]


def test_twenty_different_patches_never_reach_term():
    s = make_session()
    calls = [
        ("apply_patch", {"patch": f"--- a\n+++ b\n@@ -{n} +{n} @@\n+line {n}"}, "applied")
        for n in range(20)
    ]
    assert run(s, calls, Dimension.CATEGORY_STREAK) == {}
    assert s.counters()["category_streak"] == 1


def test_twenty_identical_patches_do_reach_the_apply_patch_override():
    s = make_session()
    calls = [("apply_patch", {"patch": "same"}, f"applied {n}") for n in range(20)]
    assert run(s, calls, Dimension.CATEGORY_STREAK) == {10: "warn", 20: "term"}


def test_per_tool_override_replaces_the_category_thresholds():
    # general: exec override 15 / 30, action 15 / 25; exec taken out of the progress-aware
    # tools, so that new commands are not halved
    s = make_session(progress_aware_tools=["edit", "write", "apply_patch"])
    calls = [("bash", {"command": f"make target{n}"}, f"ok {n}") for n in range(30)]
    assert run(s, calls, Dimension.CATEGORY_STREAK) == {15: "warn", 30: "term"}


def test_non_progress_aware_action_tool_with_changing_arguments_is_not_halved():
    s = make_session()
    for n in range(6):
        call(s, "deploy_service", {"n": n}, "ok")
    assert s.counters()["category_streak"] == 6


def test_progress_aware_tools_are_configurable():
    s = make_session(progress_aware_tools=["edit", "write", "apply_patch", "deploy_service"])
    for n in range(6):
        call(s, "deploy_service", {"n": n}, "ok")
    assert s.counters()["category_streak"] == 1


# -- tool_pattern ----------------------------------------------------------------------------


def read_edit_exec(edit_args):
    return [
        ("read", {"path": "a.py"}, "contents"),
        ("edit", edit_args, "edited"),
        ("bash", {"command": "pytest"}, "1 failed"),
    ]


def test_read_edit_exec_ten_times_with_identical_args_fires_tool_pattern():
    s = make_session()
    calls = read_edit_exec({"path": "a.py", "new": "x"}) * 10
    fired = []
    laps = []
    for tool, args, result in calls:
        fired += of(call(s, tool, args, result), Dimension.TOOL_PATTERN)
        laps.append(s.counters()["tool_pattern"])
    assert [(f.level, f.streak, f.step) for f in fired] == [
        (Level.WARN, 3, 8),  # the ninth call completes the third lap
        (Level.TERM, 5, 14),
    ]
    assert fired[0].unit == ("read", "edit", "bash")
    assert laps[8] == 3 and laps[14] == 5 and laps[-1] == 10


def test_read_edit_exec_with_changing_edit_args_is_halved_and_never_terms():
    s = make_session()
    calls = []
    for n in range(10):
        calls += read_edit_exec({"path": "a.py", "new": f"attempt {n}"})
    assert Level.TERM.value not in run(s, calls, Dimension.TOOL_PATTERN).values()
    assert s.counters()["tool_pattern"] <= 2


def test_a_b_a_b_ping_pong_counts_laps_of_period_two():
    s = make_session()
    a = ("read", {"path": "a.py"}, "A")
    b = ("grep", {"q": "foo"}, "B")
    fired = run(s, [a, b] * 5, Dimension.TOOL_PATTERN)
    assert fired == {6: "warn", 10: "term"}  # A B A B A B is 3 laps


def test_open_a_open_b_alternation_is_a_period_two_unit_over_tool_and_arguments():
    s = make_session()
    calls = [("open", {"path": "a.py"}, "A"), ("open", {"path": "b.py"}, "B")] * 3
    fired = []
    for c in calls:
        fired += of(call(s, *c), Dimension.TOOL_PATTERN)
    assert [(f.level, f.streak) for f in fired] == [(Level.WARN, 3)]
    assert fired[0].unit == ("open", "open")


def _copy(name: str) -> str:
    """An equal string that is another object (as each span's attribute value is)."""
    copy = "".join(list(name))
    assert copy == name and (copy is not name or len(name) < 2)
    return copy


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("read", "grep"),
        ("read", "reae"),  # same length, one letter apart
        ("r\ud800", "r\udfff"),  # lone surrogates: different, though UTF-8 replaces both
        ("grep_ü", "grep_u"),
    ],
)
def test_tool_names_are_compared_by_value_not_by_object(a: str, b: str) -> None:
    """Two tools in turn is a period-two pattern whether each span brings its own copy of
    the name or the same object; two different names never count as one."""
    same_objects = make_session()
    copies = make_session()
    calls = [(a, {"q": 1}, "A"), (b, {"q": 1}, "B")] * 5
    fired = run(same_objects, calls, Dimension.TOOL_PATTERN)
    assert fired == {6: "warn", 10: "term"}
    copied = [(_copy(tool), args, result) for tool, args, result in calls]
    assert run(copies, copied, Dimension.TOOL_PATTERN) == fired
    one_name = make_session()  # a then a (another object) is period one: no pattern
    assert run(one_name, [(a, {"q": 1}, "A"), (_copy(a), {"q": 1}, "A")] * 5,
               Dimension.TOOL_PATTERN) == {}  # fmt: skip


def test_period_one_repetition_is_not_tool_patterns_job():
    s = make_session()
    calls = [("grep", {"q": "x"}, "hit")] * 12
    assert run(s, calls, Dimension.TOOL_PATTERN) == {}
    assert s.counters()["tool_pattern"] == 0


def test_scrolling_through_a_file_does_not_fire_tool_pattern_or_identical_call():
    s = make_session()
    calls = [("open", {"path": "big.py"}, "lines 1-100")]
    for n in range(1, 25):
        calls.append(("scroll_down", {}, f"lines {100 * n + 1}-{100 * n + 100}: code {n}"))
    calls += [("goto", {"line": 100 * n}, f"code near {n}") for n in range(1, 10)]
    fired = []
    for c in calls:
        fired += call(s, *c)
    assert of(fired, Dimension.TOOL_PATTERN) == []
    assert of(fired, Dimension.IDENTICAL_CALL) == []


def test_paging_with_a_period_two_tool_sequence_and_changing_arguments_does_not_term():
    s = make_session()
    calls = []
    for page in range(12):
        calls += [
            ("open", {"path": "big.py", "line": page * 100}, f"page {page}"),
            ("grep", {"q": f"symbol{page}"}, f"hits {page}"),
        ]
    assert Level.TERM.value not in run(s, calls, Dimension.TOOL_PATTERN).values()


def test_longer_unit_up_to_max_period_is_found():
    s = make_session()
    unit = [
        ("read", {"p": 1}, "1"),
        ("grep", {"q": 2}, "2"),
        ("list", {"d": 3}, "3"),
        ("glob", {"g": 4}, "4"),
    ]
    fired = run(s, unit * 5, Dimension.TOOL_PATTERN)
    assert fired == {12: "warn", 20: "term"}


def test_unit_longer_than_max_period_is_not_reported():
    s = make_session()
    unit = [(f"tool{i}", {"i": i}, str(i)) for i in range(5)]
    assert run(s, unit * 6, Dimension.TOOL_PATTERN) == {}


# -- poll_no_progress --------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["job_status", "build_poll", "get_result", "wait"])
def test_builtin_poll_tools_warn_at_ten_and_term_at_twenty(tool):
    s = make_session()
    calls = [(tool, {"job": "42", "attempt": n}, "state: running") for n in range(20)]
    assert run(s, calls, Dimension.POLL_NO_PROGRESS) == {10: "warn", 20: "term"}


def test_sleep_is_a_poll_tool_that_only_waits():
    """Never an identical call (waiting is legitimate), and not a status that never changes."""
    s = make_session()
    calls = [("sleep", {"seconds": 30}, "slept 30s")] * 20
    assert run(s, calls, Dimension.POLL_NO_PROGRESS) == {}
    s = make_session()
    assert run(s, calls, Dimension.IDENTICAL_CALL) == {}


@pytest.mark.parametrize("action", ["poll", "log"])
def test_process_with_poll_or_log_action_is_a_poll_tool(action):
    s = make_session()
    calls = [("process", {"action": action, "id": "p1"}, "still running")] * 10
    assert run(s, calls, Dimension.POLL_NO_PROGRESS) == {10: "warn"}


def test_process_with_another_action_is_not_a_poll_tool():
    s = make_session()
    calls = [("process", {"action": "start", "id": f"p{n}"}, "started") for n in range(12)]
    assert run(s, calls, Dimension.POLL_NO_PROGRESS) == {}


def test_configured_poll_tools_count_too():
    s = make_session(poll_tools=["check_ci"])
    calls = [("check_ci", {"pr": 7}, "pending")] * 10
    assert run(s, calls, Dimension.POLL_NO_PROGRESS) == {10: "warn"}
    plain = make_session()
    assert run(plain, calls, Dimension.POLL_NO_PROGRESS) == {}


def test_poll_calls_never_fire_identical_call():
    s = make_session()
    calls = [("job_status", {"job": "42"}, "running")] * 20
    fired = []
    for c in calls:
        fired += call(s, *c)
    assert of(fired, Dimension.IDENTICAL_CALL) == []
    assert levels(fired, Dimension.POLL_NO_PROGRESS) == ["warn", "term"]


def test_polling_whose_result_changes_does_not_fire():
    s = make_session()
    calls = [("job_status", {"job": "42"}, f"progress {n}%") for n in range(0, 100, 4)]
    assert run(s, calls, Dimension.POLL_NO_PROGRESS) == {}


def test_a_changed_poll_result_resets_the_count_to_one():
    s = make_session()
    run(s, [("job_status", {}, "running")] * 9, Dimension.POLL_NO_PROGRESS)
    call(s, "job_status", {}, "done")
    assert s.counters()["poll_no_progress"] == 1


def test_poll_no_progress_is_counted_per_poll_tool():
    s = make_session()
    fired = {}
    for n in range(1, 11):
        for sig in of(call(s, "build_status", {}, "running"), Dimension.POLL_NO_PROGRESS):
            fired[(sig.tool, n)] = sig.level.value
        call(s, "deploy_status", {}, f"step {n}")  # this one makes progress
    assert fired == {("build_status", 10): "warn"}


def test_subagent_poll_thresholds_are_five_and_ten():
    s = make_session("subagent")
    assert run(s, [("wait", {"s": 5}, "nothing")] * 10, Dimension.POLL_NO_PROGRESS) == {
        5: "warn",
        10: "term",
    }


# -- error_streak -----------------------------------------------------------------------


def test_error_streak_counts_failures_across_tools_warn_five_term_eight():
    s = make_session()
    calls = [(f"tool{n % 3}", {"n": n}, f"boom {n}", {"error": True}) for n in range(8)]
    assert run(s, calls, Dimension.ERROR_STREAK) == {5: "warn", 8: "term"}


def test_whack_a_mole_edits_in_between_do_not_reset_the_builds_count():
    s = make_session()
    fired = {}
    for n in range(1, 9):
        call(s, "edit", {"path": "a.py", "new": f"fix {n}"}, "edited")
        for sig in of(
            call(s, "bash", {"command": "make"}, f"error: thing {n} broke", error=True),
            Dimension.ERROR_STREAK,
        ):
            fired[n] = sig.level.value
    assert fired == {5: "warn", 8: "term"}


def test_a_success_of_that_tool_resets_its_error_count():
    s = make_session()
    for n in range(4):
        call(s, "edit", {"n": n}, "ok")
        call(s, "bash", {"command": "make"}, f"err {n}", error=True)
    assert s.counters()["error_streak"] == 4
    call(s, "bash", {"command": "make"}, "built")
    assert s.counters()["error_streak"] == 0
    assert run(s, [("bash", {"c": 1}, "e", {"error": True})] * 4, Dimension.ERROR_STREAK) == {}


def test_result_patterns_mark_failures():
    s = make_session(
        profiles={"general": {"error_streak": {"result_patterns": [r"Traceback", r"FAILED"]}}}
    )
    calls = [("bash", {"command": "pytest"}, f"test_{n} FAILED") for n in range(5)]
    assert run(s, calls, Dimension.ERROR_STREAK) == {5: "warn"}
    plain = make_session()
    assert run(plain, calls, Dimension.ERROR_STREAK) == {}


def test_non_failing_tools_never_count_as_failures():
    s = make_session(profiles={"general": {"error_streak": {"non_failing_tools": ["ruff"]}}})
    calls = [("ruff", {"n": n}, "E501 line too long", {"error": True}) for n in range(10)]
    assert run(s, calls, Dimension.ERROR_STREAK) == {}


def test_mixed_failures_and_successes_of_one_tool_do_not_fire():
    s = make_session()
    calls = []
    for n in range(10):
        calls.append(("bash", {"n": n}, f"err {chr(97 + n)}", {"error": n % 2 == 0}))
    assert run(s, calls, Dimension.ERROR_STREAK) == {}


# -- text_loop ---------------------------------------------------------------------------


PARAGRAPH = (
    "I will look at the failing test again and check whether the fixture is configured "
    "correctly, then re-run the suite to confirm that the import error is gone and that "
    "nothing else in the module depends on the old behaviour of the parser."
)


def turns(session, texts) -> dict[int, str]:
    fired = {}
    for n, text in enumerate(texts, start=1):
        for s in of(session.observe_model_turn(ModelTurn(text=text)), Dimension.TEXT_LOOP):
            fired[n] = s.level.value
    return fired


def test_exact_repeated_text_warns_at_three_and_terms_at_five():
    s = make_session()
    assert turns(s, [PARAGRAPH] * 5) == {3: "warn", 5: "term"}


def test_text_loop_signal_is_a_reasoning_cycle_on_a_model_turn():
    s = make_session()
    fired = []
    for _ in range(3):
        fired += s.observe_model_turn(ModelTurn(text=PARAGRAPH))
    (sig,) = fired
    assert sig.step is None and sig.model_turn_index == 2
    assert sig.cycle_class.value == "reasoning_cycle"
    assert sig.break_strategy.value == "force_execution_or_clarify"


def test_near_identical_text_counts_after_masking_case_and_punctuation():
    s = make_session()
    texts = [
        PARAGRAPH,
        PARAGRAPH.upper().replace(",", " ;"),
        PARAGRAPH + " (at 2024-05-01T10:00:00Z)",  # 2 new shingles of 40: Jaccard 0.95
    ]
    assert turns(s, texts) == {3: "warn"}


def test_one_changed_word_in_a_long_text_is_near_identical():
    s = make_session()
    base = " ".join(f"word{i}" for i in range(200))
    texts = [base, base.replace("word100", "changed"), base.replace("word50", "other")]
    assert turns(s, texts) == {3: "warn"}


def test_texts_below_the_similarity_measure_do_not_count():
    s = make_session()
    words = PARAGRAPH.split()
    half = " ".join(words[: len(words) // 2])
    texts = [PARAGRAPH, half + " and then something completely new happens here now", PARAGRAPH]
    assert turns(s, texts) == {}
    assert s.counters()["text_loop"] == 1


def test_different_texts_reset_the_run():
    s = make_session()
    turns(s, [PARAGRAPH, PARAGRAPH])
    turns(s, ["The tests pass now; I am done."])
    assert s.counters()["text_loop"] == 1
    assert turns(s, [PARAGRAPH, PARAGRAPH]) == {}


def test_tool_calls_in_between_do_not_break_the_text_run():
    s = make_session()
    fired = {}
    for n in range(1, 6):
        call(s, "read", {"path": f"f{n}"}, f"content {n}")
        call(s, "bash", {"command": f"run {n}"}, f"out {n}")
        for sig in of(s.observe_model_turn(ModelTurn(text=PARAGRAPH)), Dimension.TEXT_LOOP):
            fired[n] = sig.level.value
    assert fired == {3: "warn", 5: "term"}


def test_empty_model_turns_neither_count_nor_break_the_run():
    s = make_session()
    assert turns(s, [PARAGRAPH, None, "   ", PARAGRAPH, "", PARAGRAPH]) == {6: "warn"}


# -- state_hash --------------------------------------------------------------------------


def states(session, fingerprints) -> dict[int, str]:
    fired = {}
    for n, fp in enumerate(fingerprints, start=1):
        signals = call(session, "act", {"n": n}, f"r{n}", state_fingerprint=fp)
        for s in of(signals, Dimension.STATE_HASH):
            fired[n] = s.level.value
    return fired


def test_state_revisited_within_the_window_warns_at_three_and_terms_at_five():
    s = make_session()
    fps = ["S"] + [f"new{i}" for i in range(3)] + ["S"] + ["x", "S", "y", "S", "z", "S"]
    assert states(s, fps) == {7: "warn", 11: "term"}


def test_state_revisits_outside_the_window_do_not_count():
    s = make_session(profiles={"general": {"state_hash": {"window": 5}}})
    fps = []
    for _ in range(6):
        fps += ["S"] + [f"u{len(fps)}-{i}" for i in range(5)]
    assert states(s, fps) == {}


def test_a_b_a_b_over_fingerprints_fires():
    s = make_session(profiles={"general": {"state_hash": {"window": 2}}})
    assert states(s, ["A", "B"] * 5) == {6: "warn", 10: "term"}


def test_distinct_states_never_fire_state_hash():
    s = make_session()
    assert states(s, [f"state{i}" for i in range(100)]) == {}


def test_state_fingerprints_on_model_turns_count_too():
    s = make_session()
    fired = []
    for _ in range(3):
        fired += s.observe_model_turn(ModelTurn(text=None, state_fingerprint="S"))
    assert levels(fired, Dimension.STATE_HASH) == ["warn"]


# -- budget ------------------------------------------------------------------------------


def test_budget_is_off_by_default_even_for_a_long_healthy_run():
    s = make_session()
    fired = []
    for n in range(500):
        fired += call(s, "read" if n % 2 else "edit", {"n": n}, f"r{n}", start_s=n, end_s=n + 100)
        fired += s.observe_model_turn(ModelTurn(text=f"step {n} " * 3, input_tokens=10**5))
    assert of(fired, Dimension.BUDGET) == []


def budget_session(**budget):
    return make_session(profiles={"general": {"budget": {"enabled": True, **budget}}})


def test_budget_tool_calls_warn_at_the_fraction_and_term_at_the_limit():
    s = budget_session(max_tool_calls=10, warn_fraction=0.8)
    calls = [("read" if n % 2 else "edit", {"n": n}, f"r{n}") for n in range(12)]
    assert run(s, calls, Dimension.BUDGET) == {8: "warn", 10: "term"}


def test_budget_model_turns():
    s = budget_session(max_model_turns=5)
    fired = {}
    for n in range(1, 7):
        for sig in of(s.observe_model_turn(ModelTurn(text=f"t{n}")), Dimension.BUDGET):
            fired[n] = (sig.level.value, sig.model_turn_index)
    assert fired == {4: ("warn", 3), 5: ("term", 4)}


def test_budget_tokens():
    s = budget_session(max_tokens=1000)
    fired = {}
    for n in range(1, 6):
        turn = ModelTurn(text=f"t{n}", input_tokens=150, output_tokens=100)
        for sig in of(s.observe_model_turn(turn), Dimension.BUDGET):
            fired[n] = sig.level.value
    assert fired == {4: "term"}  # 250, 500, 750, 1000: 800 and 1000 crossed on the same turn
    assert s.counters()["tokens"] == 1250


def test_budget_tokens_warn_before_term():
    s = budget_session(max_tokens=1000)
    fired = {}
    for n in range(1, 12):
        for sig in of(
            s.observe_model_turn(ModelTurn(text="x", output_tokens=100)), Dimension.BUDGET
        ):
            fired[n] = sig.level.value
    assert fired == {8: "warn", 10: "term"}


def test_budget_wall_time():
    s = budget_session(max_wall_seconds=100)
    calls = [
        ("read", {"n": n}, "r", {"start_s": 1000 + 10 * n, "end_s": 1005 + 10 * n})
        for n in range(11)
    ]
    # wall = end - first start: 5, 15, ..., 75, 85 (warn at 80), 95, 105 (term)
    assert run(s, calls, Dimension.BUDGET) == {9: "warn", 11: "term"}


def test_budget_idle_time_between_calls():
    s = budget_session(max_idle_seconds=1.5)
    calls = [
        ("read", {"n": 0}, "r", {"start_s": 0.0, "end_s": 0.1}),
        ("read", {"n": 1}, "r", {"start_s": 0.2, "end_s": 0.3}),
        ("read", {"n": 2}, "r", {"start_s": 1.6, "end_s": 1.7}),  # idle 1.3 >= 1.2
        ("read", {"n": 3}, "r", {"start_s": 3.4, "end_s": 3.5}),  # idle 1.7 >= 1.5
    ]
    assert run(s, calls, Dimension.BUDGET) == {3: "warn", 4: "term"}


def test_budget_per_category_call_duration():
    s = budget_session(call_seconds={"exploration": 10, "action": 0.5})
    calls = [
        ("read", {"n": 0}, "r", {"start_s": 0.0, "end_s": 9.0}),  # 9 >= 8
        ("read", {"n": 1}, "r", {"start_s": 10.0, "end_s": 11.0}),
        ("edit", {"n": 2}, "r", {"start_s": 12.0, "end_s": 12.9}),  # 0.9 >= 0.5
    ]
    assert run(s, calls, Dimension.BUDGET) == {1: "warn", 3: "term"}


def test_budget_preset_enables_the_documented_limits():
    s = make_session(profiles={"general": {"budget": {"preset": "tool_calling"}}})
    calls = [("read" if n % 2 else "edit", {"n": n}, f"r{n}") for n in range(15)]
    assert run(s, calls, Dimension.BUDGET) == {12: "warn", 15: "term"}


def test_budget_preset_fields_can_be_overridden():
    s = make_session(profiles={"general": {"budget": {"preset": "simple_qa", "max_tool_calls": 3}}})
    calls = [("read" if n % 2 else "edit", {"n": n}, f"r{n}") for n in range(3)]
    assert run(s, calls, Dimension.BUDGET) == {3: "term"}
