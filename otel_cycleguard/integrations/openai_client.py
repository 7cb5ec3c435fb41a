"""OpenAI client adapter: the guard's enforcement point for agents written around a plain client.

Usage (the agent's tools leave no spans; the guard reads the tool calls out of the model spans
the client instrumentation writes, see :mod:`otel_cycleguard.derive`)::

    import otel_cycleguard
    from openai import OpenAI
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from otel_cycleguard.integrations.openai_client import guard_openai

    otel_cycleguard.install(tracer_provider=provider)
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    client = guard_openai(OpenAI())
    with tracer.start_as_current_span("weather-agent"):   # one run: one trace, one session
        while True:
            reply = client.chat.completions.create(model=..., messages=messages, tools=tools)
            ...   # run the requested tools, append their results, repeat

Before every ``client.chat.completions.create(...)`` the adapter takes the session's queued
directives and appends them to *that request's* ``messages`` as new
``{"role": "system" | "user", "content": ...}`` messages after everything else (the caller's
list is not changed, earlier messages are never edited). While a human is deciding it waits
(``AsyncOpenAI``: in a worker thread, the event loop keeps running) until the decision or the
deadline; once the run is terminated it raises :class:`~otel_cycleguard.CycleTerminated`
instead of sending the request.

Session: by default the current span's session as the guard resolved it (for a run under one
parent span: its trace id, the same key the model spans get). Pass ``session=`` when the
model spans carry their own id (OpenInference ``using_session``, ``gen_ai.conversation.id``).
The Responses API and ``with_raw_response`` are not wrapped; call ``check()`` there.
"""

from __future__ import annotations

from typing import Any, TypeVar

from otel_cycleguard.escalate.directives import CycleTerminated, Directive
from otel_cycleguard.escalate.engine import EscalationEngine
from otel_cycleguard.integrations._client_guard import guard_method, unguard_method

__all__ = ["CycleTerminated", "directive_messages", "guard_openai", "unguard_openai"]

C = TypeVar("C")


def directive_messages(directives: list[Directive]) -> list[dict[str, str]]:
    """The chat messages carrying ``directives``, in queue order."""
    return [{"role": d.role, "content": d.content} for d in directives]


def _append(messages: Any, directives: list[Directive]) -> Any:
    return [*messages, *directive_messages(directives)]


def guard_openai(
    client: C, *, session: str | None = None, engine: EscalationEngine | None = None
) -> C:
    """Guard ``client.chat.completions.create`` of an ``OpenAI`` or ``AsyncOpenAI`` client.

    Changes the client in place (idempotent) and returns it.
    """
    from openai.resources.chat.completions import AsyncCompletions

    completions = client.chat.completions  # type: ignore[attr-defined]
    guard_method(
        completions,
        "create",
        _append,
        is_async=isinstance(completions, AsyncCompletions),
        session=session,
        engine=engine,
    )
    return client


def unguard_openai(client: Any) -> Any:
    """Remove the guard from ``client`` (its requests go out unchanged again)."""
    unguard_method(client.chat.completions, "create")
    return client
