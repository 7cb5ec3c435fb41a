"""The compiled categories (rust/cycleguard-core: categories.rs, shell.rs, args.rs) against the
Python reference (detect/categories.py), on generated command lines, tool names and argument
shapes. benchmarks/differential.py does the same over every call of the corpus.
"""

from __future__ import annotations

import json
import shlex
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_cycleguard import _core
from otel_cycleguard.detect import categories
from otel_cycleguard.detect.categories import Categorizer

# -- Python's character classes beyond ASCII -----------------------------------------------


@pytest.mark.skipif(
    unicodedata.unidata_version != _core.UNICODE_VERSION,
    reason="the core's tables follow another Unicode version (scripts/gen_core_tables.py)",
)
@pytest.mark.parametrize("name", ["alnum", "decimal"])
def test_the_cores_classes_are_pythons(name):
    test = {"alnum": str.isalnum, "decimal": str.isdecimal}[name]
    assert _core._class_chars(name) == "".join(
        c for c in map(chr, range(sys.maxunicode + 1)) if test(c)
    )


# -- command lines -------------------------------------------------------------------------

_WORDS = [
    "cat",
    "ls",
    "grep",
    "egrep",
    "rg",
    "find",
    "head",
    "sed",
    "awk",
    "sort",
    "env",
    "echo",
    "printf",
    "git",
    "status",
    "branch",
    "checkout",
    "apply",
    "diff",
    "log",
    "tee",
    "patch",
    "perl",
    "pip",
    "pip3",
    "python",
    "python3",
    "-m",
    "install",
    "apt-get",
    "update",
    "npm",
    "ci",
    "make",
    "cargo",
    "build",
    "./configure",
    "sudo",
    "time",
    "nohup",
    "!",
    "FOO=1",
    "é=1",
    "/usr/bin/find",
    "-i",
    "-ni",
    "-o",
    "--output=x",
    "--in-place",
    "-exec",
    "-delete",
    "-a",
    "--list",
    "-v",
    "x.py",
    "src/",
    "'a b'",
    '"c d"',
    "'",
    '"',
    "\\",
    "\\ ",
    'a\\"b',
    "٣",
    "file",
    "-n",
    "-rn",
    "q",
    "uv",
    "add",
    "cmake",
    "..",
    "--build",
    "wc",
    "xargs",
]
_SEPS = [
    " ",
    "  ",
    "\t",
    " | ",
    "|",
    " || ",
    " && ",
    "; ",
    " & ",
    " &> ",
    "\n",
    " > ",
    ">",
    " >> ",
    " 2>&1 ",
    " >/dev/null ",
    " > /dev/null",
    " <<EOF\n",
    "\nEOF\n",
    "`",
    "$(",
    ")",
    " < ",
    "\u00a0",
    "\u3000",
    "\x1c",
    "١>",
    " >& ",
    "'",
    '"',
]

# The core reads a lone surrogate as a character of the last private use plane
# (pystr::SURROGATE_BASE); the few real characters there (U+10D800..U+10DFFF) are the one input
# it cannot tell from a surrogate, so the generated text leaves them out.
_TEXT = st.text(
    alphabet=st.characters(exclude_characters=[chr(c) for c in range(0x10D800, 0x10E000)]),
    max_size=20,
)
COMMAND_LINES = (
    st.builds(
        lambda parts: "".join(parts),
        st.lists(st.one_of(st.sampled_from(_WORDS), st.sampled_from(_SEPS)), max_size=14),
    )
    | st.text(alphabet="ab '\"\\|&;>< \n\t=$()`-i", max_size=30)
    | _TEXT
)


def _shapes(line: str) -> list:
    """The argument shapes a command line arrives in."""
    words = line.split()
    return [
        line,
        {"command": line},
        {"cmd": words},
        {"cmd": [*words, 3]},
        {"script": line, "timeout": 5},
        json.dumps({"command": line}),
        "  " + json.dumps({"input": line}) + "\n",
        {"commands": words},
        b"{}",
        None,
    ]


def _shlex(text: str):
    try:
        return shlex.split(text)
    except ValueError:
        return None


