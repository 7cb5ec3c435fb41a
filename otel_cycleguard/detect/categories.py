"""Tool categories (exploration / action) by a four-level fallback, and poll tools.

1. a built-in map of common names and aliases, 2. the user's ``extra_categories``,
3. tool metadata (``read_only``), 4. otherwise ``action``, marked *unknown*
(``ToolKind.known`` false): what the guard does not know is not evidence, so a streak of
unknown calls may warn but never terminates through ``category_streak`` alone (see
docs/detection.md). Two readings of the arguments come before that last resort:

- a tool whose arguments hold one command line (``command``, ``cmd``, ``script``, ``code``,
  ``input``) is a shell, whatever it is called, and is read by its command words as ``bash``
  is (an exec whose command is read-only is ``exec:readonly``: exploration);
- a tool that does several things by a sub-command argument (``command``, ``action``,
  ``operation``: ``view`` vs ``str_replace`` vs ``create``) is a read or an edit by that
  argument: a read is never counted as an edit.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

try:
    from orjson import loads as _loads
except ImportError:  # pragma: no cover - orjson is a core dependency
    from json import loads as _loads

__all__ = [
    "ACTION",
    "EXPLORATION",
    "Categorizer",
    "ToolKind",
    "argument_map",
    "changes_environment",
    "command_text",
    "command_words",
    "edits_files",
]

EXPLORATION: Final = "exploration"
ACTION: Final = "action"
EXEC_READONLY: Final = "exec:readonly"

# Canonical name -> category. Aliases map onto canonical names below.
_BUILTIN: dict[str, str] = {
    "read": EXPLORATION,
    "grep": EXPLORATION,
    "search": EXPLORATION,
    "search_files": EXPLORATION,
    "find": EXPLORATION,
    "list": EXPLORATION,
    "glob": EXPLORATION,
    "web_search": EXPLORATION,
    "fetch": EXPLORATION,
    "plan": EXPLORATION,
    "memory": EXPLORATION,
    "view": EXPLORATION,
    "open": EXPLORATION,
    "goto": EXPLORATION,
    "scroll_up": EXPLORATION,
    "scroll_down": EXPLORATION,
    "find_file": EXPLORATION,
    "search_dir": EXPLORATION,
    "search_file": EXPLORATION,
    "lookup": EXPLORATION,
    "think": EXPLORATION,
    "edit": ACTION,
    "write": ACTION,
    "apply_patch": ACTION,
    "exec": ACTION,
    "delete": ACTION,
    "move": ACTION,
    "delegate_task": ACTION,
    "create": ACTION,
    "submit": ACTION,
}

_ALIASES: dict[str, str] = {
    "read_file": "read",
    "readfile": "read",
    "cat": "read",
    "view_file": "view",
    "open_file": "open",
    "ripgrep": "grep",
    "rg": "grep",
    "grep_search": "grep",
    "codebase_search": "search",
    "file_search": "search_files",
    "find_files": "find",
    "ls": "list",
    "list_dir": "list",
    "list_directory": "list",
    "list_files": "list",
    "websearch": "web_search",
    "web_fetch": "fetch",
    "webfetch": "fetch",
    "http_get": "fetch",
    "todo_write": "plan",
    "todowrite": "plan",
    "update_plan": "plan",
    "edit_file": "edit",
    "str_replace": "edit",
    "str_replace_editor": "edit",
    "str_replace_based_edit_tool": "edit",
    "replace_in_file": "edit",
    "multiedit": "edit",
    "multi_edit": "edit",
    "write_file": "write",
    "create_file": "write",
    "patch": "apply_patch",
    "bash": "exec",
    "shell": "exec",
    "terminal": "exec",
    "sh": "exec",
    "run": "exec",
    "run_command": "exec",
    "run_terminal_cmd": "exec",
    "execute_command": "exec",
    "run_shell_command": "exec",
    "execute_bash": "exec",
    "python": "exec",
    "ipython": "exec",
    "remove": "delete",
    "delete_file": "delete",
    "rm": "delete",
    "rename": "move",
    "move_file": "move",
    "mv": "move",
    "task": "delegate_task",
    "spawn_agent": "delegate_task",
    "run_subagent": "delegate_task",
}

_POLL_EXACT = frozenset({"get_result", "wait", "sleep", "poll", "check_status", "get_status"})
_POLL_SUFFIXES = ("_status", "_poll")
_POLL_ACTIONS = frozenset({"poll", "log", "status"})

# Read-only commands for exec:readonly. `find` is read-only unless it has -exec/-delete/...
_READONLY_COMMANDS = frozenset(
    {
        "cat",
        "ls",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "find",
        "head",
        "tail",
        "wc",
        "pwd",
        "echo",
        "file",
        "stat",
        "tree",
        "du",
        "df",
        "which",
        "whoami",
        "env",
        "printenv",
        "less",
        "more",
        "sort",
        "uniq",
        "cut",
        "nl",
        "diff",
        "cmp",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "date",
        "uname",
        "id",
        "true",
        "sed",
        "awk",
        "jq",
        "type",
    }
)
_GIT_READONLY = frozenset(
    {"status", "diff", "log", "show", "blame", "branch", "ls-files", "rev-parse", "grep"}
)
_FIND_WRITERS = frozenset(
    {"-exec", "-execdir", "-delete", "-ok", "-okdir", "-fprint", "-fprintf", "-fls"}
)
_SEPARATORS = re.compile(r";|&&|\|\||>|`|\$\(|\n")
_NEEDS_SHLEX = re.compile(r"[\"'\\]")
_COMMAND_KEYS = ("command", "cmd", "script", "code", "input", "commands")
# The keys a multi-purpose tool names its sub-command with, and the sub-commands that only
# read (anything else a sub-command names is taken as an edit: the stricter reading).
_SUBCOMMAND_KEYS = ("command", "action", "operation", "mode")
_READ_SUBCOMMANDS = frozenset(
    {
        "view",
        "read",
        "show",
        "cat",
        "get",
        "list",
        "ls",
        "search",
        "find",
        "grep",
        "open",
        "goto",
        "scroll",
        "scroll_up",
        "scroll_down",
        "print",
        "info",
        "status",
        "diff",
        "view_range",
        "read_file",
        "list_dir",
    }
)
_EDIT_SUBCOMMANDS = frozenset(
    {
        "str_replace",
        "create",
        "insert",
        "undo_edit",
        "write",
        "edit",
        "replace",
        "append",
        "delete",
        "remove",
        "rename",
        "move",
        "patch",
        "apply_patch",
        "overwrite",
        "prepend",
        "write_file",
        "create_file",
    }
)
# Canonical tools whose sub-command decides read or edit (unknown tools too, see classify).
_MULTI_PURPOSE = frozenset({"edit", "write", "create"})
_SHELL_WORD = re.compile(r"[\s/|;&<>$=(]")


class ToolKind:
    """How the detector treats one tool: category, override key, whether it polls, and whether
    the category is known (``known`` false: the last-resort ``action`` guess for a name seen
    nowhere, which must not terminate a run by itself)."""

    __slots__ = ("canonical", "category", "is_poll", "known", "override_key")

    def __init__(
        self,
        canonical: str,
        category: str,
        override_key: str,
        is_poll: bool,
        known: bool = True,
    ) -> None:
        self.canonical = canonical
        self.category = category
        self.override_key = override_key
        self.is_poll = is_poll
        self.known = known

    def __repr__(self) -> str:
        known = "" if self.known else ", unknown"
        return f"ToolKind({self.canonical!r}, {self.category!r}, poll={self.is_poll}{known})"


_EXEC_KIND = ToolKind("exec", ACTION, "exec", False)
_EXEC_READONLY_KIND = ToolKind("exec", EXPLORATION, EXEC_READONLY, False)
_VIEW_KIND = ToolKind("view", EXPLORATION, "view", False)
_EDIT_KIND = ToolKind("edit", ACTION, "edit", False)


class Categorizer:
    """Classifies tools. Results per (tool, read_only) are cached in a bounded dict."""

    __slots__ = ("_cache", "_extra", "_poll", "_read_only")

    _CACHE_LIMIT = 4096

    def __init__(
        self,
        extra_categories: Mapping[str, str] | None = None,
        read_only_tools: Iterable[str] = (),
        poll_tools: Iterable[str] = (),
    ) -> None:
        self._extra = {k.lower(): v for k, v in (extra_categories or {}).items()}
        self._read_only = frozenset(t.lower() for t in read_only_tools)
        self._poll = frozenset(t.lower() for t in poll_tools)
        self._cache: dict[tuple[str, bool | None], ToolKind] = {}

    def classify(self, tool: str, arguments: Any = None, read_only: bool | None = None) -> ToolKind:
        """The kind of one call. Arguments matter for exec (read-only?), ``process``, tools
        with a sub-command, and unknown tools (a command line makes them a shell)."""
        key = (tool, read_only)
        kind = self._cache.get(key)
        if kind is None:
            kind = self._classify_name(tool, read_only)
            if len(self._cache) >= self._CACHE_LIMIT:
                self._cache.clear()
            self._cache[key] = kind
        canonical = kind.canonical
        if canonical == "exec":
            if kind.category == ACTION and _is_readonly_command(arguments):
                return _EXEC_READONLY_KIND
            return kind
        if canonical == "process":
            if _process_polls(arguments):
                return ToolKind("process", EXPLORATION, "process", True)
            return kind
        if not kind.known or canonical in _MULTI_PURPOSE:
            return self._by_arguments(kind, arguments)
        return kind

    def _by_arguments(self, kind: ToolKind, arguments: Any) -> ToolKind:
        """A multi-purpose or unknown tool read by its arguments: its sub-command decides read
        or edit; an unknown tool given one command line is a shell."""
        args = argument_map(arguments)
        if args is None:
            return kind
        for name in _SUBCOMMAND_KEYS:
            value = args.get(name)
            if isinstance(value, str) and len(value) <= 32:
                word = value.strip().lower()
                if word in _READ_SUBCOMMANDS:
                    return _VIEW_KIND
                if word in _EDIT_SUBCOMMANDS:
                    return _EDIT_KIND
        if kind.known:
            return kind
        if _is_command_line(args):
            return _EXEC_READONLY_KIND if _is_readonly_command(args) else _EXEC_KIND
        return kind

    def _classify_name(self, tool: str, read_only: bool | None) -> ToolKind:
        name = tool.strip().lower()
        canonical = _ALIASES.get(name, name)
        is_poll = name in self._poll or name in _POLL_EXACT or name.endswith(_POLL_SUFFIXES)
        if is_poll:
            return ToolKind(canonical, EXPLORATION, canonical, True)
        if canonical in _BUILTIN:
            category = _BUILTIN[canonical]
        elif name in self._extra:
            category = self._extra[name]
        elif read_only is True or name in self._read_only:
            category = EXPLORATION
        elif name.startswith("send_"):
            category = ACTION
        else:
            # Seen nowhere: the stricter category, marked unknown (see the module docstring).
            return ToolKind(canonical, ACTION, canonical, False, known=False)
        # The user's extra categories win over the built-in map for the same name.
        if name in self._extra:
            category = self._extra[name]
        return ToolKind(canonical, category, canonical, False)


def argument_map(arguments: Any) -> Mapping[str, Any] | None:
    """A call's arguments as a mapping (a JSON object string is parsed), else None."""
    if isinstance(arguments, Mapping):
        return arguments
    if isinstance(arguments, str | bytes) and arguments[:1] in ("{", b"{"):
        try:
            value = _loads(arguments)
        except ValueError:
            return None
        return value if isinstance(value, Mapping) else None
    return None


