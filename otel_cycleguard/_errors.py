"""One guard around every hook that runs inside the host agent.

A bug in otel-cycleguard must never break the agent it protects: the exception is logged
(once per call site and type, then counted quietly) and swallowed. Under pytest, or with
``CYCLEGUARD_RAISE_INTERNAL_ERRORS=1``, it is re-raised so our own tests see it.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["guarded", "internal_error", "internal_error_count"]

logger = logging.getLogger("otel_cycleguard")
F = TypeVar("F", bound=Callable[..., Any])

_seen: set[tuple[str, type[BaseException]]] = set()
_count = 0


def internal_error_count() -> int:
    """How many internal errors were swallowed in this process."""
    return _count


def _should_raise() -> bool:
    return os.environ.get("CYCLEGUARD_RAISE_INTERNAL_ERRORS") == "1" or (
        "pytest" in sys.modules and os.environ.get("CYCLEGUARD_RAISE_INTERNAL_ERRORS") != "0"
    )


def internal_error(where: str, exc: Exception) -> None:
    """Count and log ``exc`` (once per site and type); re-raise it under pytest or on request.

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
