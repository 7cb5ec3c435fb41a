"""Guarding a model client's request method: the part the OpenAI and Anthropic adapters share.

The method is replaced on the client's resource *instance* (``client.chat.completions``,
``client.messages``) by a wrapper that, before each request, takes the session's directives
(:func:`~otel_cycleguard.check`: waits out a human decision, raises
:class:`~otel_cycleguard.CycleTerminated` once the run is stopped) and appends them to that
request's messages as new messages; the caller's list is never changed. The wrapper looks the
class's method up at call time, so a client instrumentation (which patches the class) works
whether it was applied before or after the guard.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from otel_cycleguard.escalate.directives import Directive
from otel_cycleguard.escalate.engine import EscalationEngine
from otel_cycleguard.integrations.generic import acheck, check

__all__ = ["guard_method", "unguard_method"]

#: Turns a request's ``messages`` and the directives into the messages to send.
AppendFn = Callable[[Any, list[Directive]], Any]

_MARK = "__cycleguard_guarded__"


def guard_method(
    resource: Any,
    name: str,
    append: AppendFn,
    *,
    is_async: bool,
    session: str | None,
    engine: EscalationEngine | None,
) -> None:
    """Replace ``resource.<name>`` by a guarded wrapper (idempotent)."""
    current = getattr(resource, name)
    if getattr(current, _MARK, False):
        return
    unbound = getattr(type(resource), name)

    def call_args(args: tuple[Any, ...], kwargs: dict[str, Any], directives: list[Directive]):
        if directives and "messages" in kwargs:
            kwargs = {**kwargs, "messages": append(kwargs["messages"], directives)}
        return args, kwargs

    if is_async:

        @functools.wraps(unbound)
        async def guarded_async(*args: Any, **kwargs: Any) -> Any:
            directives = await acheck(session, engine=engine)
            args, kwargs = call_args(args, kwargs, directives)
            method = getattr(type(resource), name).__get__(resource)  # instrumented or not
            return await method(*args, **kwargs)

        setattr(guarded_async, _MARK, True)
        setattr(resource, name, guarded_async)
        return

    @functools.wraps(unbound)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        directives = check(session, engine=engine)
        args, kwargs = call_args(args, kwargs, directives)
        method = getattr(type(resource), name).__get__(resource)
        return method(*args, **kwargs)

    setattr(guarded, _MARK, True)
    setattr(resource, name, guarded)


def unguard_method(resource: Any, name: str) -> None:
    """Undo :func:`guard_method` (the class's method shows through again)."""
    if getattr(resource.__dict__.get(name), _MARK, False):
        delattr(resource, name)