def _is_command_line(args: Mapping[str, Any]) -> bool:
    """True when the arguments are one command line: a command key holding a string that
    reads as a command (a word and more, or a path), next to at most a few options
    (``timeout``, ``cwd``...), none of them a sub-command or file content."""
    for key in _COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            text = value.strip()
            return bool(_SHELL_WORD.search(text)) or text.isidentifier()
    return False


def command_text(arguments: Any) -> str | None:
    """The command line of an exec-like call, whatever shape its arguments take (or None)."""
    if isinstance(arguments, str):
        text = arguments.strip()
        if text.startswith("{"):
            try:
                import json

                arguments = json.loads(text)
            except ValueError:
                return text
        else:
            return text
    if isinstance(arguments, Mapping):
        for key in _COMMAND_KEYS:
            value = arguments.get(key)
            if isinstance(value, str):
                return value
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return " ".join(value)
    return None


def _is_readonly_command(arguments: Any) -> bool:
    """True when every command of the pipeline is read-only and nothing is redirected."""
    try:
        text = command_text(arguments)
        if not text or len(text) > 4096 or _SEPARATORS.search(text):
            return False
        # Fast exit before shlex (the costly part): a first word that is not on the read-only
        # list can only make the command an action (quoting it, `'cat'`, errs the same way).
        head = text.split("|", 1)[0].split(None, 1)
        first = head[0].rsplit("/", 1)[-1] if head else ""
        if first not in _READONLY_COMMANDS and first != "git":
            return False
        for stage in text.split("|"):
            # shlex only when quoting or escapes need it (~10x the cost of str.split)
            words = shlex.split(stage) if _NEEDS_SHLEX.search(stage) else stage.split()
            if not words:
                return False
            command = words[0].rsplit("/", 1)[-1]
            if command == "git":
                sub = next((w for w in words[1:] if not w.startswith("-")), "")
                if sub not in _GIT_READONLY:
                    return False
                if sub == "branch" and not _lists_branches(words[words.index("branch") + 1 :]):
                    return False
            elif command == "env":
                # `env` runs its first non-assignment argument: `env X=1 rm -rf build` writes.
                if any(not w.startswith("-") and "=" not in w for w in words[1:]):
                    return False
            elif command == "sort":
                if any(w == "-o" or w.startswith(("-o", "--output")) for w in words[1:]):
                    return False
            elif command == "sed":
                if any(
                    w == "-i" or w.startswith("-i") or w.startswith("--in-place") for w in words[1:]
                ):
                    return False
            elif command == "find":
                if _FIND_WRITERS.intersection(words[1:]):
                    return False
            elif command not in _READONLY_COMMANDS:
                return False
        return True
    except ValueError:  # unbalanced quotes: not something we can vouch for
        return False


