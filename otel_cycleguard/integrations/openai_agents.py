"""OpenAI Agents SDK adapter: a model-input filter and a tool guardrail that obey the guard.

Usage::

    import otel_cycleguard
    from agents import Agent, Runner
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    from otel_cycleguard.integrations.openai_agents import cycleguard_run_config, guard_tools

    otel_cycleguard.install(tracer_provider=provider, escalator=...)
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # the guard reads its spans

    agent = guard_tools(Agent(name="coder", tools=[grep, edit]))
    try:
        result = await Runner.run(agent, "...", run_config=cycleguard_run_config())
    except otel_cycleguard.CycleTerminated as stopped:
        print(stopped.user_message, stopped.progress_ref)

Two enforcement points:

* :func:`cycleguard_input_filter` — a ``RunConfig.call_model_input_filter``, run before every
  model call. It appends the session's queued directives to *that call's* input as new items
  ``{"role": "system" | "user", "content": ...}`` after everything else (the corrective
  message is a system item, a human's ``modify`` instruction a user item); earlier items are
  never edited and the run's stored items are not changed. While a human is deciding it waits
  (in a worker thread; the event loop keeps running) until the decision or the deadline
  (+1 s grace); once the run is terminated it raises :class:`~otel_cycleguard.CycleTerminated`.
  The SDK re-raises a filter's exception as it is, so ``Runner.run`` raises
  ``CycleTerminated`` itself. :func:`cycleguard_run_config` builds (or extends) a
  ``RunConfig`` with it, composing with a filter already set (that one runs first).
* :func:`cycleguard_tool_guardrail` — a ``@tool_input_guardrail`` run before each function tool
  call, so no tool runs after a termination that landed while the model was answering. The
  SDK only attaches tool guardrails per tool: :func:`guard_tools` adds it to every
  ``FunctionTool`` of an agent (and of its handoff agents). On termination the guardrail
  returns ``ToolGuardrailFunctionOutput.raise_exception(output_info=<CycleTerminated>)`` —
  the SDK's documented way to halt — which surfaces as
  ``ToolInputGuardrailTripwireTriggered``; :func:`terminated_from` digs the
  ``CycleTerminated`` out of it (or of a ``UserError`` whose ``__cause__`` it is), and
  :func:`run_guarded` / :func:`run_guarded_sync` run an agent and re-raise it unwrapped.

Session: by default the session of the current span as the guard resolved it. The OpenInference
instrumentor makes each SDK span the current OpenTelemetry span, so inside the filter and the
guardrail that is the agent's span. Under OpenInference's ``using_session("s-42")`` the key is
``"s-42"`` (its ``session.id``); without it the guard keys the run by its OpenTelemetry trace
id (the ``Agent workflow`` root span's). Either way the filter and the tool spans agree, since
both read the processor's resolution; pass ``session=`` to pin a key.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

from agents import Agent, RunConfig, Runner, ToolGuardrailFunctionOutput, tool_input_guardrail
from agents.exceptions import ToolInputGuardrailTripwireTriggered
from agents.run_config import CallModelData, ModelInputData
from agents.tool import FunctionTool
from agents.tool_guardrails import ToolInputGuardrail, ToolInputGuardrailData

from otel_cycleguard.escalate.directives import CycleTerminated, Directive
from otel_cycleguard.escalate.engine import EscalationEngine
from otel_cycleguard.integrations.generic import acheck, current_session, resolve_engine

__all__ = [
    "CycleTerminated",
    "cycleguard_input_filter",
    "cycleguard_run_config",
    "cycleguard_tool_guardrail",
    "directive_items",
    "guard_tools",
    "run_guarded",
    "run_guarded_sync",
    "terminated_from",
]

GUARDRAIL_NAME = "cycleguard"

InputFilter = Callable[[CallModelData[Any]], ModelInputData | Awaitable[ModelInputData]]


def directive_items(directives: list[Directive]) -> list[dict[str, str]]:
    """The new input items carrying ``directives``, in queue order."""
    return [{"role": d.role, "content": d.content} for d in directives]


def cycleguard_input_filter(
    engine: EscalationEngine | None = None,
    session: str | None = None,
    inner: InputFilter | None = None,
) -> Callable[[CallModelData[Any]], Awaitable[ModelInputData]]:
    """A ``call_model_input_filter`` appending the guard's directives to each model call.

    ``inner``: a filter to run first (the directives are appended to what it returns).
    """

    async def cycleguard_filter(data: CallModelData[Any]) -> ModelInputData:
        model_data = data.model_data
        if inner is not None:
            produced = inner(data)
            model_data = await produced if inspect.isawaitable(produced) else produced
        directives = await acheck(session, engine=engine)
        if not directives:
            return model_data
        return ModelInputData(
            input=[*model_data.input, *directive_items(directives)],  # type: ignore[list-item]
            instructions=model_data.instructions,
        )

    return cycleguard_filter


def cycleguard_run_config(
    run_config: RunConfig | None = None,
    *,
    engine: EscalationEngine | None = None,
    session: str | None = None,
    **settings: Any,
) -> RunConfig:
    """A ``RunConfig`` whose model-input filter delivers the guard's directives.

    Pass an existing ``run_config`` (copied, not changed) or ``RunConfig`` fields as keywords;
    a filter already configured runs first.
    """
    base = run_config if run_config is not None else RunConfig(**settings)
    if run_config is not None and settings:
        base = dataclasses.replace(base, **settings)
    return dataclasses.replace(
        base,
        call_model_input_filter=cycleguard_input_filter(
            engine, session, inner=base.call_model_input_filter
        ),
    )


def cycleguard_tool_guardrail(
    engine: EscalationEngine | None = None, session: str | None = None
) -> ToolInputGuardrail[Any]:
    """A tool input guardrail halting the run (tripwire) once the guard has terminated it.

    It waits out a pending human decision first; queued messages are left for the next
    model call.
    """

    async def cycleguard(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        error = await _terminated(engine, session)
        if error is not None:
            return ToolGuardrailFunctionOutput.raise_exception(output_info=error)
        return ToolGuardrailFunctionOutput.allow()

    return tool_input_guardrail(name=GUARDRAIL_NAME)(cycleguard)


async def _terminated(
    engine: EscalationEngine | None, session: str | None
) -> CycleTerminated | None:
    chosen = resolve_engine(engine)
    key = session if session is not None else current_session()
    if chosen is None or key is None:
        return None
    chosen.mailboxes.enforcement_seen = True
    box = chosen.mailboxes.get(key, create=False)
    if box is None:
        return None
    if box.terminated is None and box.paused_request is not None:
        await asyncio.to_thread(_wait_decided, box)
    return box.terminated


def _wait_decided(box: Any, grace_s: float = 1.0) -> None:
    with box.condition:
        while box.paused_request is not None and box.terminated is None:
            remaining = (box.paused_until or time.time()) + grace_s - time.time()
            if remaining <= 0:
                break
            box.condition.wait(timeout=min(remaining, 0.5))


def guard_tools(
    agent: Agent[Any],
    *,
    engine: EscalationEngine | None = None,
    session: str | None = None,
) -> Agent[Any]:
    """Add the cycleguard tool guardrail to every function tool of ``agent`` and its handoffs.

    Changes the tools in place (idempotent) and returns ``agent``.
    """
    guardrail = cycleguard_tool_guardrail(engine, session)
    seen: set[int] = set()

    def visit(current: Agent[Any]) -> None:
        if id(current) in seen:
            return
        seen.add(id(current))
        for tool in current.tools:
            if not isinstance(tool, FunctionTool):
                continue
            existing = list(tool.tool_input_guardrails or [])
            if not any(g.get_name() == GUARDRAIL_NAME for g in existing):
                tool.tool_input_guardrails = [*existing, guardrail]
        for handoff in current.handoffs:
            if isinstance(handoff, Agent):
                visit(handoff)

    visit(agent)
    return agent


def terminated_from(error: BaseException | None) -> CycleTerminated | None:
    """The ``CycleTerminated`` behind an SDK exception (tripwire, ``UserError`` cause), if any."""
    depth = 0
    while error is not None and depth < 10:
        if isinstance(error, CycleTerminated):
            return error
        if isinstance(error, ToolInputGuardrailTripwireTriggered):
            info = getattr(error.output, "output_info", None)
            if isinstance(info, CycleTerminated):
                return info
        error = error.__cause__ or error.__context__
        depth += 1
    return None


async def run_guarded(
    agent: Agent[Any],
    input: Any,
    *,
    engine: EscalationEngine | None = None,
    session: str | None = None,
    **kwargs: Any,
) -> Any:
    """``Runner.run`` that raises :class:`CycleTerminated` unwrapped when the guard stopped it.

    ``run_config`` defaults to :func:`cycleguard_run_config` (an explicit one is extended).
    """
    kwargs["run_config"] = cycleguard_run_config(
        kwargs.get("run_config"), engine=engine, session=session
    )
    try:
        return await Runner.run(agent, input, **kwargs)
    except Exception as error:
        stopped = terminated_from(error)
        if stopped is not None and stopped is not error:
            raise stopped from error
        raise


def run_guarded_sync(
    agent: Agent[Any],
    input: Any,
    *,
    engine: EscalationEngine | None = None,
    session: str | None = None,
    **kwargs: Any,
) -> Any:
    """The synchronous form of :func:`run_guarded` (``Runner.run_sync``)."""
    kwargs["run_config"] = cycleguard_run_config(
        kwargs.get("run_config"), engine=engine, session=session
    )
    try:
        return Runner.run_sync(agent, input, **kwargs)
    except Exception as error:
        stopped = terminated_from(error)
        if stopped is not None and stopped is not error:
            raise stopped from error
        raise
