"""What the guard does not know is not evidence: detection on harnesses it was never tuned on.

Real-shaped cases for each principle of docs/detection.md ("Unknown harnesses"): a one-tool
shell harness exploring a build, an editor tool's ``view`` calls over one file, an edit ->
same script -> same output lap, a rejected-format streak, failing searches in a short run and
a retry that succeeds.
"""

from __future__ import annotations

from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.detect import Detector, ModelTurn, ToolCall
from otel_cycleguard.detect.categories import ACTION, EXPLORATION, Categorizer
from otel_cycleguard.detect.signals import Dimension, Level, Signal


def session(profile: str = "general"):
    return Detector(CycleGuardConfig(profile=profile)).session("s")


def feed(s, calls) -> list[Signal]:
    out: list[Signal] = []
    for tool, args, result, *rest in calls:
        out += s.observe_tool_call(ToolCall(tool, args, result, error=bool(rest and rest[0])))
    return out


def terms(signals: list[Signal]) -> list[tuple[int | None, str]]:
    return [(s.step, s.rule) for s in signals if s.level is Level.TERM]


# -- unknown tools ----------------------------------------------------------------------------


def test_a_tool_seen_nowhere_is_an_unknown_action():
    kind = Categorizer().classify("issue", {"title": "build fails"})
    assert (kind.category, kind.known) == (ACTION, False)


def test_a_long_streak_of_an_unknown_tool_warns_but_never_terminates():
    s = session()
    calls = [("issue", {"note": f"finding {n}"}, f"recorded {n}") for n in range(60)]
    fired = [x for x in feed(s, calls) if x.dimension is Dimension.CATEGORY_STREAK]
    assert [x.level for x in fired] == [Level.WARN]


def test_a_configured_override_still_terminates_an_unknown_tool():
    config = CycleGuardConfig.model_validate(
        {
            "profiles": {
                "general": {
                    "category_streak": {"tool_overrides": {"issue": {"warn": 3, "term": 5}}}
                }
            }
        }
    )
    s = Detector(config).session("s")
    calls = [("issue", {"note": f"finding {n}"}, f"recorded {n}") for n in range(5)]
    assert (4, "category_streak") in terms(feed(s, calls))


def test_a_tool_given_one_command_line_is_a_shell_whatever_its_name():
    categorizer = Categorizer()
    install = categorizer.classify("command", {"command": "pip install -e ."})
    listing = categorizer.classify("command", {"command": "ls -la /src"})
    assert (install.canonical, install.category, install.known) == ("exec", ACTION, True)
    assert (listing.canonical, listing.category) == ("exec", EXPLORATION)
    # a command line passed as a JSON string, under another key
    assert categorizer.classify("runner", '{"cmd": "make -j2"}').canonical == "exec"


def test_a_one_tool_shell_harness_exploring_a_build_is_not_terminated():
    """An environment-setup agent whose only tool is `command`: forty calls of exploring,
    installing and building, failing often but each failure different."""
    s = session()
    calls = []
    for n in range(20):
        calls.append(("command", {"command": f"cat setup_{n}.cfg"}, f"[section{n}]\nkey = {n}"))
        calls.append(
            (
                "command",
                {"command": f"pip install package-{chr(97 + n)}"},
                f"ERROR: No matching distribution found for package-{chr(97 + n)}",
                True,
            )
        )
    assert terms(feed(s, calls)) == []


def test_a_shell_harness_hitting_the_same_wall_is_still_caught():
    s = session()
    calls = []
    for n in range(10):
        calls.append(("command", {"command": f"echo attempt {n}"}, f"attempt {n}"))
        calls.append(
            ("command", {"command": f"make target{n}"}, "make: *** No rule to make target", True)
        )
    assert any(rule in ("same_error", "failure_density") for _, rule in terms(feed(s, calls)))


# -- sub-commands ------------------------------------------------------------------------------


def test_an_editor_view_is_a_read_and_its_str_replace_an_edit():
    categorizer = Categorizer()
    view = categorizer.classify("str_replace_editor", {"command": "view", "path": "/r/a.py"})
    edit = categorizer.classify(
        "str_replace_editor", {"command": "str_replace", "path": "/r/a.py", "old_str": "x"}
    )
    assert (view.canonical, view.category) == ("view", EXPLORATION)
    assert (edit.canonical, edit.category) == ("edit", ACTION)


