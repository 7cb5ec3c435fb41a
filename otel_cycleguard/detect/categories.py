"""Tool categories (exploration / action) and the readings of shell command lines, from the
compiled core (rust/cycleguard-core: categories.rs, shell.rs, args.rs).

The core classifies every call on its own; this module gives the same readings to the rest of
the package and to the benchmarks. How a tool is classified (built-in names and aliases, the
user's ``extra_categories``, ``read_only`` metadata, poll tools, the arguments of an unknown or
multi-purpose tool, ``exec:readonly``) is in docs/detection.md, "Tool categories".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from otel_cycleguard import _core

__all__ = [
    "ACTION",
    "EXPLORATION",
    "Categorizer",
    "ToolKind",
    "changes_environment",
    "command_text",
    "command_words",
    "edits_files",
]

EXPLORATION: Final = "exploration"
ACTION: Final = "action"
EXEC_READONLY: Final = "exec:readonly"


class ToolKind:
    """How the detector treats one tool: category, override key, whether it polls, and whether
    the category is known (``known`` false: the last-resort ``action`` guess for a name seen
    nowhere, which must not terminate a run by itself)."""

    __slots__ = ("canonical", "category", "is_poll", "known", "override_key")

    def __init__(
        self, canonical: str, category: str, override_key: str, is_poll: bool, known: bool = True
    ) -> None:
        self.canonical = canonical
        self.category = category
        self.override_key = override_key
        self.is_poll = is_poll
        self.known = known

    def __repr__(self) -> str:
        known = "" if self.known else ", unknown"
        return f"ToolKind({self.canonical!r}, {self.category!r}, poll={self.is_poll}{known})"


class Categorizer:
    """Classifies tools for one configuration (the core's classifier)."""

    __slots__ = ("_core",)

    def __init__(
        self,
        extra_categories: Mapping[str, str] | None = None,
        read_only_tools: Iterable[str] = (),
        poll_tools: Iterable[str] = (),
    ) -> None:
        self._core = _core.Categorizer(
            {k.lower(): v for k, v in (extra_categories or {}).items()},
            {t.lower() for t in read_only_tools},
            {t.lower() for t in poll_tools},
        )

    def classify(self, tool: str, arguments: Any = None, read_only: bool | None = None) -> ToolKind:
        """The kind of one call. Arguments matter for exec (read-only?), ``process``, tools
        with a sub-command, and unknown tools (a command line makes them a shell)."""
        return ToolKind(*self._core.classify(tool, arguments, read_only))


def command_text(arguments: Any) -> str | None:
    """The command line of an exec-like call, whatever shape its arguments take (or None)."""
    return _core.command_text(arguments)


def command_words(command: str) -> list[str]:
    """The words of one simple command, from the command it runs: ``sudo``, ``env``,
    ``time``, ``nohup``, ``!`` and ``VAR=value`` prefixes skipped, the first word's directory
    dropped (``/usr/bin/find`` is ``find``)."""
    return _core.command_words(command)


def edits_files(arguments: Any) -> bool:
    """True when an exec-like call's command line edits files: ``sed -i``/``perl -i``, a
    ``cat``/``echo``/``printf``... redirected into a file (here-documents included), ``tee``,
    ``patch``, ``git apply``/``checkout``/``restore``/``stash``/``reset``. Quoted text and a
    here-document's body are not read. Never raises."""
    return _core.edits_files(arguments)


def changes_environment(arguments: Any) -> bool:
    """True when an exec-like call installs packages or runs a build step (``pip install``,
    ``apt-get install``, ``npm ci``, ``make``, ``cargo build``...). Never raises."""
    return _core.changes_environment(arguments)