_ASSIGN = re.compile(r"^\w+=")
_PREFIX_COMMANDS = frozenset({"sudo", "env", "time", "!", "nohup"})


def command_words(command: str) -> list[str]:
    """The words of one simple command, from the command it runs: ``sudo``, ``env``,
    ``time``, ``nohup``, ``!`` and ``VAR=value`` prefixes skipped, the first word's directory
    dropped (``/usr/bin/find`` is ``find``)."""
    words = command.split()
    while words and (words[0] in _PREFIX_COMMANDS or _ASSIGN.match(words[0])):
        words = words[1:]
    if words:
        words[0] = words[0].rsplit("/", 1)[-1]
    return words


# -- commands that change files (what an agent without an edit tool edits with) ---------------

_QUOTED = re.compile(r"'[^']*'|\"(?:\\.|[^\"\\])*\"")
_COMMAND_ITEMS = re.compile(r"\|\|?|&&|;|&(?!>)|\n")
# A redirect of a content-producing command into a file (not a stream, not /dev/null).
_FILE_REDIRECT = re.compile(r"(?<![\d&<>])>>?\s*(?!&|/dev/)[^\s&|;<>]")
_CONTENT_WRITERS = frozenset(
    {"cat", "echo", "printf", "head", "tail", "sed", "awk", "cut", "sort", "uniq", "tr", "paste"}
)
_IN_PLACE = re.compile(r"^(?:-[A-Za-z]*i|--in-place)")
_GIT_WRITERS = frozenset({"apply", "am", "checkout", "restore", "stash", "reset", "revert"})
_ALWAYS_WRITERS = frozenset({"tee", "patch", "truncate"})