def test_viewing_one_file_at_many_line_ranges_is_not_a_duplicated_edit():
    s = session("coding")
    calls = [
        (
            "str_replace_editor",
            {"command": "view", "path": "/repo/src/module.py", "view_range": [n * 40, n * 40 + 40]},
            f"lines {n * 40} to {n * 40 + 40} of module.py: def f{n}(): ...",
        )
        for n in range(12)
    ]
    assert [x for x in feed(s, calls) if x.rule == "near_duplicate_edit"] == []


# -- progress is new information -----------------------------------------------------------------


def test_a_streak_of_new_errors_is_exploration_not_a_loop():
    s = session()
    calls = [
        (
            "bash",
            {"command": f"python -c 'import mod{n}'"},
            f"ModuleNotFoundError: mod{chr(97 + n)}",
            True,
        )
        for n in range(12)
    ]
    fired = [x for x in feed(s, calls) if x.dimension is Dimension.ERROR_STREAK]
    assert Level.WARN in [x.level for x in fired]
    assert terms(fired) == []


def test_the_same_error_again_and_again_is_a_loop():
    s = session()
    calls = [
        (
            "bash",
            {"command": f"python run.py --attempt {n}"},
            f"Error at line {n}: bad config",
            True,
        )
        for n in range(8)
    ]
    # the line number differs, the error does not: stale failures, TERM at the eighth
    assert (7, "error_streak") in terms(feed(s, calls))


def test_an_install_that_goes_through_is_progress_for_failure_density():
    s = session()
    calls = []
    for n in range(6):
        calls.append(("bash", {"command": "python setup.py build"}, "error: missing header", True))
        calls.append(("bash", {"command": "ls"}, "setup.py src"))
        calls.append(("bash", {"command": "python setup.py build"}, "error: missing header", True))
        calls.append(
            ("bash", {"command": f"apt-get install -y libdev{n}"}, f"Setting up libdev{n}")
        )
    assert [x for x in feed(s, calls) if x.rule == "failure_density"] == []


# -- edits that change nothing observable -----------------------------------------------------------


def _edit_and_check(rounds: int, output) -> list:
    calls = []
    for n in range(rounds):
        new = f"    return compute(x, attempt={n})\n"
        calls.append(
            (
                "str_replace_editor",
                {"command": "str_replace", "path": "/r/fix.py", "new_str": new},
                "ok",
            )
        )
        calls.append(("execute_bash", {"command": "python reproduce.py"}, output(n)))
    return calls


def test_edit_same_script_same_output_laps_terminate():
    s = session()
    fired = feed(s, _edit_and_check(6, lambda n: "AssertionError: expected 3, got 2"))
    assert terms(fired)[0] == (7, "edit_without_effect")  # the fourth run with that output
    assert all(
        x.dimension is Dimension.TOOL_PATTERN for x in fired if x.rule == "edit_without_effect"
    )


def test_edit_then_test_then_a_new_failure_is_normal_iteration():
    s = session()
    fired = feed(s, _edit_and_check(8, lambda n: f"AssertionError: case {chr(97 + n)} failed"))
    assert [x for x in fired if x.rule == "edit_without_effect"] == []


# -- failed model turns ----------------------------------------------------------------------------


def test_a_rejected_format_streak_feeds_the_error_streak():
    s = session()
    fired: list[Signal] = []
    for n in range(8):
        fired += s.observe_model_turn(
            ModelTurn(
                text=f"I will now run two commands (try {n})",
                error=True,
                error_text=f"format_error: provide exactly one action, got {n % 3 + 2}",
            )
        )
    error = [x for x in fired if x.dimension is Dimension.ERROR_STREAK]
    assert [(x.level, x.model_turn_index) for x in error] == [(Level.WARN, 4), (Level.TERM, 7)]


def test_a_successful_turn_does_not_break_the_streak_but_a_working_call_does():
    s = session()
    for _ in range(4):
        s.observe_model_turn(ModelTurn(error=True, error_text="format_error: one block"))
        s.observe_model_turn(ModelTurn(text="thinking about it"))
    assert s.counters()["error_streak"] == 4
    s.observe_tool_call(ToolCall("bash", {"command": "ls"}, "a b"))
    assert s.counters()["error_streak"] == 0


# -- short runs and retries ------------------------------------------------------------------------


