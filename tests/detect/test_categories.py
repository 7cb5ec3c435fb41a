"""Tool categories by the fallback of docs/detection.md, poll tools, and exec:readonly."""

from __future__ import annotations

import pytest

from otel_cycleguard.config import load_config
from otel_cycleguard.detect import Detector, Dimension, ToolCall
from otel_cycleguard.detect.categories import (
    ACTION,
    EXPLORATION,
    Categorizer,
    command_words,
    edits_files,
)

C = Categorizer()


@pytest.mark.parametrize(
    "tool",
    [
        "read", "grep", "search", "search_files", "find", "list", "ls", "glob", "web_search",
        "fetch", "plan", "memory", "read_file", "READ_FILE", "Grep", "open", "view", "goto",
        "scroll_up", "scroll_down", "find_file", "search_dir", "search_file", "cat",
    ],
)  # fmt: skip
def test_builtin_exploration_tools_and_aliases_case_insensitively(tool):
    assert C.classify(tool).category == EXPLORATION


@pytest.mark.parametrize(
    "tool",
    [
        "edit", "write", "apply_patch", "exec", "delete", "move", "delegate_task", "bash",
        "shell", "terminal", "str_replace_editor", "Bash", "send_email", "send_message",
    ],
)  # fmt: skip
def test_builtin_action_tools_and_aliases(tool):
    assert C.classify(tool).category == ACTION


def test_aliases_share_the_canonical_name_for_overrides():
    assert C.classify("bash").override_key == "exec"
    assert C.classify("str_replace_editor").override_key == "edit"
    assert C.classify("read_file").canonical == "read"


def test_extra_categories_from_config_come_second():
    cat = Categorizer(extra_categories={"Lookup_Customer": "exploration", "refund": "action"})
    assert cat.classify("lookup_customer").category == EXPLORATION
    assert cat.classify("refund").category == ACTION


def test_read_only_metadata_comes_third():
    assert C.classify("query_db", read_only=True).category == EXPLORATION
    assert C.classify("query_db").category == ACTION
    assert Categorizer(read_only_tools=["query_db"]).classify("query_db").category == EXPLORATION


def test_builtin_map_wins_over_read_only_metadata():
    assert C.classify("edit", read_only=True).category == ACTION


def test_extra_categories_win_over_read_only_metadata():
    cat = Categorizer(extra_categories={"query_db": "action"})
    assert cat.classify("query_db", read_only=True).category == ACTION


def test_unknown_tools_default_to_action():
    assert C.classify("frobnicate").category == ACTION
    assert C.classify("").category == ACTION


@pytest.mark.parametrize(
    "tool", ["job_status", "build_poll", "get_result", "wait", "sleep", "CI_STATUS"]
)
def test_poll_tools_are_exploration_of_poll_kind(tool):
    kind = C.classify(tool)
    assert kind.is_poll and kind.category == EXPLORATION


def test_configured_poll_tools():
    assert Categorizer(poll_tools=["check_ci"]).classify("check_ci").is_poll
    assert not C.classify("check_ci").is_poll


@pytest.mark.parametrize(
    ("args", "polls"),
    [
        ({"action": "poll", "id": 1}, True),
        ({"action": "log"}, True),
        ('{"action": "poll"}', True),
        ({"action": "kill"}, False),
        ({"action": "start"}, False),
        (None, False),
        ("not json", False),
    ],
)
def test_process_polls_only_with_poll_or_log_action(args, polls):
    assert C.classify("process", args).is_poll is polls


# -- exec:readonly -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cat src/app.py",
        "ls -la",
        "grep -rn 'def main' src",
        "rg foo | head -20",
        "cat a.py | grep x | wc -l",
        "git status",
        "git diff HEAD~1",
        "git log --oneline -5",
        "git show HEAD:src/a.py",
        "find . -name '*.py'",
        "sed -n '1,20p' a.py",
        "head -50 README.md",
        "pwd",
        "env",
        "env -0",
        "git branch",
        "git branch -a --list",
        "sort a.txt | uniq -c",
    ],
)
def test_read_only_commands_are_exec_readonly_exploration(command):
    for args in ({"command": command}, command, {"cmd": command}):
        kind = C.classify("bash", args)
        assert (kind.category, kind.override_key) == (EXPLORATION, "exec:readonly"), args


