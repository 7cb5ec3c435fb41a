"""The compiled categories (rust/cycleguard-core: categories.rs, shell.rs, args.rs) where a
Python reference remains: Python's character classes over every code point and ``shlex.split``
on generated command lines. Until the port's stage 4 they were also compared with the Python
categoriser (then removed) on generated input and on every call of the corpus (827,854
comparisons, 0 differ; see the branch history); tests/detect/test_categories.py holds the
readings to their documented examples.
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
def test_shlex_splits_as_python_does(line):
    for stage in [line, *line.split("|")]:
        assert _core.shlex_split(stage) == _shlex(stage), stage


def test_the_readings_see_the_shell_syntax():
    # (a guard against checks that agree because both sides say False)
    assert _core.edits_files("cat <<EOF > a.py\nx\nEOF") is True
    assert _core.edits_files({"command": "echo 'a > b'"}) is False
    assert _core.changes_environment('{"command": "python -m pip install x"}') is True
    assert _core.readonly_command({"cmd": ["git", "log", "-n", "3"]}) is True
    assert _core.shlex_split("a 'b") is None


# -- classification ------------------------------------------------------------------------


def test_classification_reads_arguments():
    rs = _core.Categorizer({}, set(), set())
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
