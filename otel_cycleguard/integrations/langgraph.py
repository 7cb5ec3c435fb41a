"""LangGraph adapter: a ``pre_model_hook`` that delivers the guard's directives and stops runs.

Usage::

    import otel_cycleguard
    from langgraph.prebuilt import create_react_agent
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from otel_cycleguard.integrations.langgraph import cycleguard_pre_model_hook

    otel_cycleguard.install(tracer_provider=provider, escalator=...)
    LangChainInstrumentor().instrument(tracer_provider=provider)  # the guard reads its spans

    agent = create_react_agent(model, tools, pre_model_hook=cycleguard_pre_model_hook())
    try:
        agent.invoke({"messages": [("user", "...")]}, {"configurable": {"thread_id": "t-1"}})
    except otel_cycleguard.CycleTerminated as stopped:
        print(stopped.user_message, stopped.progress_ref)

:func:`cycleguard_pre_model_hook` runs before every model call and returns
``{"llm_input_messages": [*messages, SystemMessage(...) / HumanMessage(...)]}``: the session's
queued directives appended after the conversation, for *that call only* (the graph's
``messages`` state is not changed; earlier messages are never edited). A corrective directive
is a ``SystemMessage``, a human's ``modify`` instruction a ``HumanMessage``. While a human is
deciding it waits (sync graphs block the node; ``ainvoke``/``astream`` wait in a worker thread)
until the decision or the deadline (+1 s grace); once the run is terminated it raises
:class:`~otel_cycleguard.CycleTerminated`, which LangGraph propagates unwrapped out of
``invoke``/``stream``. It always sets ``llm_input_messages`` (LangGraph keeps that key in the
state between turns, so a hook that sets it only sometimes would resend a stale list).

``inner=``: your own pre-model hook (a function or runnable) runs first; the directives are
appended to its ``llm_input_messages`` (or to the state as its ``messages`` update leaves it),
and its other keys are passed through.

:func:`cycleguard_post_model_hook` (optional, ``post_model_hook=``) stops the run between the
model's answer and the tool calls it asked for, if the termination landed meanwhile.

Session: LangChain's OpenInference tracer does not make its spans current, so the hook finds
the session the way the guard keyed the tool spans: ``session=`` if given; else, when an
enclosing span the guard tracks is current (e.g. your own ``invoke_agent`` span), its session;
else the run's ``session_id`` / ``conversation_id`` / ``thread_id`` metadata (OpenInference
copies it to ``session.id``; LangGraph puts ``configurable.thread_id`` there), else the trace id
of the hook's OpenInference span.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langgraph.graph.message import add_messages
from opentelemetry import trace
from opentelemetry.trace import format_trace_id

from otel_cycleguard.escalate.directives import CycleTerminated, Directive
from otel_cycleguard.escalate.engine import EscalationEngine
from otel_cycleguard.integrations import generic
from otel_cycleguard.integrations.generic import resolve_engine

__all__ = [
    "CycleTerminated",
    "cycleguard_post_model_hook",
    "cycleguard_pre_model_hook",
    "directive_messages",
    "resolve_session",
]

_METADATA_SESSION_KEYS = ("session_id", "conversation_id", "thread_id")  # OpenInference's order


def directive_messages(directives: list[Directive]) -> list[AnyMessage]:
    """The new messages carrying ``directives``, in queue order."""
    return [
        SystemMessage(d.content) if d.role == "system" else HumanMessage(d.content)
        for d in directives
    ]


def resolve_session(config: RunnableConfig | None, session: str | None = None) -> str | None:
    """The session key the guard gave this run's tool spans (see the module docstring)."""
    if session is not None:
        return session
    span_context = trace.get_current_span().get_span_context()
    if span_context.is_valid:
        processor = generic.default_processor()
        resolve = getattr(processor, "session_of", None)
        tracked = resolve(span_context.span_id) if callable(resolve) else None
        if tracked is not None:
            return tracked
    metadata = (config or {}).get("metadata") or {}
    for key in _METADATA_SESSION_KEYS:
        value = metadata.get(key)
        if value:
            return str(value)
    configurable = (config or {}).get("configurable") or {}
    if configurable.get("thread_id"):
        return str(configurable["thread_id"])
    if span_context.is_valid:
        return format_trace_id(span_context.trace_id)
    try:
        from openinference.instrumentation.langchain import get_current_span
    except ImportError:  # pragma: no cover - instrumentation not installed
        return None
    span = get_current_span()
    if span is None:
        return None
    context = span.get_span_context()
    return format_trace_id(context.trace_id) if context.is_valid else None


