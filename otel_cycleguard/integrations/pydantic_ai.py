"""pydantic-ai adapter: a capability that delivers the guard's directives to the agent.

Usage::

    import otel_cycleguard
    from otel_cycleguard.integrations.pydantic_ai import CycleGuardCapability
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings

    processor = otel_cycleguard.install(tracer_provider=provider, escalator=...)
    agent = Agent(
        model,
        capabilities=[
            # the guard reads the tool spans pydantic-ai emits: instrumentation must be on
            Instrumentation(settings=InstrumentationSettings(tracer_provider=provider)),
            CycleGuardCapability(),
        ],
    )
    try:
        result = agent.run_sync("...")
    except otel_cycleguard.CycleTerminated as stopped:
        print(stopped.user_message, stopped.progress_ref)  # resume(ref, store) later

What it does, at pydantic-ai's two enforcement points:

* ``before_model_request`` (once per model request): takes the session's queued directives and
  appends them to *that request only*, after the whole history, as one new ``ModelRequest``
  (a corrective ``system`` directive becomes a ``SystemPromptPart``, a human's ``modify``
  instruction a ``UserPromptPart``). Earlier messages are never edited and the run's stored
  history is not changed. While a human is deciding (second TERM), the request waits — in a
  worker thread, so the event loop keeps running — until the decision or the escalation
  deadline (+1 s grace). Once the run is terminated it raises
  :class:`~otel_cycleguard.CycleTerminated`.
* ``before_tool_execute`` (before every tool function runs): raises ``CycleTerminated`` when
  the run is terminated (and waits out a pending decision), so no tool runs after the stop.

pydantic-ai lets both exceptions propagate unwrapped out of ``agent.run``/``run_sync``.

Session: by default the session of the current span as the guard resolved it — for pydantic-ai
that is the ``gen_ai.conversation.id`` of the ``invoke_agent`` span (pydantic-ai's conversation
id: the one you pass to ``agent.run(..., conversation_id=...)`` or the one it generates per
run). The hooks run inside the ``chat``/``execute_tool`` spans of that agent, so this needs
instrumentation to be enabled on a provider the guard is installed on. Pass ``session=`` to
pin it, or ``engine=`` to use an engine other than the one ``install()`` made the default.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelRequest, ModelRequestPart, SystemPromptPart, UserPromptPart

from otel_cycleguard.escalate.directives import CycleTerminated, Directive
from otel_cycleguard.escalate.engine import EscalationEngine
from otel_cycleguard.integrations.generic import acheck, current_session, resolve_engine

__all__ = ["CycleGuardCapability", "CycleTerminated", "directive_request"]


def directive_request(directives: list[Directive]) -> ModelRequest:
    """The new message carrying ``directives``: system and user parts, in queue order."""
    parts: list[ModelRequestPart] = [
        SystemPromptPart(d.content) if d.role == "system" else UserPromptPart(d.content)
        for d in directives
    ]
    return ModelRequest(parts=parts)


async def take_directives(engine: EscalationEngine | None, session: str | None) -> list[Directive]:
    """Take ``session``'s directives without blocking the event loop while a human decides.

    Raises :class:`CycleTerminated` once the run is terminated. No engine or no session
    (nothing instrumented, guard not installed) → ``[]``.
    """
    return await acheck(session, engine=engine)


@dataclass(init=False)
class CycleGuardCapability(AbstractCapability[Any]):
    """Injects the guard's corrective messages into the next model request; stops the run.

    ``engine``: the :class:`EscalationEngine` (default: the one ``install()`` set up).
    ``session``: a fixed session key (default: the current span's session, resolved per call).
    """

    engine: EscalationEngine | None = field(default=None)
    session: str | None = field(default=None)

    def __init__(self, engine: EscalationEngine | None = None, session: str | None = None) -> None:
        self.engine = engine
        self.session = session

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        directives = await take_directives(self.engine, self.session)
        if not directives:
            return request_context
        messages = [*request_context.messages, directive_request(directives)]
        return replace(request_context, messages=messages)

    async def before_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any, args: Any) -> Any:
        chosen = resolve_engine(self.engine)
        key = self.session if self.session is not None else current_session()
        if chosen is None or key is None:
            return args
        chosen.mailboxes.enforcement_seen = True
        box = chosen.mailboxes.get(key, create=False)
        if box is None:
            return args
        if box.terminated is not None:
            raise box.terminated
        if box.paused_request is not None:
            # Wait for the decision; messages stay queued for the next model request.
            await asyncio.to_thread(_wait_decided, box)
        return args


def _wait_decided(box: Any, grace_s: float = 1.0) -> None:
    """Block while a human decides; raise if the run ends up terminated; consume nothing."""
    with box.condition:
        while box.paused_request is not None and box.terminated is None:
            remaining = (box.paused_until or time.time()) + grace_s - time.time()
            if remaining <= 0:
                break
            box.condition.wait(timeout=min(remaining, 0.5))
        if box.terminated is not None:
            raise box.terminated