def _simple_commands(arguments: Any) -> Iterator[tuple[str, list[str]]]:
    """(text, words) of each simple command of an exec-like call's command line (split at
    ``|``, ``&&``, ``;``, ``&``, newlines), its first 4 KB, with quoted text blanked and a
    here-document's body left out: a ``>`` inside a string and a file body are not commands."""
    text = command_text(arguments)
    if not text:
        return
    text = text[:4096]
    head, opens, body = text.partition("<<")
    if opens:  # the body follows the line that opens the here-document
        text = head + opens + body.split("\n", 1)[0]
    for item in _COMMAND_ITEMS.split(_QUOTED.sub("''", text)):
        words = command_words(item)
        if words:
            yield item, words


def edits_files(arguments: Any) -> bool:
    """True when an exec-like call's command line edits files: ``sed -i``/``perl -i``, a
    ``cat``/``echo``/``printf``... redirected into a file (here-documents included), ``tee``,
    ``patch``, ``git apply``/``checkout``/``restore``/``stash``/``reset``.

    Agents that work through a shell alone (mini-swe-agent) edit this way; a successful edit
    is a change of approach, which ``failure_density`` counts as progress. Quoted text and a
    here-document's body are not read (a ``>`` inside a string or a file body redirects
    nothing). Never raises.
    """
    try:
        for item, words in _simple_commands(arguments):
            command = words[0]
            if command in _ALWAYS_WRITERS:
                return True
            if command in ("sed", "perl") and any(_IN_PLACE.match(w) for w in words[1:]):
                return True
            if (
                command == "git"
                and next((w for w in words[1:] if not w.startswith("-")), "") in _GIT_WRITERS
            ):
                return True
            if command in _CONTENT_WRITERS and _FILE_REDIRECT.search(item):
                return True
        return False
    except Exception:  # a heuristic over foreign input: never raise into the detector
        return False


