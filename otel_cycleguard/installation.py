"""The guard :func:`otel_cycleguard.install` set up last, for enforcement points to find.

``check()``, the tool decorator and the framework adapters are called from agent code that
holds no reference to the guard; they look it up here. The composition root (``install``)
records it with :func:`set_current`; nothing else writes it. No OpenTelemetry import here.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from otel_cycleguard.escalate.engine import EscalationEngine

__all__ = ["Installation", "current", "set_current"]


@dataclass(frozen=True)
class Installation:
    """The escalation engine enforcement points consume from, and the span processor that
    resolves the current span's session (``session_of``)."""

    engine: EscalationEngine | None
    processor: Any = None


_EMPTY = Installation(None, None)
_lock = threading.Lock()
_current = _EMPTY


def current() -> Installation:
    """The installation in effect (engine and processor None when nothing is installed)."""
    return _current


def set_current(installation: Installation | None) -> None:
    """Make ``installation`` the one enforcement points use; None forgets it."""
    global _current
    with _lock:
        _current = installation if installation is not None else _EMPTY
