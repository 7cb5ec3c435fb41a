"""Which session an *ended* span belongs to, when spans arrive late and out of order.

In-process, the span processor sees a span start while its ancestors are still open and
inherits their session. The service only sees ended spans, batched by the agent's exporter
(and maybe a Collector), in end order: a tool span arrives *before* the agent span that
carries ``gen_ai.conversation.id``, which ends last, possibly minutes later in another batch.
Resolution is therefore, for each tool or model span:

1. the span's **own** session attribute (``gen_ai.conversation.id``, ``session.id``, Traceloop
   association properties); OpenInference and Traceloop put it on every span;
2. else the session its **trace** was bound to by an earlier span (sticky: a trace that started
   under its trace id keeps that key even when a later batch reveals an ancestor's id, so a
   loop's counters never split in two);
3. else an **ancestor's** session attribute, looked up through the parent chain among the spans
   of the same request and a bounded cache of recently seen agent/hinted spans;
4. else the **trace id**.

The first resolution binds the trace (LRU-bounded, persisted across restarts). Agent names are
found the same way (own attributes, ancestors, trace binding). A span is treated as part of a
sub-agent (stricter ``subagent`` profile) when its visible ancestor chain crosses a delegating
tool span; since that tool span ends after its children, a delegated child agent gets its own
session only when its spans carry their own conversation id. Conversations that span several
traces are one session exactly when their spans carry the conversation id (which is also what
the Collector's load-balancing exporter needs to route them to one instance).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from cachetools import FIFOCache

from otel_cycleguard import conventions
from otel_cycleguard.conventions import SpanRole
from otel_cycleguard.pipeline import Scope
from otel_cycleguard.spans import SpanData

__all__ = ["Resolved", "SessionResolver"]

_MAX_HOPS = 32


class _Known:
    __slots__ = ("agent", "delegating", "hint", "parent")

    def __init__(self, parent: str | None, hint: str | None, agent: str | None, delegating: bool):
        self.parent = parent
        self.hint = hint
        self.agent = agent
        self.delegating = delegating


class _Batch:
    """One request's spans by id, and the ancestors' answer per parent span id."""

    __slots__ = ("ancestors", "by_id")

    def __init__(self) -> None:
        self.by_id: dict[str, SpanData] | None = None
        self.ancestors: dict[str, tuple[str | None, str | None, bool]] = {}


class Resolved(Scope):
    """A tool or model span with its session, agent name and sub-agent flag: the span and
    the scope the pipeline takes (one object a span; its end, an agent span's, ends the
    session's run)."""

    __slots__ = ("role", "span")

    def __init__(self, span: SpanData, role: str, session: str, agent: str | None, subagent: bool):
        self.span = span
        self.role = role
        self.session = session
        self.agent = agent
        self.subagent = subagent
        self.ends_session = True


class SessionResolver:
    """Resolves sessions batch by batch. Not thread-safe: the ingestion worker owns it."""

    def __init__(
        self,
        delegating_tools: Iterable[str] = (),
        *,
        max_traces: int = 100_000,
        max_known_spans: int = 100_000,
    ) -> None:
        self._delegating = frozenset(t.lower() for t in delegating_tools)
        self._traces: OrderedDict[str, tuple[str, str | None]] = OrderedDict()
        self._known: FIFOCache[str, _Known] = FIFOCache(maxsize=max(1, max_known_spans))
        self._max_traces = max_traces

    def resolve(
        self,
        spans: list[SpanData],
        on_error: Callable[[SpanData, Exception], None] | None = None,
    ) -> Iterator[Resolved]:
        """Yield the tool and model spans of one request, in arrival order, resolved, and each
        trace's root agent span (role AGENT: the end of its run).

        A span whose resolution raises is passed to ``on_error`` and skipped; its neighbours
        are still resolved (without ``on_error`` the exception propagates)."""
        # The request's spans by id (built when first needed) and what each parent's line of
        # ancestors says: the spans of a request share their parents (a run's tool calls
        # hang under one agent span), and within a request the answer for a parent does not
        # change (every span of the request is in the batch: anything remembered meanwhile
        # is found there first).
        batch = _Batch()
        for span in spans:
            try:
                resolved = self._resolve_one(span, spans, batch)
            except Exception as exc:
                if on_error is None:
                    raise
                on_error(span, exc)
                continue
            if resolved is not None:
                yield resolved

    def _resolve_one(self, span: SpanData, spans: list[SpanData], batch: _Batch) -> Resolved | None:
        attrs = span.attributes
        role = conventions.classify(span.name, attrs)
        if role != SpanRole.TOOL and role != SpanRole.MODEL:
            if role == SpanRole.AGENT or (
                role != SpanRole.OWN and conventions.session_hint(attrs) is not None
            ):
                self._remember(span, role, attrs)
            if role == SpanRole.AGENT and span.parent_span_id is None:
                # A trace's root agent span has ended: its run is over (exporters send
                # spans as they end, so the root comes after its children).
                bound = self._traces.get(span.trace_id)
                session = conventions.session_hint(attrs) or (
                    bound[0] if bound is not None else span.trace_id
                )
                return Resolved(
                    span, role, session, conventions.agent_name(span.name, attrs), False
                )
            return None
        if role == SpanRole.TOOL and self._delegating and self._is_delegating(span, attrs):
            self._remember(span, role, attrs)
        own = conventions.session_hint(attrs)
        agent = conventions.agent_name("", attrs)
        bound = self._traces.get(span.trace_id)
        hint = None
        subagent = False
        if span.parent_span_id is not None and (own is None or agent is None or self._delegating):
            found = batch.ancestors.get(span.parent_span_id)
            if found is None:
                if batch.by_id is None:
                    batch.by_id = {s.span_id: s for s in spans}
                found = batch.ancestors[span.parent_span_id] = self._ancestors(
                    span.parent_span_id, batch.by_id
                )
            hint, up_agent, subagent = found
            agent = agent or up_agent
        if own is not None:
            session = own
        elif bound is not None:
            session = bound[0]
        else:
            session = hint or span.trace_id
        if agent is None and bound is not None:
            agent = bound[1]
        if bound is None or (bound[1] is None and agent is not None and bound[0] == session):
            self._bind(span.trace_id, session, agent)
        return Resolved(span, role, session, agent, subagent)

    # -- persistence ---------------------------------------------------------------------

    def export_state(self) -> list[list[Any]]:
        """The trace bindings, oldest first: ``[trace_id, session, agent]``."""
        return [[t, s, a] for t, (s, a) in self._traces.items()]

    def restore_state(self, bindings: Iterable[Any]) -> None:
        for item in bindings:
            if isinstance(item, list | tuple) and len(item) == 3 and isinstance(item[1], str):
                self._bind(str(item[0]), item[1], item[2] if isinstance(item[2], str) else None)

    def __len__(self) -> int:
        return len(self._traces)

    # -- internals -----------------------------------------------------------------------

    def _is_delegating(self, span: SpanData, attrs: Any) -> bool:
        return conventions.is_delegating_tool(span.name, attrs, self._delegating)

    def _bind(self, trace_id: str, session: str, agent: str | None) -> None:
        traces = self._traces
        traces[trace_id] = (session, agent)
        traces.move_to_end(trace_id)
        if len(traces) > self._max_traces:
            traces.popitem(last=False)

    def _remember(self, span: SpanData, role: str, attrs: Any) -> None:
        self._known[span.span_id] = _Known(  # the oldest remembered span goes first
            span.parent_span_id,
            conventions.session_hint(attrs),
            conventions.agent_name(span.name, attrs),
            role == SpanRole.TOOL and self._is_delegating(span, attrs),
        )

    def _ancestors(
        self, parent: str | None, batch: dict[str, SpanData]
    ) -> tuple[str | None, str | None, bool]:
        """(first ancestor session hint, first ancestor agent name, crosses a delegating tool)."""
        hint = agent = None
        subagent = False
        hops = 0
        while parent is not None and hops < _MAX_HOPS:
            hops += 1
            span = batch.get(parent)
            if span is not None:
                attrs = span.attributes
                role = conventions.classify(span.name, attrs)
                if hint is None:
                    hint = conventions.session_hint(attrs)
                if agent is None and role == SpanRole.AGENT:
                    agent = conventions.agent_name(span.name, attrs)
                if role == SpanRole.TOOL and self._delegating and self._is_delegating(span, attrs):
                    subagent = True
                parent = span.parent_span_id
                continue
            known = self._known.get(parent)
            if known is None:
                break
            hint = hint or known.hint
            agent = agent or known.agent
            subagent = subagent or known.delegating
            parent = known.parent
        return hint, agent, subagent