def _paused(engine: EscalationEngine, key: str) -> bool:
    box = engine.mailboxes.get(key, create=False)
    return box is not None and box.paused_request is not None and box.terminated is None


def _coerce(inner: Any) -> Runnable[Any, Any] | None:
    if inner is None or isinstance(inner, Runnable):
        return inner
    if callable(inner):
        return RunnableLambda(inner)
    raise TypeError(f"inner must be a function or a runnable, not {type(inner).__name__}")


def _compose(state: Any, produced: dict[str, Any] | None, extra: list[AnyMessage]) -> dict:
    produced = dict(produced or {})
    if produced.get("llm_input_messages") is not None:
        base = list(produced["llm_input_messages"])
    else:
        current = state.get("messages") if isinstance(state, dict) else state.messages
        current = list(current or [])
        base = add_messages(current, produced["messages"]) if "messages" in produced else current
    produced["llm_input_messages"] = [*base, *extra]
    return produced


def cycleguard_pre_model_hook(
    engine: EscalationEngine | None = None,
    session: str | None = None,
    *,
    inner: Callable[..., Any] | Runnable[Any, Any] | None = None,
) -> Runnable[Any, dict[str, Any]]:
    """A ``pre_model_hook`` for ``create_react_agent`` (sync and async) obeying the guard."""
    user_hook = _coerce(inner)

    def take_sync(config: RunnableConfig) -> list[Directive]:
        chosen = resolve_engine(engine)
        key = resolve_session(config, session)
        if chosen is None or key is None:
            return []
        return chosen.mailboxes.take(key, wait=True)

    async def take_async(config: RunnableConfig) -> list[Directive]:
        chosen = resolve_engine(engine)
        key = resolve_session(config, session)
        if chosen is None or key is None:
            return []
        if _paused(chosen, key):
            return await asyncio.to_thread(chosen.mailboxes.take, key, wait=True)
        return chosen.mailboxes.take(key, wait=False)

    def hook(state: Any, config: RunnableConfig) -> dict[str, Any]:
        produced = user_hook.invoke(state, config) if user_hook is not None else None
        return _compose(state, produced, directive_messages(take_sync(config)))

    async def ahook(state: Any, config: RunnableConfig) -> dict[str, Any]:
        produced = await user_hook.ainvoke(state, config) if user_hook is not None else None
        return _compose(state, produced, directive_messages(await take_async(config)))

    return RunnableLambda(hook, afunc=ahook, name="cycleguard_pre_model_hook")


def cycleguard_post_model_hook(
    engine: EscalationEngine | None = None, session: str | None = None
) -> Runnable[Any, dict[str, Any]]:
    """A ``post_model_hook`` raising ``CycleTerminated`` before tools run on a stopped run.

    Waits out a pending human decision; leaves queued messages for the next model call.
    """

    def check(config: RunnableConfig) -> CycleTerminated | None:
        chosen = resolve_engine(engine)
        key = resolve_session(config, session)
        if chosen is None or key is None:
            return None
        chosen.mailboxes.enforcement_seen = True
        box = chosen.mailboxes.get(key, create=False)
        return box.terminated if box is not None else None

    def wait(config: RunnableConfig) -> None:
        chosen = resolve_engine(engine)
        key = resolve_session(config, session)
        if chosen is None or key is None or not _paused(chosen, key):
            return
        box = chosen.mailboxes.get(key, create=False)
        with box.condition:  # type: ignore[union-attr]
            while box.paused_request is not None and box.terminated is None:  # type: ignore[union-attr]
                remaining = (box.paused_until or time.time()) + 1.0 - time.time()  # type: ignore[union-attr]
                if remaining <= 0:
                    break
                box.condition.wait(timeout=min(remaining, 0.5))  # type: ignore[union-attr]

    def hook(state: Any, config: RunnableConfig) -> dict[str, Any]:
        wait(config)
        error = check(config)
        if error is not None:
            raise error
        return {}

    async def ahook(state: Any, config: RunnableConfig) -> dict[str, Any]:
        await asyncio.to_thread(wait, config)
        error = check(config)
        if error is not None:
            raise error
        return {}

    return RunnableLambda(hook, afunc=ahook, name="cycleguard_post_model_hook")
