"""Enforcement points any agent can call: ``check()``, ``guard_tool`` and ``checkpoint()``.

The span processor only observes; these are where the agent receives what the guard decided.
``check()`` returns the corrective messages queued for the session (to append to the next model
request as new messages), waits while a human decides, and raises :class:`CycleTerminated` once
the run has been stopped. The session defaults to the one the current span belongs to.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.trace import format_trace_id

from otel_cycleguard import installation
from otel_cycleguard.escalate.directives import CycleTerminated, Directive
from otel_cycleguard.escalate.engine import EscalationEngine

__all__ = [
    "CycleTerminated",
    "check",
    "checkpoint",
    "current_session",
    "default_processor",
    "guard_tool",
    "resolve_engine",
    "set_default_engine",
]

F = TypeVar("F", bound=Callable[..., Any])


def set_default_engine(engine: EscalationEngine | None, processor: Any = None) -> None:
    """Make ``engine`` the one ``check()`` uses when none is passed (what ``install`` records
    in :mod:`otel_cycleguard.installation`; for guards assembled by hand, and tests)."""
    installation.set_current(installation.Installation(engine, processor))


def resolve_engine(engine: EscalationEngine | None = None) -> EscalationEngine | None:
    """``engine``, or the one :func:`otel_cycleguard.install` made the default (adapters use it)."""
    return engine if engine is not None else installation.current().engine


def default_processor() -> Any:
    """The span processor :func:`otel_cycleguard.install` registered last (or ``None``)."""
    return installation.current().processor


def current_session(processor: Any = None) -> str | None:
    """The session key of the current span, as the span processor resolved it."""
    span_context = trace.get_current_span().get_span_context()
    if not span_context.is_valid:
        return None
    processor = processor if processor is not None else installation.current().processor
    resolve = getattr(processor, "session_of", None)
    if callable(resolve):
        session = resolve(span_context.span_id)
        if session is not None:
            return session
    return format_trace_id(span_context.trace_id)


def check(
    session: str | None = None, *, engine: EscalationEngine | None = None, wait: bool = True
) -> list[Directive]:
    """Consume the session's directives: messages to inject; raises if terminated.

    While a human is deciding, this blocks until the decision or the deadline (fail-closed
    termination then raises). Without an installed guard it returns ``[]``.
    """
    chosen = resolve_engine(engine)
    if chosen is None:
        return []
    key = session if session is not None else current_session()
    if key is None:
        return []
    return chosen.mailboxes.take(key, wait=wait)


async def acheck(
    session: str | None = None, *, engine: EscalationEngine | None = None
) -> list[Directive]:
    """:func:`check` for ``async`` agents: a pause for a human is waited out off the event loop.

    Raises :class:`CycleTerminated` once the run is terminated; ``[]`` without a guard or session.
    """
    chosen = resolve_engine(engine)
    key = session if session is not None else current_session()
    if chosen is None or key is None:
        return []
    mailboxes = chosen.mailboxes
    box = mailboxes.get(key, create=False)
    if box is not None and box.paused_request is not None and box.terminated is None:
        return await asyncio.to_thread(mailboxes.take, key, wait=True)
    return mailboxes.take(key, wait=False)


def checkpoint(
    payload: Any, session: str | None = None, *, engine: EscalationEngine | None = None
) -> None:
    """Register what to save with the progress if this session is terminated (JSON-able)."""
    chosen = resolve_engine(engine)
    key = session if session is not None else current_session()
    if chosen is not None and key is not None:
        chosen.checkpoint(key, payload)


def guard_tool(
    func: F | None = None, *, session: str | None = None, engine: EscalationEngine | None = None
) -> Any:
    """Decorate a tool so it refuses to run once the run is terminated (raises CycleTerminated).

    Works for plain and ``async`` functions; waits out a pending human decision first.
    """

    def decorate(fn: F) -> F:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                check(session, engine=engine)
                return await fn(*args, **kwargs)

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            check(session, engine=engine)
            return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate(func) if func is not None else decorate
