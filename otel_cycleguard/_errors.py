"""One guard around every hook that runs inside the host agent.

This is the package's only internal-error guard: the span processor's hooks (which inline the
``try`` and call :func:`internal_error`, to save the wrapper's frame on the hot path) and every
recording method of :class:`~otel_cycleguard.metrics.CycleGuardMetrics` (:func:`guarded`) use it.

A bug in otel-cycleguard must never break the agent it protects: the exception is logged
(once per call site and type, then counted quietly) and swallowed, also inside a user's own
pytest run. It is re-raised only on an explicit request: ``CYCLEGUARD_RAISE_INTERNAL_ERRORS=1``,
or :func:`raise_internal_errors` (which the project's own ``tests/conftest.py`` calls, so our
tests see our bugs). ``CYCLEGUARD_RAISE_INTERNAL_ERRORS=0`` swallows even then.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["guarded", "internal_error", "internal_error_count", "raise_internal_errors"]

logger = logging.getLogger("otel_cycleguard")
F = TypeVar("F", bound=Callable[..., Any])

_seen: set[tuple[str, type[BaseException]]] = set()
_count = 0
_raise_requested = False


def internal_error_count() -> int:
    """How many internal errors were swallowed in this process."""
    return _count


def raise_internal_errors(enabled: bool = True) -> None:
    """Re-raise internal errors in this process (for otel-cycleguard's own test suite only)."""
    global _raise_requested
    _raise_requested = enabled


def _should_raise() -> bool:
    env = os.environ.get("CYCLEGUARD_RAISE_INTERNAL_ERRORS")
    return env == "1" or (_raise_requested and env != "0")


def internal_error(where: str, exc: Exception) -> None:
    """Count and log ``exc`` (once per site and type); re-raise it only on request.

    Call from an ``except`` block; :func:`guarded` uses it, and hot paths that inline their own
    ``try`` (to save the wrapper's call frame) call it directly.
    """
    global _count
    _count += 1
    if _should_raise():
        raise exc
    key = (where, type(exc))
    if key not in _seen and len(_seen) < 1000:
        _seen.add(key)
        logger.error(
            "otel-cycleguard internal error in %s; your agent is still running fine, "
            "this span was skipped (further %s errors here are counted, not logged)",
            where,
            type(exc).__name__,
            exc_info=exc,
        )


def guarded(default: Any = None) -> Callable[[F], F]:
    """Decorate a hook so it never raises into the host (returns ``default`` instead)."""

    def decorate(func: F) -> F:
        where = func.__qualname__

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(*args, **kwargs)
            except Exception as exc:
                internal_error(where, exc)
                return default

        return wrapper  # type: ignore[return-value]

    return decorate
