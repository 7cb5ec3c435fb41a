"""Unit tests for the real-world rules (rust/cycleguard-core: rules.rs, failures.rs): positive and
negative synthetic cases."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from otel_cycleguard._core import command_exit, refine_failure

from otel_cycleguard.config import CycleGuardConfig, load_config
from otel_cycleguard.detect.records import ToolCall
from otel_cycleguard.detect.session import Detector
from otel_cycleguard.detect.signals import Dimension, Level


def session(profile: str = "general", **overrides):
    config = load_config(environ={}, profile=profile, **overrides)
    return Detector(config).session("s")


def feed(s, calls):
    """Feed (tool, args, result[, error]) tuples; return [(step, dimension, level, text)]."""
    out = []
    for c in calls:
        tool, args, result = c[:3]
        error = c[3] if len(c) > 3 else False
        for sig in s.observe_tool_call(ToolCall(tool, args, result, error=error)):
            out.append((sig.step, sig.dimension, sig.level, sig.explanation))
    return out


def terms(fired, rule=None):
    return [
        (step, dim)
        for step, dim, level, text in fired
        if level is Level.TERM and (rule is None or text.startswith(rule))
    ]


# -- replay_cycle ---------------------------------------------------------------------------


def test_replay_cycle_period_seven_with_identical_results_terms_at_third_lap():
    s = session("coding")
    lap = [("search_dir", {"args": f"name{i}"}, f"nothing for name{i}") for i in range(7)]
    fired = feed(s, lap * 3)
    assert terms(fired, "replay_cycle") == [(14, Dimension.TOOL_PATTERN)]
    text = next(t for _, _, lv, t in fired if lv is Level.TERM)
    assert "every 7 calls" in text and "whole lap" in text


def test_replay_cycle_varying_edit_and_constant_run_needs_partial_term_laps():
    s = session("coding")
    calls = []
    for i in range(6):
        calls.append(("edit", {"args": f"{i}:{i}\nprint('probe {i}')"}, f"edited probe {i}"))
        calls.append(("python", {"command": "python repro.py"}, ""))
    fired = feed(s, calls)
    # run at steps 1,3,5,7,9: fifth lap at step 9 (partial_term 5); WARN at the third (5)
    assert terms(fired, "replay_cycle") == [(9, Dimension.TOOL_PATTERN)]
    assert any(step == 5 and lv is Level.WARN for step, _, lv, t in fired)


def test_replay_cycle_lap_whose_changed_call_always_fails_counts_as_replayed():
    """ls, cat (the same malformed answer), then a new attempt that fails each lap: the lap
    brings nothing new, so it terminates at ``term`` laps, not ``partial_term``."""
    s = session("general")
    calls = []
    for attempt in ("cat source.py", "cat ./source", "strings source", "xxd source"):
        calls.append(("bash", {"command": "ls"}, "source\nflag.enc"))
        calls.append(("bash", {"command": "cat source"}, "Malformed command"))
        calls.append(("bash", {"command": attempt}, f"{attempt.split()[0]}: failed", True))
    fired = feed(s, calls)
    assert terms(fired, "replay_cycle") == [(6, Dimension.TOOL_PATTERN)]  # the third ls
    text = next(t for _, _, lv, t in fired if lv is Level.TERM)
    assert "every one of them failed" in text


def test_replay_cycle_lap_whose_changed_call_works_stays_partial():
    """The same laps, but the call that changes succeeds each time: it may be progress."""
    s = session("general")
    calls = []
    for attempt in ("cat source.py", "cat ./source", "strings source", "xxd source"):
        calls.append(("bash", {"command": "ls"}, "source\nflag.enc"))
        calls.append(("bash", {"command": "cat source"}, "Malformed command"))
        calls.append(("bash", {"command": attempt}, f"output of {attempt}"))
    fired = feed(s, calls)
    assert terms(fired, "replay_cycle") == []
    assert any(lv is Level.WARN and t.startswith("replay_cycle") for _, _, lv, t in fired)


def test_replay_cycle_silent_when_results_change_each_lap():
    s = session("coding")
    calls = []
    for i in range(8):
        calls.append(("edit", {"args": f"fix {i}"}, "ok"))
        calls.append(("bash", {"command": "pytest"}, f"{10 - i} failed"))
    assert terms(feed(s, calls), "replay_cycle") == []


def test_replay_cycle_silent_when_the_distance_changes():
    s = session()
    probe = ("grep", {"q": "def f"}, "a.py: def f")
    other = [("read", {"p": f"f{i}"}, f"text {i}") for i in range(10)]
    calls = [probe, other[0], probe, other[1], other[2], probe, *other[3:6], probe]
    assert terms(feed(s, calls), "replay_cycle") == []


def test_replay_cycle_is_configurable_and_can_be_disabled():
    s = session(profiles={"general": {"replay_cycle": {"enabled": False}}})
    lap = [("a", {"x": 1}, "r1"), ("b", {"x": 2}, "r2"), ("c", {"x": 3}, "r3")]
    assert terms(feed(s, lap * 4), "replay_cycle") == []
    s = session(profiles={"general": {"replay_cycle": {"warn": 4, "term": 4}}})
    assert terms(feed(s, lap * 4), "replay_cycle") == [(9, Dimension.TOOL_PATTERN)]


def test_replay_cycle_self_heal_resets_its_laps():
    s = session()
    lap = [("a", {"x": 1}, "r1"), ("b", {"x": 2}, "r2"), ("c", {"x": 3}, "r3")]
    assert terms(feed(s, lap * 3), "replay_cycle") == [(6, Dimension.TOOL_PATTERN)]
    s.reset(Dimension.TOOL_PATTERN)
    # counting starts over: the next TERM needs three fresh laps
    fired = feed(s, lap * 3)
    assert [step for step, _ in terms(fired, "replay_cycle")] == [15]


# -- near_duplicate_edit --------------------------------------------------------------------

BODY = "\n  public Foo(int a, int b) {\n    this.a = a;\n    this.b = b;\n  }\nend_of_edit"


def test_near_duplicate_edit_same_body_moving_line_range_terms_at_third():
    s = session("coding")
    calls = [
        ("edit", {"args": f"{52 + i}:{59 + i}{BODY}"}, f"[File: Foo.java ({173 + i} lines)]")
        for i in range(4)
    ]
    fired = feed(s, calls)
    assert terms(fired, "near_duplicate_edit") == [(2, Dimension.IDENTICAL_CALL)]


def test_near_duplicate_edit_silent_for_different_bodies_or_a_call_in_between():
    s = session("coding")
    # different bodies (that differ in more than numbers) are different edits
    calls = [
        ("edit", {"args": f"10:10\n  int {name} = compute(other, more);\nend"}, "ok")
        for name in ("alpha", "beta", "gamma", "delta")
    ]
    assert terms(feed(s, calls), "near_duplicate_edit") == []
    s = session("coding")
    edit = ("edit", {"args": f"52:59{BODY}"}, "ok")
    run = ("bash", {"command": "git checkout Foo.java"}, "")
    assert terms(feed(s, [edit, run, edit, run, edit]), "near_duplicate_edit") == []


def test_near_duplicate_edit_ignores_short_edits():
    s = session("coding")
    calls = [("edit", {"args": f"{n}:{n}\n}}"}, "ok") for n in (10, 20, 30, 40)]
    assert terms(feed(s, calls), "near_duplicate_edit") == []


def _delete_then_reinsert(laps: int, first_line: int = 72):
    """Each lap deletes one line, then re-inserts the same block one line higher."""
    calls = []
    for lap in range(laps):
        line = first_line - lap
        calls.append(("edit", {"args": f"{line}:{line}\nend_of_edit"}, f"{144 - lap} lines"))
        calls.append(("edit", {"args": f"{line}:{line + 7}{BODY}"}, f"{144 - lap} lines"))
    return calls


def test_near_duplicate_edit_two_edits_in_turn_term_at_the_third_lap():
    fired = feed(session("coding"), _delete_then_reinsert(4))
    # laps end at calls 1, 3, 5: the third lap is complete at call 5
    assert terms(fired, "near_duplicate_edit") == [(5, Dimension.IDENTICAL_CALL)]
    text = next(t for _, _, lv, t in fired if lv is Level.TERM)
    assert "two changes in turn, 3 laps" in text


def test_near_duplicate_edit_two_edits_in_turn_silent_when_a_lap_changes_content():
    calls = _delete_then_reinsert(4)
    calls[3] = ("edit", {"args": "71:78\n  int other = computeSomethingElse();\nend"}, "ok")
    assert terms(feed(session("coding"), calls), "near_duplicate_edit") == []


def test_near_duplicate_edit_two_short_edits_in_turn_are_not_counted():
    # deleting lines two at a time (each edit short) is work, not a re-applied change
    calls = []
    for n in range(4):
        calls.append(("edit", {"args": f"{10 + n}:{10 + n}\nend"}, "ok"))
        calls.append(("edit", {"args": f"{40 + n}:{41 + n}\nend"}, "ok"))
    assert terms(feed(session("coding"), calls), "near_duplicate_edit") == []


def test_near_duplicate_edit_two_edits_in_turn_broken_by_another_call():
    calls = _delete_then_reinsert(4)
    calls.insert(4, ("bash", {"command": "mvn -q compile"}, "BUILD FAILURE"))
    assert terms(feed(session("coding"), calls), "near_duplicate_edit") == []


# -- repeated_failure -----------------------------------------------------------------------


def test_repeated_failure_same_error_terms_before_identical_call():
    s = session("coding")
    calls = [
        (
            "bash",
            {"command": "cd src/x"},
            f"/bin/bash: line {11300 + 15 * i}: cd: src/x: No such file or directory",
            True,
        )
        for i in range(5)
    ]
    fired = feed(s, calls)
    assert terms(fired) == [(2, Dimension.IDENTICAL_CALL)]  # the third identical failure
    assert "repeated_failure" in next(t for *_, lv, t in fired if lv is Level.TERM)


def test_repeated_failure_silent_when_the_call_succeeds():
    s = session("coding")
    calls = [("bash", {"command": "ls"}, "a b c")] * 5
    assert terms(feed(s, calls), "repeated_failure") == []


def test_repeated_failure_a_number_that_moves_is_not_the_same_failure():
    """A rollout checked with the same command, failing while the replicas come up: the count
    that moves is the world moving on, so it is three failures, not one repeated."""
    calls = [
        ("bash", {"command": "kubectl rollout status deploy/api --timeout=5s"},
         f"error: timed out waiting: {n} of 3 updated replicas are available", True)
        for n in (0, 1, 2)
    ]  # fmt: skip
    assert terms(feed(session("general"), calls), "repeated_failure") == []
    stuck = [(*calls[0][:2], calls[0][2], True)] * 3
    assert terms(feed(session("general"), stuck), "repeated_failure") == [
        (2, Dimension.IDENTICAL_CALL)
    ]


# -- nothing_new ----------------------------------------------------------------------------

# A small map of rooms; `go` answers with the room it leads to.
_ROOMS = {
    ("hall", "east"): "kitchen",
    ("kitchen", "west"): "hall",
    ("hall", "south"): "study",
    ("study", "north"): "hall",
    ("study", "east"): "cellar",
    ("cellar", "west"): "study",
}


def _walk(moves: list[tuple[str, str]]) -> list[tuple]:
    return [
        ("textworld", {"command": f"go {way}"}, f"-= {_ROOMS[(room, way)].title()} =-\nexits")
        for room, way in moves
    ]


# every way through the map once (new answers), then a re-walk in an order with no fixed lap
_EXPLORE = [("hall", "east"), ("kitchen", "west"), ("hall", "south"), ("study", "east"),
            ("cellar", "west"), ("study", "north")]  # fmt: skip
_REWALK = [("hall", "south"), ("study", "east"), ("cellar", "west"), ("study", "north"),
           ("hall", "east"), ("kitchen", "west"), ("hall", "east"), ("kitchen", "west"),
           ("hall", "south"), ("study", "north")]  # fmt: skip


def test_nothing_new_rewalk_of_known_rooms_by_an_unknown_tool_warns_at_8_and_terms_at_20():
    calls = _walk(_EXPLORE + _REWALK * 2)
    fired = feed(session("general"), calls)
    mine = [(step, lv) for step, _, lv, t in fired if t.startswith("nothing_new")]
    # the 8th and the 20th call in a row whose call and answer were both seen before
    assert mine == [(6 + 7, Level.WARN), (6 + 19, Level.TERM)]
    assert terms(fired, "nothing_new") == [(25, Dimension.TOOL_PATTERN)]


def test_nothing_new_one_new_answer_starts_over():
    calls = _walk(_EXPLORE + _REWALK)
    calls.append(("textworld", {"command": "open chest"}, "You find a key."))  # news
    calls += _walk(_REWALK)
    fired = feed(session("general"), calls)
    assert terms(fired, "nothing_new") == []
    # the same call with a changed answer is news too
    changed = ("textworld", {"command": "go east"}, "-= Kitchen =- (a light is on)")
    calls = [*_walk(_EXPLORE + _REWALK), changed, *_walk(_REWALK)]
    assert terms(feed(session("general"), calls), "nothing_new") == []


def test_nothing_new_polls_neither_count_nor_break_the_run():
    poll = ("job_status", {"id": 7}, "running")
    calls = _walk(_EXPLORE)
    for move in _walk(_REWALK * 2):
        calls += [move, poll]
    fired = feed(session("general", poll_tools=("job_status",)), calls)
    # the 20th known move is the 20th call of the run, polls between them aside
    assert terms(fired, "nothing_new") == [(6 + 2 * 19, Dimension.TOOL_PATTERN)]


def test_nothing_new_remembers_the_last_64_distinct_calls():
    reads = [("read", {"path": f"f{i}.py"}, f"contents {i}") for i in range(84)]
    # re-reading the first twenty: forgotten once 64 others came after them, so all new
    assert terms(feed(session("general"), reads + reads[:20]), "nothing_new") == []
    # re-reading the last twenty: all remembered
    assert terms(feed(session("general"), reads + reads[-20:]), "nothing_new") == [
        (103, Dimension.TOOL_PATTERN)
    ]


def test_nothing_new_can_be_disabled():
    off = session("general", profiles={"general": {"nothing_new": {"enabled": False}}})
    assert [
        f for f in feed(off, _walk(_EXPLORE + _REWALK * 2)) if f[3].startswith("nothing_new")
    ] == []


# -- failures read from results -------------------------------------------------------------


def cfg(**kw):
    return CycleGuardConfig(**kw).profiles["coding"].error_streak


@pytest.mark.parametrize(
    "result",
    [
        "/bin/bash: line 123: javac: command not found",
        "Reading package lists...\nE: Unable to locate package foo",
        "\nEXECUTION TIMED OUT",
        "networking: unrecognized service",
        'No matches found for "build" in /repo',
        "Traceback (most recent call last):\n  File x\nValueError",
    ],
)
def test_result_patterns_mark_exec_and_search_failures(result):
    tool = "search_dir" if result.startswith("No matches") else "bash"
    canonical = "search_dir" if tool == "search_dir" else "exec"
    assert refine_failure(tool, canonical, {"command": "x"}, result, False, cfg()) is True


def test_result_patterns_leave_other_tools_and_clean_output_alone():
    assert refine_failure("edit", "edit", {}, "E: looks like an error", False, cfg()) is False
    assert refine_failure("bash", "exec", {"command": "ls"}, "a\nb\n", False, cfg()) is False
    assert (
        refine_failure(
            "lint",
            "exec",
            {},
            "x: command not found",
            False,
            cfg(profiles={"coding": {"error_streak": {"non_failing_tools": ["lint"]}}}),
        )
        is False
    )


def test_non_failing_exit_codes_diff_and_pylint_are_findings_not_failures():
    diff = {"command": "diff a.txt b.txt"}
    assert (
        refine_failure("bash", "exec", diff, "<returncode>1</returncode>\n< x\n> y", True, cfg())
        is False
    )
    # grep's exit 1 is "no match": the harness said how the look-up ended, a finding
    grep = {"command": "grep -rn foo src"}
    empty = "<returncode>1</returncode>\n<output>\n</output>"
    assert refine_failure("bash", "exec", grep, empty, True, cfg()) is False
    assert refine_failure("bash", "exec", grep, empty, False, cfg()) is False
    pylint = {"command": "cd pkg && pylint mod.py"}
    assert (
        refine_failure("bash", "exec", pylint, "<returncode>16</returncode>\nC0114", True, cfg())
        is False
    )
    # a real failure of the same commands still counts
    assert (
        refine_failure("bash", "exec", grep, "<returncode>2</returncode>\nno file", True, cfg())
        is True
    )
    pytest_run = {"command": "python -m pytest"}
    assert (
        refine_failure("bash", "exec", pytest_run, "<returncode>1</returncode>", True, cfg())
        is True
    )


def test_command_exit_reads_last_segment_and_code():
    assert command_exit({"command": "sudo FOO=1 grep x f | wc -l"}, "exit code: 0") == ("wc", 0)
    assert command_exit({"command": "make"}, "no exit code here") == (None, None)


def test_command_exit_skips_the_prefixes_command_words_skips():
    line = "nohup env A=1 time /usr/local/bin/pylint src"
    assert command_exit({"command": line}, "exit code: 16") == ("pylint", 16)


def test_command_exit_reads_any_case_and_non_ascii_case_folds():
    # ASCII output takes a substring pre-check; the regex (re.I) decides the rest alike
    assert command_exit({"command": "make"}, "make: EXIT CODE 3") == ("make", 3)
    assert command_exit({"command": "make"}, "<ReturnCode>4</ReturnCode>") == ("make", 4)
    assert command_exit({"command": "make"}, "exited with status 5") == ("make", 5)
    assert command_exit({"command": "make"}, "exıt code 2") == ("make", 2)  # dotless i


def test_linter_exiting_16_does_not_build_an_error_streak():
    s = session("coding")
    calls = [
        (
            "bash",
            {"command": f"pylint mod{i}.py"},
            f"<returncode>16</returncode>\nC0114 mod{i}",
            True,
        )
        for i in range(15)
    ]
    fired = feed(s, calls)
    assert [f for f in fired if f[1] is Dimension.ERROR_STREAK] == []


def test_unflagged_failures_from_results_build_an_error_streak():
    s = session("coding")
    calls = [
        ("search_dir", {"args": f"phrase {w}"}, f'No matches found for "phrase {w}" in /r')
        for w in "abcdefghijkl"
    ]
    fired = feed(s, calls)
    # a search that finds nothing eight times in a row (coding) is failed_lookups' TERM; it
    # warned at six
    assert [step for step, _, level, _ in fired if level is Level.WARN] == [5]
    assert terms(fired) == [(7, Dimension.ERROR_STREAK)]
    assert terms(fired, "failed_lookups") == [(7, Dimension.ERROR_STREAK)]


def test_new_knobs_validate():
    from otel_cycleguard.config import ConfigError

    with pytest.raises(ConfigError):
        load_config(environ={}, profiles={"general": {"replay_cycle": {"warn": 6, "term": 3}}})
    with pytest.raises(ConfigError):
        load_config(
            environ={}, profiles={"general": {"error_streak": {"exec_failure_patterns": ["("]}}}
        )
    with pytest.raises(ConfigError):
        load_config(environ={}, profiles={"general": {"replay_cycle": {"max_gap": 1}}})


# -- failure_density ------------------------------------------------------------------------


def _rabbit_hole(n):
    """Failing installs, each few calls interrupted by a trivial call that works."""
    calls = []
    for i in range(n):
        if i % 4 == 3:
            calls.append(("bash", {"command": f"ls -F dir{i}"}, f"file{i}\n"))
        else:
            calls.append(("bash", {"command": f"apt-get install pkg{i}"}, "\nEXECUTION TIMED OUT"))
    return calls


def density_session(profile: str = "coding", **density):
    """A session with ``same_error`` off: the synthetic failures below repeat one output,
    which ``same_error`` reports first; these tests are about the density rule."""
    body = {"same_error": {"enabled": False}}
    if density:
        body["failure_density"] = density
    return session(profile, profiles={profile: body})


def test_failure_density_terms_on_failures_with_trivial_successes_in_between():
    s = density_session()  # 11 of 16
    fired = feed(s, _rabbit_hole(20))
    assert terms(fired) == [(13, Dimension.ERROR_STREAK)]
    text = next(t for step, dim, level, t in fired if level is Level.TERM)
    assert text.startswith("failure_density: 11 of the last 14 calls failed")
    # the consecutive streak never gets past 3 here
    assert not [f for f in fired if not f[3].startswith("failure_density")]


def test_failure_density_general_profile_eight_of_twelve():
    s = density_session("general")
    fired = feed(s, _rabbit_hole(12))
    assert terms(fired) == [(9, Dimension.ERROR_STREAK)]


def test_failure_density_a_successful_edit_starts_the_count_over():
    s = session("coding")
    calls = _rabbit_hole(12)
    calls.append(("edit", {"args": "1:1\nfix"}, "[File: a.java (3 lines total)]"))
    calls += _rabbit_hole(12)
    assert terms(feed(s, calls), "failure_density") == []


def test_failure_density_leaves_consecutive_failures_to_the_error_streak():
    s = density_session()
    calls = [
        ("bash", {"command": f"apt-get install p{i}"}, "E: Unable to locate") for i in range(12)
    ]
    fired = feed(s, calls)
    assert not [f for f in fired if f[3].startswith("failure_density")]
    assert terms(fired) == [(11, Dimension.ERROR_STREAK)]  # the plain error streak, term 12


def test_failure_density_silent_when_most_calls_work():
    s = density_session()
    calls = []
    for i in range(40):  # tests fail every other call while the code changes
        calls.append(
            ("bash", {"command": f"python t.py {i}"}, "Traceback (most recent call last):")
        )
        calls.append(("bash", {"command": f"cat f{i}"}, f"content {i}"))
    assert terms(feed(s, calls)) == []


def test_failure_density_is_configurable_and_can_be_disabled():
    s = density_session(enabled=False)
    assert terms(feed(s, _rabbit_hole(30))) == []
    s = density_session(window=8, warn=4, term=6)
    assert terms(feed(s, _rabbit_hole(8))) == [(6, Dimension.ERROR_STREAK)]


def test_failure_density_self_heal_resets_its_window():
    s = density_session()
    feed(s, _rabbit_hole(15))
    s.reset(Dimension.ERROR_STREAK)
    fired = feed(s, _rabbit_hole(10))
    assert terms(fired) == []


def test_failure_density_knobs_validate():
    from otel_cycleguard.config import ConfigError

    with pytest.raises(ConfigError):
        load_config(environ={}, profiles={"coding": {"failure_density": {"window": 8, "term": 9}}})
    with pytest.raises(ConfigError):
        load_config(environ={}, profiles={"coding": {"failure_density": {"warn": 9, "term": 8}}})
    with pytest.raises(ConfigError):
        load_config(environ={}, profiles={"coding": {"failure_density": {"window": 1}}})


_FAILURE_EXAMPLES = [
    "bash: foo: command not found",
    "cat: x.txt: No such file or directory",
    "bash: syntax error near unexpected token `)'",
    "Traceback (most recent call last):",
    "E: Unable to locate package foo",
    "EXECUTION TIMED OUT after 60s",
    "mysql: unrecognized service",
    'No matches found for "needle" in /repo',
    "dpkg-query: no packages found matching openjdk",
    "WARNING: Package(s) not found: requests",
]


def test_each_default_failure_pattern_matches_its_example_in_the_core_as_in_re():
    import re

    from otel_cycleguard._core import default_failure

    from otel_cycleguard.config import DEFAULT_EXEC_FAILURE_PATTERNS

    assert len(_FAILURE_EXAMPLES) == len(DEFAULT_EXEC_FAILURE_PATTERNS)
    for pattern, example in zip(DEFAULT_EXEC_FAILURE_PATTERNS, _FAILURE_EXAMPLES, strict=True):
        assert re.search(pattern, example, re.M), (pattern, example)
        assert default_failure(example)
        assert default_failure(f"ok\n{example}\nmore") == bool(
            re.search(pattern, f"ok\n{example}\nmore", re.M)
        )


_FAILURE_PIECES = [
    *_FAILURE_EXAMPLES, "\n", " ", "\r", "\t", "/bin/", "/bin/sh", "/bin/bash", "zsh", "sh: ",
    "line ", "12", "\u0663", ": ", ":", "x", "é", "sudo: ", "bash: ", " command not found",
    "command not found", ": No such file or directory", "syntax error", " at line",
    ": unexpected", "E:", "E: ", "Traceback (most recent call last)", ": unrecognized service",
    "No matches found for", "\u00a0", "\x1c",
]  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_FAILURE_PIECES), max_size=12).map("".join))
def test_the_cores_failure_scan_is_the_default_patterns_search(text):
    # the built-in patterns (settings.py) stay the reference of the core's scans (failures.rs)
    import re

    from otel_cycleguard._core import default_failure

    from otel_cycleguard.config import DEFAULT_EXEC_FAILURE_PATTERNS

    joined = re.compile("|".join(f"(?:{p})" for p in DEFAULT_EXEC_FAILURE_PATTERNS), re.M)
    assert default_failure(text) == bool(joined.search(text))


# -- failed look-ups (a search that finds nothing) ------------------------------------------


@pytest.mark.parametrize(
    "command, result",
    [
        ("find / -name javac 2>/dev/null", ""),
        ("find /usr -type d -name 'jdk*'", "  \n"),
        ("cd /repo && grep -rn needle src", ""),
        ("printenv | grep JAVA", ""),
        ("find / -name '*.jar' | head -5", ""),
        ("find . -name '*.py' | xargs grep -l needle", ""),
        ("which javac", ""),
        ("sudo /usr/bin/whereis java", "java:"),
        ("command -v mvn", ""),
        ("apt-cache search openjdk", ""),
        ("find / -name javac", "<returncode>0</returncode>\n<output>\n</output>"),
    ],
)
def test_empty_look_up_is_a_failed_search(command, result):
    assert refine_failure("bash", "exec", {"command": command}, result, False, cfg()) is True


@pytest.mark.parametrize(
    "command, result",
    [
        ("find / -name javac 2>/dev/null", "/usr/lib/jvm/bin/javac"),  # found something
        ("whereis java", "java: /usr/bin/java"),
        ("export PATH=$PATH:/opt/jdk/bin", ""),  # not a look-up: silence is success
        ("grep -q needle file.txt", ""),  # quiet by design
        ("grep needle a.txt > hits.txt", ""),  # output redirected away
        ("find . -name '*.pyc' -delete", ""),  # an action, not a search
        ("printenv", ""),
        ("find . -name x; echo done", "done"),
        ("sed -i s/a/b/ f.txt", "<returncode>0</returncode>\n<output>\n</output>"),
        ("grep -rn needle src", "<returncode>1</returncode>\n<output>\n</output>"),
    ],
)
def test_non_empty_or_non_look_up_output_is_no_failure(command, result):
    assert refine_failure("bash", "exec", {"command": command}, result, False, cfg()) is False


def test_empty_search_tool_result_fails_and_lookups_can_be_turned_off():
    assert refine_failure("search_dir", "search_dir", {"args": "x"}, "", False, cfg()) is True
    assert refine_failure("grep", "grep", {"args": "x"}, "  \n", False, cfg()) is True
    assert refine_failure("grep", "grep", {"args": "x"}, "a.py:1: x", False, cfg()) is False
    off = cfg(profiles={"coding": {"error_streak": {"empty_result_lookups": []}}})
    assert refine_failure("search_dir", "search_dir", {"args": "x"}, "", False, off) is False
    find = {"command": "find / -name javac"}
    assert refine_failure("bash", "exec", find, "", False, off) is False


def test_a_hunt_of_empty_finds_builds_an_error_streak():
    s = session("coding")
    dirs = ["/usr", "/opt", "/etc", "/bin", "/lib", "/home", "/var", "/sbin", "/tmp", "/srv"]
    calls = [("bash", {"command": f"find {d} -name java 2>/dev/null"}, "") for d in dirs * 2]
    fired = feed(s, calls)
    # the third empty find is the third time the same (empty) failure comes back
    assert terms(fired)[0] == (2, Dimension.ERROR_STREAK)
    assert next(t for *_, lv, t in fired if lv is Level.TERM).startswith("same_error")
    s = density_session()
    assert terms(feed(s, calls))[0] == (11, Dimension.ERROR_STREAK)  # failure_density


# -- recurring_failure ----------------------------------------------------------------------


def _edit_and_rerun(laps, same_error=True):
    """[edit, run] and [edit, edit, run] laps in turn (the distance changes: no replay cycle)."""
    calls = []
    for i in range(laps):
        for j in range(1 + i % 2):
            edit = {"args": f"{i}:{i + j}\nattempt number {i}.{j} at a fix"}
            calls.append(("edit", edit, f"edited {i}.{j}"))
        error = "javac: command not found" if same_error else f"Foo.java:{i}: error {i}"
        calls.append(("bash", {"command": "javac Foo.java"}, error, True))
    return calls


def test_recurring_failure_edit_then_same_failing_run_terms():
    s = session("coding")
    fired = feed(s, _edit_and_rerun(8))
    # runs at 1, 4, 6, 9, 11, 14: the sixth failure within 24 calls is the TERM
    assert terms(fired, "recurring_failure") == [(14, Dimension.IDENTICAL_CALL)]
    assert terms(fired, "recurring_failure") == [(14, Dimension.IDENTICAL_CALL)]
    text = next(t for _, _, lv, t in fired if lv is Level.TERM and t.startswith("recurring"))
    assert "6 times" in text and "last 24 calls" in text


def test_recurring_failure_silent_when_the_error_changes():
    s = session("coding")
    fired = feed(s, _edit_and_rerun(10, same_error=False))
    assert terms(fired, "recurring_failure") == []


def test_recurring_failure_silent_when_recurrences_are_far_apart():
    s = session("coding")
    calls = []
    for i in range(8):
        calls.append(("bash", {"command": "make"}, "make: *** [all] Error 1", True))
        calls += [("bash", {"command": f"cat file{i}_{j}.c"}, f"body {i} {j}") for j in range(4)]
    fired = feed(s, calls)  # one failure every 5 calls: 4 in any 24 calls < 6
    assert terms(fired, "recurring_failure") == []
    assert not [f for f in fired if f[3].startswith("recurring_failure")] or all(
        f[2] is Level.WARN for f in fired if f[3].startswith("recurring_failure")
    )


def test_recurring_failure_leaves_consecutive_repeats_to_repeated_failure():
    s = session("coding")
    calls = [("bash", {"command": "javac Foo.java"}, "javac: command not found", True)] * 6
    fired = feed(s, calls)
    assert [f for f in fired if f[3].startswith("recurring_failure")] == []
    assert terms(fired, "repeated_failure") == [(2, Dimension.IDENTICAL_CALL)]
    assert [f for f in fired if f[3].startswith("same_error")] == []  # one identical streak


def test_recurring_failure_general_profile_five_of_twenty_and_can_be_disabled():
    s = session("general")
    fired = feed(s, _edit_and_rerun(6))
    assert terms(fired, "recurring_failure") == [(11, Dimension.IDENTICAL_CALL)]
    off = session("coding", profiles={"coding": {"recurring_failure": {"enabled": False}}})
    assert terms(feed(off, _edit_and_rerun(10)), "recurring_failure") == []


def test_recurring_failure_self_heal_resets_its_window():
    calls = _edit_and_rerun(6)  # runs at 1, 4, 6, 9, 11, 14: WARN at 9, TERM at 11
    s = session("general")
    fired = feed(s, calls[:7])
    s.reset(Dimension.IDENTICAL_CALL)  # forgets the runs at 1, 4 and 6
    fired += feed(s, calls[7:])
    assert [f for f in fired if f[3].startswith("recurring_failure")] == []
    unhealed = session("general")
    assert terms(feed(unhealed, calls), "recurring_failure") == [(11, Dimension.IDENTICAL_CALL)]


def test_recurring_failure_knobs_validate():
    from otel_cycleguard.config import ConfigError

    for bad in ({"warn": 6, "term": 5}, {"window": 4, "term": 5}, {"term": 1}):
        with pytest.raises(ConfigError):
            load_config(environ={}, profiles={"general": {"recurring_failure": bad}})
    cfg_ = load_config(environ={}, profile="coding")
    assert cfg_.profiles["coding"].recurring_failure.term == 6


# -- same_error -----------------------------------------------------------------------------


def _same_wall(n):
    """Different commands (the prose changes every turn) failing with the same shell error."""
    return [
        ("bash", {"command": f"DISCUSSION\nattempt {i}: let's try '{i}"}, "syntax error: EOF", True)
        for i in range(n)
    ]


def test_same_error_from_different_calls_terms_at_the_third():
    s = session("coding")
    fired = feed(s, _same_wall(5))
    assert terms(fired) == [(2, Dimension.ERROR_STREAK)]
    text = next(t for *_, lv, t in fired if lv is Level.TERM)
    assert text.startswith("same_error: the same (masked) error came back 3 times")


def test_same_error_general_profile_five_of_sixteen_with_a_warn_at_four():
    s = session()
    fired = feed(s, _same_wall(6))
    assert terms(fired, "same_error") == [(4, Dimension.ERROR_STREAK)]
    assert [(st, lv) for st, _, lv, t in fired if t.startswith("same_error")] == [
        (3, Level.WARN),
        (4, Level.TERM),
    ]


def test_same_error_silent_when_the_errors_differ():
    s = session("coding")
    calls = [
        ("bash", {"command": f"python t{i}.py"}, f"NameError: name 'x{chr(97 + i)}'", True)
        for i in range(6)
    ]
    assert terms(feed(s, calls), "same_error") == []


def test_same_error_a_successful_edit_starts_the_count_over():
    s = session("coding")
    calls = []
    for i in range(4):  # fix, re-run, the same assertion fails: iteration, not a wall
        calls.append(("edit", {"args": f"{i}:{i}\nfix {i}"}, "File updated."))
        calls.append(("bash", {"command": f"pytest -k case{i}"}, "AssertionError", True))
        calls.append(("bash", {"command": f"pytest -k other{i}"}, "AssertionError", True))
    assert terms(feed(s, calls)) == []


def test_same_error_an_exec_call_that_edits_files_is_progress():
    calls = []
    for i in range(4):
        calls.append(("bash", {"command": f"sed -i 's/a{i}/b{i}/' src/x.py"}, ""))
        calls.append(("bash", {"command": f"python repro.py --case {i}"}, "AssertionError", True))
        calls.append(("bash", {"command": f"python repro.py --more {i}"}, "AssertionError", True))
    assert terms(feed(session("coding"), calls)) == []
    off = session("coding", profiles={"coding": {"failure_density": {"progress_commands": False}}})
    assert terms(feed(off, calls), "same_error") == [(4, Dimension.ERROR_STREAK)]


def _slip_then_fix(terms_):
    """A search tool given a bare file name fails with one usage error; the next call, the same
    tool with the full path, works. Each search looks for something new."""
    calls = []
    for term in terms_:
        calls.append(("search_file", {"args": f"{term} Foo.java"}, "Error: file not found", True))
        calls.append(("search_file", {"args": f"{term} /src/Foo.java"}, f"2 matches for {term}"))
    return calls


def test_same_error_forgets_a_failure_the_next_call_of_the_same_tool_corrects():
    s = session("coding")
    assert terms(feed(s, _slip_then_fix(["alpha", "beta", "gamma", "delta", "omega"]))) == []


def test_same_error_still_counts_a_wall_that_other_successful_calls_walk_around():
    calls = []
    for i in range(3):  # the same error from a new command each time, a look-around in between
        calls.append(("search_file", {"args": f"term{i} Foo.java"}, "Error: file not found", True))
        calls.append(("open", {"args": f"src/Other{i}.java"}, f"file {i}"))
    assert terms(feed(session("coding"), calls), "same_error") == [(4, Dimension.ERROR_STREAK)]


def test_same_error_a_shell_retry_corrects_only_the_same_command_and_first_argument():
    timeout = "EXECUTION TIMED OUT"
    wall = []
    for i in range(3):  # install times out; a different apt-get subcommand working fixes nothing
        wall.append(("bash", {"command": "apt-get install -y default-jdk"}, timeout, True))
        wall.append(("bash", {"command": f"apt-get update -q{i}"}, f"Reading lists {i}"))
    assert terms(feed(session("coding"), wall), "same_error") == [(4, Dimension.ERROR_STREAK)]
    slips = []
    for i in range(3):  # the same install, corrected right away each time
        slips.append(("bash", {"command": f"pip install pkg{i}=1"}, "Invalid requirement", True))
        slips.append(("bash", {"command": f"pip install pkg{i}==1"}, f"Installed pkg{i}"))
    assert terms(feed(session("coding"), slips), "same_error") == []


def test_same_error_leaves_one_streak_of_the_identical_call_to_repeated_failure():
    s = session("coding")
    fired = feed(s, [("bash", {"command": "mvn test"}, "mvn: command not found", True)] * 4)
    assert [f for f in fired if f[3].startswith("same_error")] == []
    assert terms(fired, "repeated_failure") == [(2, Dimension.IDENTICAL_CALL)]


def test_same_error_is_configurable_can_be_disabled_and_self_heal_resets_it():
    s = session("coding", profiles={"coding": {"same_error": {"enabled": False}}})
    assert terms(feed(s, _same_wall(6)), "same_error") == []
    s = session("coding", profiles={"coding": {"same_error": {"warn": 4, "term": 5}}})
    assert terms(feed(s, _same_wall(6)), "same_error") == [(4, Dimension.ERROR_STREAK)]
    s = session("coding")
    feed(s, _same_wall(2))
    s.reset(Dimension.ERROR_STREAK)
    assert terms(feed(s, _same_wall(2)), "same_error") == []


def test_same_error_knobs_validate():
    from otel_cycleguard.config import ConfigError

    with pytest.raises(ConfigError, match="same_error"):
        load_config(environ={}, profiles={"coding": {"same_error": {"window": 4, "term": 5}}})
    with pytest.raises(ConfigError, match="same_error"):
        load_config(environ={}, profiles={"coding": {"same_error": {"warn": 4, "term": 3}}})