def test_six_failing_searches_in_a_six_step_run_terminate_in_time():
    s = session()
    calls = [
        ("Search", {"entity": f"Entity {n}"}, f"Could not find Entity {n}. Similar: []", True)
        for n in range(6)
    ]
    assert terms(feed(s, calls)) == [(4, "failed_lookups")]


def test_a_retry_that_succeeds_after_four_errors_is_not_terminated():
    """tau-bench: a booking retried four times with an error, then it goes through."""
    s = session()
    calls = [
        (
            "book_reservation",
            {"flight": "HAT001", "try": n},
            "Error: payment method not found",
            True,
        )
        for n in range(4)
    ]
    calls.append(("book_reservation", {"flight": "HAT001", "try": 4}, '{"reservation": "X1"}'))
    calls += [("get_reservation_details", {"id": "X1"}, '{"status": "booked"}')]
    assert terms(feed(s, calls)) == []


def test_every_signal_names_its_rule():
    s = session()
    fired = feed(s, [("grep", {"q": "x"}, "nothing")] * 5)
    assert {x.rule for x in fired} <= {"identical_call", "replay_cycle", "tool_pattern"}
    assert all(x.as_attributes()["cycleguard.rule"] == x.rule for x in fired)


def test_a_here_document_body_is_not_read_as_an_install_or_a_build():
    from otel_cycleguard.detect.categories import changes_environment, edits_files

    script = {"command": "cat <<'EOF' > setup.sh\npip install -e .\nmake\nEOF"}
    assert edits_files(script) and not changes_environment(script)
    assert changes_environment({"command": "cd src && make -j2"})


# -- a look that answers differently is new information -------------------------------------


def _status_and_sleep(progress: list[str]) -> list:
    calls = []
    for value in progress:
        calls.append(("get_job_status", {"job_id": "etl-7"}, f'{{"state": "{value}"}}'))
        calls.append(("sleep", {"seconds": 30}, "slept 30s"))
    return calls


def test_a_status_check_whose_answer_keeps_changing_is_not_a_repeated_lap():
    """Check, wait, check again: the job moves on every time, so the laps are progress."""
    stages = ["queued", "running 5%", "running 29%", "running 41%", "running 58%"]
    stages += ["running 73%", "running 88%", "running 97%", "writing output"]
    signals = feed(session(), _status_and_sleep(stages))
    assert [s for s in signals if s.dimension is Dimension.TOOL_PATTERN] == []


def test_a_status_check_that_never_changes_is_still_a_repeated_lap():
    signals = feed(session(), _status_and_sleep(["running 41%"] * 9))
    assert (9, "tool_pattern") in terms(signals)


def test_sleeping_between_status_checks_that_move_on_is_not_a_poll_without_progress():
    """``sleep`` answers the same every time; the status checks around it are what count."""
    stages = [f"running {pct}%" for pct in range(2, 100, 4)]  # 25 checks, 25 sleeps
    signals = feed(session(), _status_and_sleep(stages))
    assert [s for s in signals if s.dimension is Dimension.POLL_NO_PROGRESS] == []


def test_a_status_check_that_never_moves_is_a_poll_without_progress():
    signals = feed(session(), [("get_job_status", {"job_id": "etl-7"}, "running 41%")] * 20)
    assert (19, "poll_no_progress") in terms(signals)  # the 20th check (steps count from 0)


# -- new information: answers the session has not seen ----------------------------------------


def _page(n: int) -> str:
    return f"Section {n}: " + " ".join(f"word{n}x{k}" for k in range(12))


def test_reading_page_after_page_is_not_a_replayed_lap():
    """A browser agent scrolls (the same confirmation every time) and reads the next part of an
    article: the scroll comes back every lap, but every lap's reading is new."""
    calls = []
    for n in range(12):
        calls.append(("scroll", {"direction": "down"}, "Scrolled down."))
        calls.append(("get_page_text", {}, _page(n)))
    signals = feed(session(), calls)
    assert [s for s in signals if s.rule == "replay_cycle"] == []


def test_answers_seen_a_few_laps_ago_are_not_news():
    """The same search, then one of three files in turn: each file's content differs from the
    previous lap's, but it was all read before, so the laps still count."""
    calls = []
    for n in range(12):
        calls.append(("search", {"query": "AnySetter"}, "3 files match"))
        calls.append(("open", {"path": f"f{n % 3}.java"}, f"class F{n % 3} {{ ... }}"))
    fired = [(s.step, s.level) for s in feed(session(), calls) if s.rule == "replay_cycle"]
    assert fired and fired[-1][1] is Level.TERM


