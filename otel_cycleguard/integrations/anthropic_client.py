"""Anthropic client adapter: the guard's enforcement point for agents around a plain client.

Usage (the guard reads the tool calls out of the model spans the client instrumentation
writes, OpenInference's or OpenLLMetry's Anthropic instrumentor)::

    import otel_cycleguard
    from anthropic import Anthropic
    from openinference.instrumentation.anthropic import AnthropicInstrumentor
    from otel_cycleguard.integrations.anthropic_client import guard_anthropic

    otel_cycleguard.install(tracer_provider=provider)
    AnthropicInstrumentor().instrument(tracer_provider=provider)
    client = guard_anthropic(Anthropic())
    with tracer.start_as_current_span("weather-agent"):   # one run: one trace, one session
        ...   # client.messages.create(...), run the tool_use blocks, send tool_result, repeat

Before every ``client.messages.create(...)`` the adapter takes the session's queued directives
and appends them to that request's ``messages`` as one new ``user`` message (the Messages API
has no system role inside ``messages``, and editing ``system`` would change what was already
said); the API joins it to the tool results before it into one user turn. The caller's list
is never changed. While a human is deciding it waits (``AsyncAnthropic``: in a worker thread)
until the decision or the deadline; once the run is terminated it raises
:class:`~otel_cycleguard.CycleTerminated` instead of sending the request.

Session: as for :mod:`otel_cycleguard.integrations.openai_client` (the current span's session,
or ``session=``).
"""

from __future__ import annotations

from typing import Any, TypeVar

from otel_cycleguard.escalate.directives import CycleTerminated, Directive
from otel_cycleguard.escalate.engine import EscalationEngine
from otel_cycleguard.integrations._client_guard import guard_method, unguard_method

__all__ = ["CycleTerminated", "directive_message", "guard_anthropic", "unguard_anthropic"]

C = TypeVar("C")


def directive_message(directives: list[Directive]) -> dict[str, Any]:
    """One ``user`` message carrying ``directives`` as text blocks, in queue order."""
    return {"role": "user", "content": [{"type": "text", "text": d.content} for d in directives]}


def _append(messages: Any, directives: list[Directive]) -> Any:
    return [*messages, directive_message(directives)]


def guard_anthropic(
    client: C, *, session: str | None = None, engine: EscalationEngine | None = None
) -> C:
    """Guard ``client.messages.create`` of an ``Anthropic`` or ``AsyncAnthropic`` client.

    Changes the client in place (idempotent) and returns it.
    """
    from anthropic.resources.messages import AsyncMessages

    messages = client.messages  # type: ignore[attr-defined]
    guard_method(
        messages,
        "create",
        _append,
        is_async=isinstance(messages, AsyncMessages),
        session=session,
        engine=engine,
    )
    return client


def unguard_anthropic(client: Any) -> Any:
    """Remove the guard from ``client``."""
    unguard_method(client.messages, "create")
    return client