@pytest.mark.parametrize(
    "command",
    [
        "cat a > b",
        "grep x a.py >> out.txt",
        "ls; rm -rf build",
        "cd src && ls",
        "ls || true",
        "sed -i 's/a/b/' a.py",
        "sed --in-place 's/a/b/' a.py",
        "find . -name '*.pyc' -delete",
        "find . -exec rm {} \\;",
        "rm -rf build",
        "python -m pytest",
        "git commit -m x",
        "git push",
        "echo $(rm -rf /)",
        "cat `which python`",
        "ls\nrm x",
        "cat 'unbalanced",
        "pip install requests",
        "env rm -rf build",
        "env PYTHONPATH=src python -m pytest",
        "git branch -D main",
        "git branch feature",
        "sort -o out.txt in.txt",
    ],
)
def test_writing_or_compound_commands_are_action(command):
    kind = C.classify("bash", {"command": command})
    assert kind.category == ACTION and kind.override_key == "exec"


def test_exec_readonly_uses_its_own_override_thresholds():
    det = Detector(load_config(environ={}))
    s = det.session("k")
    fired = {}
    for n in range(1, 41):
        for sig in s.observe_tool_call(ToolCall("bash", {"command": f"cat f{n}.py"}, f"t{n}")):
            if sig.dimension is Dimension.CATEGORY_STREAK:
                fired[n] = (sig.level.value, sig.category)
    assert fired == {25: ("warn", "exploration"), 40: ("term", "exploration")}


def test_exec_readonly_override_is_configurable():
    overrides = {"exec:readonly": {"warn": 2, "term": 3}}
    cfg = load_config(
        environ={}, profiles={"general": {"category_streak": {"tool_overrides": overrides}}}
    )
    s = Detector(cfg).session("k")
    fired = []
    for n in range(3):
        fired += s.observe_tool_call(ToolCall("bash", {"command": f"ls d{n}"}, f"t{n}"))
    assert [(x.level.value, x.streak) for x in fired] == [("warn", 2), ("term", 3)]


def test_read_only_exec_after_exploration_continues_the_exploration_streak():
    s = Detector(load_config(environ={})).session("k")
    for n in range(5):
        s.observe_tool_call(ToolCall("read", {"p": n}, "x"))
    s.observe_tool_call(ToolCall("bash", {"command": "git status"}, "clean"))
    assert s.counters()["category_streak"] == 6
    s.observe_tool_call(ToolCall("bash", {"command": "make"}, "built"))
    assert s.counters()["category_streak"] == 1


def test_odd_exec_arguments_do_not_raise():
    for args in (None, 42, {"command": None}, {"command": ["ls", "-la"]}, b"ls", "x" * 10_000):
        assert C.classify("bash", args).category in (EXPLORATION, ACTION)
    assert C.classify("bash", {"command": ["ls", "-la"]}).override_key == "exec:readonly"


# -- edits_files ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "sed -i 's/a/b/' src/x.py",
        "sed -i.bak -e 's/a/b/' x.py",
        "perl -pi -e 's/a/b/' x.py",
        "cat <<'EOF' > repro.py\nprint(1 > 2)\nEOF\npython repro.py",
        'echo "nitpicky = True" >> conf.py',
        "head -n 10 a.py > a.py.new && mv a.py.new a.py",
        "echo nameserver 8.8.8.8 | sudo tee /etc/resolv.conf",
        "patch -p1 < fix.diff",
        "git checkout src/x.py && pytest",
        "cd src; git apply ../fix.patch",
    ],
)
def test_edits_files_recognises_shell_edits(command):
    assert edits_files({"command": command})


@pytest.mark.parametrize(
    "command",
    [
        "sed -n 1,20p src/x.py",
        "javac -cp .:lib/* Test.java",
        'grep "a > b" src/x.py',
        "pytest tests > pytest_output.txt 2>&1",
        "python repro.py 2>&1 | head",
        "find / -name javac 2>/dev/null",
        "ls > /dev/null",
        "git status && git diff",
        "cat <<'EOF' | python\nopen('x', 'w').write('a > b')\nEOF",
    ],
)
def test_edits_files_leaves_reads_runs_and_quoted_text_alone(command):
    assert not edits_files({"command": command})


def test_edits_files_never_raises_on_odd_input():
    for odd in (None, b"sed -i x", 12, {"command": 5}, {"command": ["sed", "-i", "s/a/b/", "f"]}):
        assert edits_files(odd) in (True, False)
    assert edits_files("sed -i s/a/b/ f") is True


def test_command_words_start_at_the_command_that_runs():
    assert command_words("FOO=1 BAR=2 nohup time /usr/bin/find / -name x") == [
        "find",
        "/",
        "-name",
        "x",
    ]
    assert command_words("sudo env A=1 sed -i s/a/b/ f") == ["sed", "-i", "s/a/b/", "f"]
    assert command_words("! grep -q x f") == ["grep", "-q", "x", "f"]
    assert command_words("   ") == []