def test_news_in_a_lap_that_fails_again_does_not_stop_the_count():
    """Every lap opens a file not opened before, and then fails the same way again: what it
    read did not get it past the failure."""
    calls = []
    for n in range(10):
        calls.append(("search", {"query": "AnySetter"}, "3 files match"))
        calls.append(("open", {"path": f"f{n}.java"}, f"class F{n} {{ ... }}"))
        calls.append(("search_file", {"args": "x"}, "Usage: search_file <term> [<file>]", True))
    assert any(s.rule == "replay_cycle" and s.level is Level.TERM for s in feed(session(), calls))


# -- one-tool harnesses ---------------------------------------------------------------------


def test_a_one_tool_python_agent_running_new_code_is_not_terminated_by_its_streak():
    """A notebook-style agent whose only tool is `python`: it can never switch category, and
    forty different successful cells are work, not a loop."""
    calls = [
        ("python", {"code": f"df.groupby('c{n}').mean()"}, f"c{n}  {n * 3}.5") for n in range(40)
    ]
    fired = [s for s in feed(session(), calls) if s.dimension is Dimension.CATEGORY_STREAK]
    assert [s for s in fired if s.level is Level.TERM] == []


def test_reading_file_after_file_through_a_shell_still_builds_an_exploration_streak():
    """New arguments are progress only for a call that acts: `cat` of one more file is still
    reading, whichever tool runs it."""
    calls = [("bash", {"command": f"cat src/m{n}.py"}, f"# module {n}") for n in range(40)]
    fired = [s for s in feed(session(), calls) if s.dimension is Dimension.CATEGORY_STREAK]
    assert any(s.level is Level.TERM for s in fired)


# -- errors that quote the agent's input -------------------------------------------------------


def _query_error(query: str) -> str:
    return (
        'ERROR:  column "duration" does not exist\n'
        f"LINE 1: {query[:60]}...\n"
        f"{' ' * (8 + query.find('duration'))}^\n"
        'HINT:  Perhaps you meant to reference the column "web_sessions.duration_ms".'
    )


def test_a_database_error_quoting_each_rewritten_query_is_the_same_error():
    """The agent rewrites its query every time; the database quotes it back and fails the same
    way. The quoted line is the agent's own input, not news: the error is the same wall."""
    queries = [
        "SELECT utm_source, AVG(duration) FROM web_sessions GROUP BY utm_source",
        "SELECT utm_source, AVG(duration) AS avg_dur FROM web_sessions GROUP BY utm_source",
        "SELECT s.utm_source, AVG(s.duration) FROM web_sessions s GROUP BY s.utm_source",
        "select utm_source, avg(duration) from web_sessions group by utm_source limit 50",
        "SELECT utm_source, AVG(duration) FROM public.web_sessions GROUP BY 1 ORDER BY 2",
    ]
    calls = [("run_query", {"sql": q}, _query_error(q), True) for q in queries]
    assert (4, "same_error") in terms(feed(session(), calls))


def test_errors_that_name_different_arguments_stay_different():
    """`No such file: a.py` and `No such file: b.py` share one argument word each, not three
    quarters of their words: they are different errors, as before."""
    calls = [
        (
            "bash",
            {"command": f"cat src/{name}.py"},
            f"cat: src/{name}.py: No such file or directory",
        )
        for name in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")
    ]
    fired = feed(session(), calls)
    assert [s for s in fired if s.rule == "same_error"] == []


def test_a_streak_of_unknown_tools_ending_on_a_known_action_is_not_a_term():
    """An email assistant: `list_messages` and `read_message` are tools the guard does not
    know (they fall into `action`), `send_message` one it knows. Triaging thirty messages is one
    long streak of one category, but only its ten replies are evidence the guard can judge."""
    calls = []
    for n in range(10):
        calls.append(("list_messages", {"folder": "INBOX", "page": n}, f"{n}: 3 unread"))
        calls.append(("read_message", {"id": f"m{n}"}, f"From: a{n}@example.com\nHi {n}"))
        calls.append(("send_message", {"to": f"a{n}@example.com", "body": f"Re {n}"}, "sent"))
    fired = [s for s in feed(session(), calls) if s.dimension is Dimension.CATEGORY_STREAK]
    assert fired and [s.level for s in fired] == [Level.WARN]