# Package managers and build tools, with the sub-commands that change the environment
# (``apt-get update`` only refreshes an index: not progress).
_INSTALLERS = {
    "pip": frozenset({"install"}),
    "pip3": frozenset({"install"}),
    "uv": frozenset({"pip", "add", "sync"}),
    "poetry": frozenset({"install", "add"}),
    "conda": frozenset({"install", "create"}),
    "mamba": frozenset({"install", "create"}),
    "npm": frozenset({"install", "i", "ci", "add"}),
    "yarn": frozenset({"install", "add"}),
    "pnpm": frozenset({"install", "add", "i"}),
    "apt": frozenset({"install"}),
    "apt-get": frozenset({"install"}),
    "yum": frozenset({"install"}),
    "dnf": frozenset({"install"}),
    "apk": frozenset({"add"}),
    "brew": frozenset({"install"}),
    "gem": frozenset({"install"}),
    "bundle": frozenset({"install"}),
    "cargo": frozenset({"build", "install", "fetch"}),
    "go": frozenset({"build", "install", "get", "mod"}),
    "mvn": frozenset({"install", "compile", "package"}),
    "gradle": frozenset({"build", "assemble"}),
    "cmake": frozenset({"--build", ".."}),
}
_BUILDERS = frozenset({"make", "ninja", "./configure", "configure"})


def changes_environment(arguments: Any) -> bool:
    """True when an exec-like call installs packages or runs a build step (``pip install``,
    ``apt-get install``, ``npm ci``, ``make``, ``cargo build``...): when it succeeds, the
    environment moved on, which is progress for a setup agent that rarely edits a file.
    Never raises."""
    try:
        for _, words in _simple_commands(arguments):
            command = words[0]
            if command in ("python", "python3") and words[1:3] == ["-m", "pip"]:
                words, command = words[2:], "pip"
            if command in _BUILDERS:
                return True
            subcommands = _INSTALLERS.get(command)
            if subcommands and any(w in subcommands for w in words[1:3]):
                return True
        return False
    except Exception:  # a heuristic over foreign input: never raise into the detector
        return False


_BRANCH_LIST_FLAGS = frozenset(
    {"-a", "-r", "-v", "-vv", "-l", "--list", "--all", "--remotes", "--show-current"}
)


def _lists_branches(args: list[str]) -> bool:
    """`git branch` only lists with no branch name and no -d/-D/-m/-c (which write)."""
    return all(
        a in _BRANCH_LIST_FLAGS or a.startswith(("--format", "--sort", "--color")) for a in args
    )


def _process_polls(arguments: Any) -> bool:
    if isinstance(arguments, str):
        try:
            import json

            arguments = json.loads(arguments)
        except ValueError:
            return False
    return (
        isinstance(arguments, Mapping) and str(arguments.get("action", "")).lower() in _POLL_ACTIONS
    )