@settings(max_examples=1500, deadline=None)
@given(COMMAND_LINES)
def test_command_lines_are_read_as_python_reads_them(line):
    for args in _shapes(line):
        assert _core.edits_files(args) == categories.edits_files(args), args
        assert _core.changes_environment(args) == categories.changes_environment(args), args
        assert _core.command_text(args) == categories.command_text(args), args
        assert _core.readonly_command(args) == categories._is_readonly_command(args), args
    assert _core.command_words(line) == categories.command_words(line)
    for stage in line.split("|"):
        assert _core.shlex_split(stage) == _shlex(stage), stage


def test_the_readings_see_the_shell_syntax():
    # (a guard against checks that agree because both sides say False)
    assert _core.edits_files("cat <<EOF > a.py\nx\nEOF") is True
    assert _core.edits_files({"command": "echo 'a > b'"}) is False
    assert _core.changes_environment('{"command": "python -m pip install x"}') is True
    assert _core.readonly_command({"cmd": ["git", "log", "-n", "3"]}) is True
    assert _core.shlex_split("a 'b") is None


# -- classification ------------------------------------------------------------------------

_TOOLS = st.one_of(
    st.sampled_from(
        [
            "bash",
            "Bash ",
            "exec",
            "shell",
            "python",
            "read_file",
            "cat",
            "edit",
            "write",
            "create",
            "str_replace_editor",
            "process",
            "get_status",
            "job_status",
            "x_poll",
            "wait",
            "send_email",
            "click",
            "unknown_tool",
            "search",
            "FINISH",
            "ÉDIT",
            "run_command",
            "delegate_task",
            "think",
            "t\udc80x",
        ]
    ),
    _TEXT,
)
_SUBCOMMANDS = st.sampled_from(
    ["view", " View ", "str_replace", "CREATE", "undo_edit", "poll", "log", "Status", "read",
     "x" * 33, "insert\n", "", "list_dir", 7, None, "get"]
)  # fmt: skip
_KEYS = st.sampled_from(["command", "action", "operation", "mode", "cmd", "path", "input", "code"])
ARGUMENTS = st.one_of(
    st.dictionaries(_KEYS, st.one_of(_SUBCOMMANDS, COMMAND_LINES, st.lists(st.sampled_from(_WORDS))), max_size=3),
    COMMAND_LINES,
    st.builds(json.dumps, st.dictionaries(_KEYS, st.one_of(_SUBCOMMANDS, COMMAND_LINES), max_size=3)),
    st.sampled_from(
        [
            '{"action": "poll", "x": NaN}', '{"command": "ls", "n": Infinity}', ' {"action": "log"}',
            '{"action": "status"}\u00a0', '\x1c{"command": "cat a"}', '{"command": "\\ud800 ls"}',
            '{"command": "view"} \x1c', b'{"command": "view"}', b"\xff{", '{"a": 1e999}', "[1]",
            '{"mode": "view", "mode": "create"}', None, 42, ["ls"],
        ]
    ),
)  # fmt: skip

CATEGORIZERS = [
    (Categorizer(), _core.Categorizer({}, set(), set())),
    (
        Categorizer({"Click": "exploration", "bash": "exploration", "Edit": "exploration"}, ("FINISH", "unknown_tool"), ("job_status", "Think")),
        _core.Categorizer(
            {"click": "exploration", "bash": "exploration", "edit": "exploration"},
            {"finish", "unknown_tool"},
            {"job_status", "think"},
        ),
    ),
]  # fmt: skip


def _kind(kind) -> tuple:
    return (kind.canonical, kind.category, kind.override_key, kind.is_poll, kind.known)


@settings(max_examples=2000, deadline=None)
@given(_TOOLS, ARGUMENTS, st.sampled_from([None, True, False]))
def test_tools_are_classified_as_python_classifies_them(tool, arguments, read_only):
    for py, rs in CATEGORIZERS:
        assert rs.classify(tool, arguments, read_only) == _kind(
            py.classify(tool, arguments, read_only)
        )


def test_classification_reads_arguments():
    rs = CATEGORIZERS[0][1]
    assert rs.classify("str_replace_editor", {"command": "view", "path": "a"})[1:3] == (
        "exploration",
        "view",
    )
    assert rs.classify("mytool", '{"cmd": "grep -n x a.py"}')[1:3] == (
        "exploration",
        "exec:readonly",
    )
    assert rs.classify("process", '{"action": "poll", "x": NaN}')[3] is True
    assert rs.classify("mytool", {"x": 1})[4] is False