def test_a_streak_of_known_actions_still_terminates():
    calls = [("send_message", {"to": f"a{n}@example.com"}, "sent") for n in range(25)]
    assert (24, "category_streak") in terms(feed(session(), calls))


# -- ids and ages that change on every answer -------------------------------------------------


def _booking(request_id: str, checked_at: str) -> str:
    return (
        '{"booking_ref": "HV2L9M", "status": "PENDING", "updated_at": "2023-11-14T22:13:34Z", '
        f'"checked_at": "{checked_at}", "request_id": "req_{request_id}"}}'
    )


def test_a_booking_polled_with_a_new_prefixed_request_id_each_time_is_the_same_answer():
    # an API's ids carry a prefix (req_, off_, msg_): the hex after the underscore is masked
    s = session()
    ids = ["0a909219a73a", "9991d697bacd", "0049d06090df", "6ebdb725be1b", "0a21f8443df2"]
    ids += ["ed6de30e1653", "dba05fec3e1a", "ad40c96ae1d3", "fe5931a5e28c", "c42ffefbbd21"]
    calls = [
        ("get_booking", {"booking_ref": "HV2L9M"}, _booking(i, f"2023-11-14T22:{14 + n:02d}:56Z"))
        for n, i in enumerate(ids)
    ]
    assert any(rule == "identical_call" for _, rule in terms(feed(s, calls)))


def test_bookings_whose_status_moves_are_not_the_same_answer():
    s = session()
    statuses = ["AUTHORIZING", "CAPTURED", "PNR_CREATED", "TICKETING", "TICKETED"] * 2
    calls = [
        (
            "get_booking",
            {"booking_ref": "HV2L9M"},
            _booking(f"{n:03d}abcdef9", "2023-11-14T22:14:56Z").replace("PENDING", status),
        )
        for n, status in enumerate(statuses[:5])
    ]
    assert terms(feed(s, calls)) == []


def _pods(age: str) -> str:
    return f"NAME                      READY   STATUS    RESTARTS   AGE\nworker-5c8d7f9b4-x2kqz   0/1     Pending   0          {age}"


def test_a_pod_pending_longer_and_longer_is_the_same_answer_each_time():
    # kubectl prints ages as 1m11s: each part of the compound duration is masked
    s = session()
    calls = []
    for n in range(12):
        seconds = 71 + 22 * n
        calls.append(("sleep", {"seconds": 20}, "slept 20s"))
        calls.append(
            (
                "k8s",
                {"args": ["get", "pods", "-l", "app=worker"]},
                _pods(f"{seconds // 60}m{seconds % 60}s"),
            )
        )
    assert terms(feed(s, calls)) != []


def _lock_error(request_id: str) -> str:
    return (
        "Error: Error acquiring the state lock\n"
        "Error message: operation error DynamoDB: PutItem, https response error\n"
        f"StatusCode: 400, RequestID: {request_id},\n"
        "ConditionalCheckFailedException: The conditional request failed\n"
        "Lock Info:\n  ID:        9f1c3a7e-5d20-b84c-61e9-0a7f2d3c8b51\n  Who:       jenkins@ci-07"
    )


def test_the_same_lock_error_with_a_new_cloud_request_id_each_time_is_the_same_error():
    # AWS request ids are long runs of capitals and digits, not hex: masked as tokens
    s = session()
    ids = [
        "HZBYGNG0AT62833C89YSQKNWLRZRA49HX0LUJ9TLWR85P8OJLUPX",
        "UAHDS1Y237XOYLILOM8GA1AN4CQYN7ADHWKCR3Z9NGGHT3QWJ6LP",
        "6K3CPZH4X5794OXUKG3OVIHEMEGKZUA9LTJVKH6XE44TIYS9GIYY",
        "BKBQIV27KGNVJUCCB4OJ0GSD8HDUP0B19NHX0OJ9BXKIBOCGS6SZ",
    ]
    calls = [
        ("terraform", {"subcommand": "apply", "args": "tfplan"}, _lock_error(i), True) for i in ids
    ]
    assert terms(feed(s, calls)) != []


