"""The one span pipeline: a finished span plus its scope → classify, derive, record, guard.

The live processor, the offline replay and the OTLP service differ only in how they find a
span's scope (its session, agent and sub-agent flag: as spans start, parents first over a
trace, or children first in the service). Once they have a ``(span, scope)`` pair, they all
hand it to :meth:`SpanPipeline.process`, so reading tool calls and model turns, deriving the
calls a model asked for (:mod:`otel_cycleguard.derive`), and feeding the guard are written
once. The per-profile settings the records need (the state-hash attribute) are read from the
profile of the span's own scope. No OpenTelemetry import here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from otel_cycleguard import _core, conventions
from otel_cycleguard.conventions import SpanRole
from otel_cycleguard.derive import DerivedCalls
from otel_cycleguard.detect.records import ModelTurn, ToolCall
from otel_cycleguard.detect.signals import Signal
from otel_cycleguard.guard import CycleGuard
from otel_cycleguard.span_scope import SpanScope
from otel_cycleguard.spans import SpanData, SpanRef

__all__ = ["RecordSink", "Scope", "SpanPipeline", "SpanView", "order_trace", "scope_of"]

_TOOL = SpanRole.TOOL
_MODEL = SpanRole.MODEL
_AGENT = SpanRole.AGENT
_NO_SIGNALS: list[Signal] = []
_read_tool_call = conventions.read_tool_call
_read_model_turn = conventions.read_model_turn


class EventView(Protocol):
    """A span event as the pipeline reads it (``SpanEvent`` and the SDK's ``Event`` both)."""

    @property
    def name(self) -> str: ...
    @property
    def attributes(self) -> Mapping[str, Any] | None: ...


class SpanView(Protocol):
    """A finished span as the pipeline reads it; :class:`~otel_cycleguard.spans.SpanData` is
    one, the processor wraps the SDK's ``ReadableSpan`` in another. ``span_id`` is hex."""

    @property
    def name(self) -> str: ...
    @property
    def attributes(self) -> Mapping[str, Any]: ...
    @property
    def events(self) -> Sequence[EventView]: ...
    @property
    def start_ns(self) -> int: ...
    @property
    def end_ns(self) -> int: ...
    @property
    def status_error(self) -> bool: ...
    @property
    def status_message(self) -> str | None: ...
    @property
    def span_id(self) -> str: ...


class Scope:
    """Where a span belongs: its session, agent, sub-agent flag, and whether its end (an
    agent span's) ends the session's run."""

    __slots__ = ("agent", "ends_session", "session", "subagent")

    def __init__(
        self, session: str, agent: str | None, subagent: bool, ends_session: bool = False
    ) -> None:
        self.session = session
        self.agent = agent
        self.subagent = subagent
        self.ends_session = ends_session

    def __repr__(self) -> str:
        return f"Scope({self.session!r}, agent={self.agent!r}, subagent={self.subagent})"


_SCOPES = _core.Scopes(conventions.READER, Scope, Scope.__slots__, SpanData)

#: ``scope_of(info, attributes, trace_id) -> Scope``: the scope of a span from what its
#: ancestors passed on (:mod:`span_scope`), else the span's own session hint and agent name,
#: else its trace: the one fallback rule (in the core, beside the replay's use of it).
scope_of: Callable[[SpanScope | None, Mapping[str, Any], str], Scope] = _SCOPES.scope_of
#: ``order_trace(spans, trace_id, delegating) -> [(role, span, scope)]``: a buffered trace's
#: tool and model spans in replay order (by start, then input order), each with its scope,
#: sessions resolved parents first as the live processor resolves them when spans start.
order_trace: Callable[[list[SpanData], str, frozenset[str]], list[tuple[str, SpanData, Scope]]] = (
    _SCOPES.order_trace
)


class RecordSink(Protocol):
    """Told of every record the pipeline read, after the guard saw it (the replay's report).

    ``record`` is None when the session no longer detects and nothing needed the record
    built (``tool`` still names the tool); ``signals`` is empty when it did not detect."""

    def __call__(
        self,
        role: str,
        span: SpanView,
        scope: Scope,
        record: ToolCall | ModelTurn | None,
        tool: str | None,
        signals: list[Signal],
    ) -> None: ...


class SpanPipeline:
    """classify → derive → record → guard, for one ``(span, scope)`` pair at a time.

    ``detecting(session)`` says whether a session is still detected on (the replay stops a
    run it terminated); None: always. ``on_record`` hears of each record, derived ones
    included, in order. Not thread-safe beyond what the guard and ``DerivedCalls`` are.
    """

    def __init__(
        self,
        guard: CycleGuard,
        *,
        derived: DerivedCalls | None = None,
        detecting: Callable[[str], bool] | None = None,
        on_record: RecordSink | None = None,
    ) -> None:
        self.guard = guard
        self.config = guard.config
        self.derived = derived if derived is not None else DerivedCalls(self.config.max_sessions)
        self._detecting = detecting
        self._on_record = on_record
        attributes = {p.state_hash.attribute for p in self.config.profiles.values()}
        # Every profile names the same attribute (the usual case): no look-up per span.
        self._one_attribute = attributes.pop() if len(attributes) == 1 else None

    def state_attribute(self, scope: Scope) -> str:
        """The state-hash attribute of the profile ``scope``'s session runs under."""
        if self._one_attribute is not None:
            return self._one_attribute
        _, profile = self.config.profile_for(scope.agent, subagent=scope.subagent)
        return profile.state_hash.attribute

    def process(
        self, span: SpanView, scope: Scope, ref: SpanRef | None, role: str | None = None
    ) -> None:
        """One finished span; ``role`` when the caller classified it already."""
        if role is None:
            role = conventions.classify(span.name, span.attributes)
        if role == _TOOL:
            self._tool(span, scope, ref)
        elif role == _MODEL:
            self._model(span, scope, ref)
        elif role == _AGENT and scope.ends_session:
            self.guard.end_session(scope.session)  # breaks held until the end count as successes

    def _tool(self, span: SpanView, scope: Scope, ref: SpanRef | None) -> None:
        session = scope.session
        attrs = span.attributes
        detecting = self._detecting
        active = detecting is None or detecting(session)
        signals = _NO_SIGNALS
        call: ToolCall | None = None
        if active or self.derived.pending(session):
            events = span.events
            call = _read_tool_call(  # conventions.tool_call_from's reader, positional
                span.name,
                attrs,
                span.status_error,
                [event.name for event in events] if events else None,
                span.start_ns,
                span.end_ns,
                span.span_id,
                self._one_attribute or self.state_attribute(scope),
            )
            self.derived.tool_span(session, attrs, call)  # it covers a pending derived call
            tool = call.tool
            if active:
                signals = self.guard.observe_tool_call(
                    session, call, agent=scope.agent, subagent=scope.subagent, span_ref=ref
                )
        else:  # a stopped session, nothing pending: only the tool's name is wanted
            tool = conventions.tool_name(span.name, attrs)
        if self._on_record is not None:
            self._on_record(_TOOL, span, scope, call, tool, signals)

    def _model(self, span: SpanView, scope: Scope, ref: SpanRef | None) -> None:
        session = scope.session
        attrs = span.attributes
        guard = self.guard
        detecting = self._detecting
        on_record = self._on_record
        events = span.events
        pairs = [(event.name, event.attributes or {}) for event in events] if events else None
        # First the calls the previous turn asked for, now that their results are known.
        for call in self.derived.model_span(
            session, attrs, pairs, span.start_ns, span.end_ns, span.span_id
        ):
            signals = _NO_SIGNALS
            if detecting is None or detecting(session):
                signals = guard.observe_tool_call(
                    session, call, agent=scope.agent, subagent=scope.subagent, span_ref=ref
                )
            if on_record is not None:
                on_record(_TOOL, span, scope, call, call.tool, signals)
        turn = _read_model_turn(  # conventions.model_turn_from's reader, positional
            attrs,
            pairs,
            span.start_ns,
            span.end_ns,
            span.span_id,
            self._one_attribute or self.state_attribute(scope),
            span.status_error,
            span.status_message,
        )
        signals = _NO_SIGNALS
        if detecting is None or detecting(session):
            signals = guard.observe_model_turn(
                session, turn, agent=scope.agent, subagent=scope.subagent, span_ref=ref
            )
        if on_record is not None:
            on_record(_MODEL, span, scope, turn, None, signals)