def _pip_failure(build_dir: str, module: str = "numpy") -> str:
    """pip's failed editable install as it prints it: the build environment's temporary
    directory (tempfile's 8 random characters) in every traceback line."""
    frames = "\n".join(
        f'        File "/tmp/pip-build-env-{build_dir}/overlay/lib/python3.11/site-packages/'
        f'setuptools/build_meta.py", line {line}, in {fn}'
        for line, fn in ((325, "get_requires_for_build_wheel"), (311, "run_setup"))
    )
    return (
        "Obtaining file:///work/sparse-kit\n  Getting requirements to build editable ... error\n"
        f"  error: subprocess-exited-with-error\n{frames}\n"
        f"      ModuleNotFoundError: No module named '{module}'\n[exit code: 1]"
    )


_BUILD_DIRS = ("v3uow3pb", "j11sufm1", "k2b9x0qz", "a7c_4mnd", "q0w9e8r7", "z1y2x3w4")
_PIP_VARIANTS = ("pip install -e .", "python -m pip install -e .", "pip install -v -e .")


def test_an_install_failing_the_same_way_in_a_new_temporary_directory_is_the_same_error():
    # a setup agent re-running the editable install with cosmetic changes: pip builds in a new
    # /tmp/pip-build-env-XXXXXXXX each time, so only the masked name makes the errors one wall
    s = session()
    calls = [
        ("command", {"command": f"{_PIP_VARIANTS[i % 3]} # try {i}"}, _pip_failure(d), True)
        for i, d in enumerate(_BUILD_DIRS)
    ]
    assert (4, "same_error") in terms(feed(s, calls))  # the fifth install


def test_installs_that_fail_on_a_new_missing_module_each_time_are_not_the_same_error():
    s = session()
    modules = ("numpy", "scipy", "cython", "pybind11", "wheel_helper", "meson")
    calls = [
        ("command", {"command": f"{_PIP_VARIANTS[i % 3]} # try {i}"}, _pip_failure(d, mod), True)
        for i, (d, mod) in enumerate(zip(_BUILD_DIRS, modules, strict=True))
    ]
    assert not any(rule == "same_error" for _, rule in terms(feed(s, calls)))


_TABBED = (
    "def parse(spec):\n\thost, _, port = spec.partition(':')\n\tif not port:\n\t\tport = 5432\n"
)


def _no_match(old: str) -> str:
    """An editor tool's answer to an ``old_str`` missing from the file, quoting it back."""
    return (
        f"ERROR:\nNo replacement was performed, old_str `{old}` did not appear verbatim in "
        "/workspace/netcfg/legacy.py."
    )


def _str_replace(old: str, new: str) -> dict:
    return {
        "command": "str_replace",
        "path": "/workspace/netcfg/legacy.py",
        "old_str": old,
        "new_str": new,
    }


def _view() -> tuple:
    return (
        "str_replace_editor",
        {"command": "view", "path": "/workspace/netcfg/legacy.py"},
        _TABBED,
    )


def test_an_old_str_retried_with_other_indentation_on_a_tabbed_file_is_one_failure():
    # the file is indented with tabs; the agent retries the same one-line fix with four, eight
    # and two spaces, a trailing newline, CRLF..., re-viewing the file in between: each error
    # quotes its own old_str back, so only whitespace tells the failures apart
    s = session()
    indents = ("    ", "        ", "  ", "    ", "      ", "   ")
    calls = []
    for n, pad in enumerate(indents):
        old = f"{pad}if not port:\n{pad}{pad}port = 5432" + ("\n" if n % 2 else "")
        calls.append(
            (
                "str_replace_editor",
                _str_replace(old, old.replace("not port", "port is None")),
                _no_match(old),
                True,
            )
        )
        if n % 2:
            calls.append(_view())
    fired = feed(s, calls)
    assert ("recurring_failure", Level.TERM) in [(x.rule, x.level) for x in fired]


def test_different_edits_that_each_miss_the_file_are_not_one_failure():
    # control: the same number of misses, but each old_str says something else
    s = session()
    lines = (
        "if not port:",
        "port = 5432",
        "host = spec",
        "return host, port",
        "if port == 0:",
        "spec.strip()",
    )
    calls = []
    for n, line in enumerate(lines):
        old = f"    {line}"
        calls.append(
            ("str_replace_editor", _str_replace(old, old + "  # fixed"), _no_match(old), True)
        )
        if n % 2:
            calls.append(_view())
    assert not any(x.rule == "recurring_failure" for x in feed(s, calls))
