"""``CycleGuardSpanProcessor``: reads tool and model spans of any instrumentation, feeds the guard.

Hot-path budget: a span that is neither a tool call nor a model turn costs two attribute reads,
four dict look-ups and, when spans are tracked, one dict pop in ``on_end``. Tool attributes are
read in ``on_end`` because several instrumentations set them only at the end. ``on_start`` only
records which session and agent a span belongs to (:mod:`otel_cycleguard.span_scope`), so that
descendants (and spans of a delegated child agent) can inherit it; a plain span with no tracked
ancestor is ruled out by two set tests in C. Every hook is guarded: a bug here is logged, never
raised into the agent.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from opentelemetry import baggage
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import format_trace_id

from otel_cycleguard import conventions
from otel_cycleguard._errors import internal_error
from otel_cycleguard._ratelog import RateLimitedLog
from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.conventions import GENAI_OP, OI_KIND, TL_KIND, SpanRole
from otel_cycleguard.guard import CycleGuard, Observer
from otel_cycleguard.pipeline import SpanPipeline, scope_of
from otel_cycleguard.span_scope import SpanScope
from otel_cycleguard.spans import SpanRef
from otel_cycleguard.worker import Worker

if TYPE_CHECKING:
    from otel_cycleguard.escalate.engine import EscalationEngine
    from otel_cycleguard.metrics import CycleGuardMetrics

__all__ = ["CycleGuardSpanProcessor", "SpanRef"]

logger = logging.getLogger("otel_cycleguard")

# Only spans carrying one of these keys (or named "running tool") can be tool or model spans, or
# agent spans whose end ``on_end`` acts on. ``on_end`` tests them as literals (faster).
_MARKER_KEYS = frozenset((GENAI_OP, OI_KIND, TL_KIND, "llm.request.type"))
#: ``on_start``'s rule in the core (classify, session hint else baggage, ``child_scope``).
_open_scope = conventions.READER.open_scope
_BAGGAGE_SESSION_KEYS = ("gen_ai.conversation.id", "session.id", "cycleguard.session")
_DROP_WHY = {
    "queue_full": "the detection queue stayed full (detection stuck), the span was not detected",
    "open_spans": "max_open_spans reached, its descendants will not inherit its session",
}
_ROOM_EVERY = 256  # spans detected between two wake-ups of agent threads waiting for room


class _SdkSpanView:
    """An SDK ``ReadableSpan`` as the pipeline's :class:`~otel_cycleguard.pipeline.SpanView`:
    built only for tool and model spans, from the attribute dict ``on_end`` already read."""

    __slots__ = (
        "attributes",
        "end_ns",
        "events",
        "name",
        "span_id",
        "start_ns",
        "status_error",
        "status_message",
    )

    def __init__(self, span: ReadableSpan, attrs: Mapping[str, Any], span_id: str) -> None:
        self.name = span.name
        self.attributes = attrs
        self.events = span.events
        self.start_ns = span.start_time or 0
        self.end_ns = span.end_time or 0
        status = span.status
        self.status_error = status is not None and status.status_code.value == 2
        self.status_message = status.description if status is not None else None
        self.span_id = span_id


def _attributes(span: ReadableSpan) -> Mapping[str, Any]:
    """The span's attributes as a plain mapping; the SDK's inner dict when it is there.

    ``ReadableSpan.attributes`` wraps a ``BoundedAttributes`` in a ``MappingProxyType``; each
    ``get`` then costs two Python-level calls and a KeyError. On the hot path we read the
    inner dict directly and fall back to the public property on any other SDK shape.
    """
    inner = getattr(getattr(span, "_attributes", None), "_dict", None)
    if isinstance(inner, dict):
        return inner
    return span.attributes or {}


class CycleGuardSpanProcessor(SpanProcessor):
    """An OpenTelemetry ``SpanProcessor`` that guards agents against loops.

    Add it to the SDK ``TracerProvider`` the agent's instrumentation uses (or call
    :func:`otel_cycleguard.install`). ``guard`` may be shared with other span sources.
    Open-span bookkeeping is bounded by ``max_open_spans``.

    ``background=True`` moves detection off the agent's thread, the way ``BatchSpanProcessor``
    moves export: ``on_end`` only queues the finished tool/model span and a daemon worker
    detects within ``flush_interval_s``. The queue is bounded by ``max_queue``; when it is
    full, ``on_end`` waits for the worker to make room instead of dropping: back-pressure on
    a burst, never a silent loss. A span is dropped only when detection made no progress for
    ``max_wait_s`` (2 s: the worker is stuck), when this thread waited ten times that without
    its turn, or when ``on_end`` runs on the draining thread itself; every drop is counted
    (``dropped_spans``, ``cycleguard_spans_dropped_total``) and logged, at most one line a
    minute. The default ``max_queue`` (20 000 spans, about 60 MB at ~3 KB a queued span)
    absorbs a few seconds of burst before agent threads wait (benchmarks/background.py). Every enforcement point (``check()``, the adapters) and
    ``force_flush()`` first drains the queue on the calling thread, so what the agent is told
    is exactly as in the default synchronous mode; only observers (metrics, trace annotation)
    may see a signal up to ``flush_interval_s`` later.
    """

    def __init__(
        self,
        guard: CycleGuard | None = None,
        *,
        config: CycleGuardConfig | None = None,
        observers: list[Observer] | None = None,
        max_open_spans: int = 100_000,
        background: bool = False,
        max_queue: int = 20_000,
        flush_interval_s: float = 0.05,
        escalation: EscalationEngine | None = None,
        metrics: CycleGuardMetrics | None = None,
    ) -> None:
        if guard is not None and config is not None:
            raise ValueError("pass either guard= or config=, not both")
        if max_open_spans < 1:
            raise ValueError(f"max_open_spans must be >= 1, got {max_open_spans}")
        if max_queue < 1:
            raise ValueError(f"max_queue must be >= 1, got {max_queue}")
        if flush_interval_s <= 0:
            raise ValueError(f"flush_interval_s must be > 0, got {flush_interval_s}")
        self.background = background
        self._max_queue = max_queue
        self._flush_interval_s = flush_interval_s
        self._queue: deque[tuple[ReadableSpan, Mapping[str, Any], SpanScope | None]] = deque()
        self._drain_lock = threading.Lock()
        # The shared background worker (``worker.py``): drains every flush_interval_s, or at
        # once when an agent thread waits for room.
        self._worker = Worker("cycleguard-detect", self.drain, self._flush_timeout)
        self._room = threading.Condition(threading.Lock())  # signalled as the queue drains
        self._waiting = 0  # agent threads waiting for room
        self._drainer: int | None = None  # the thread detecting right now
        self._stalled = False  # a wait for room timed out: drop at once until room is made
        self._detected = 0  # spans the drainers went through (progress, for waiting threads)
        self.max_wait_s = 2.0  # without progress; a busy host can starve the worker a while
        self.dropped_spans = 0
        self._drop_log = RateLimitedLog(logger, 60.0)
        self.guard = guard if guard is not None else CycleGuard(config, observers=observers or ())
        if guard is not None and observers:
            self.guard.observers.extend(observers)
        self.config = self.guard.config
        self._delegating = frozenset(t.lower() for t in self.config.delegating_tools)
        self._open: dict[int, SpanScope] = {}
        # classify → derive (tool calls read from model spans) → record → guard: shared with
        # the replay and the service.
        self.pipeline = SpanPipeline(self.guard)
        self.derived = self.pipeline.derived
        self._max_open = max_open_spans
        self._open_lock = threading.Lock()
        self.dropped_open_spans = 0
        self._shutdown = False
        if not self.config.enabled:
            # Disabled (or, later, shut down): on_end becomes a no-op bound on the instance, so
            # the hot path carries no "am I active?" test.
            self.on_end = self._inactive_on_end  # type: ignore[method-assign]
        # The escalation engine (install() wires it; check() and the adapters reach it here)
        # and the metrics that count dropped spans.
        self.escalation = escalation
        self.metrics = metrics
        _register_fork_handler(self)
        if background:
            self._worker.start()

    # -- SpanProcessor ---------------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        # Runs for every span of the host: the guard is inlined (no wrapper frame), as in
        # on_end; a bug is logged (raised only in our own tests), never raised into the agent.
        try:
            if not self.config.enabled or self._shutdown:
                return
            try:  # private fields: no property calls (this runs for every span of the host)
                name = span._name  # type: ignore[attr-defined]
                parent = span._parent  # type: ignore[attr-defined]
            except AttributeError:
                name, parent = span.name, span.parent
            attrs = _attributes(span)
            parent_info = (
                self._open.get(parent.span_id) if parent is not None and self._open else None
            )
            if (
                parent_info is None
                and _MARKER_KEYS.isdisjoint(attrs)
                and conventions.HINT_KEYS.isdisjoint(attrs)
                and name != "running tool"
                and name != "agent run"
                and not name.startswith("invoke_agent")
            ):
                # Neither an agent, a tool, a model turn nor a named session, and no tracked
                # ancestor: nothing to pass on (what child_scope would decide, in C-speed tests).
                return
            try:
                span_id = span._context[1]  # type: ignore[attr-defined]  # no property calls
            except (AttributeError, TypeError, IndexError):
                span_id = span.context.span_id
            # classify, the session hint (else baggage), child_scope: one crossing
            opened = _open_scope(
                name,
                attrs,
                parent_info,
                span_id,
                self._delegating,
                self._baggage_session,
                parent_context,
            )
            if opened is None:
                return  # nothing to pass on: leave no state behind
            role, info = opened
            if info.session is None and role == SpanRole.AGENT:  # a root agent, no session id
                info.session = self._baggage_session(parent_context) or format_trace_id(
                    span.context.trace_id
                )
            with self._open_lock:
                full = len(self._open) >= self._max_open
                if full:
                    self.dropped_open_spans += 1
                else:
                    self._open[span_id] = info
            if full:
                self._dropped("open_spans")
        except Exception as exc:
            internal_error("CycleGuardSpanProcessor.on_start", exc)

    def on_end(self, span: ReadableSpan) -> None:
        # The hot path for every span of the host, so it is written for CPython's interpreter:
        # no wrapper frame (the guard is inlined), private fields (``_attributes._dict``,
        # ``_name``: no property calls), and four literal ``not in`` tests on the attribute dict
        # (about 15 ns each; ``_MARKER_KEYS.isdisjoint`` costs more: it builds an iterator).
        # Only these keys (``_MARKER_KEYS``, spelled out; a test holds the two equal) or the name
        # ``running tool`` make a span one ``_observe_end`` acts on, so any other span costs
        # these tests and, when spans are tracked, one dict pop.
        try:
            try:
                attrs = span._attributes._dict  # type: ignore[attr-defined]
                name = span._name  # type: ignore[attr-defined]
            except AttributeError:  # not an SDK span: the public API
                attrs = span.attributes or {}
                name = span.name
            if (
                "gen_ai.operation.name" not in attrs
                and "openinference.span.kind" not in attrs
                and "traceloop.span.kind" not in attrs
                and "llm.request.type" not in attrs
                and name != "running tool"
            ):
                if not self._open:
                    return
                # spans under an agent are tracked from on_start
                try:
                    span_id = span._context[1]  # type: ignore[attr-defined]  # ~13 ns
                except (AttributeError, TypeError, IndexError):
                    span_id = span.context.span_id  # two property calls, ~110 ns
                info = self._open.pop(span_id, None)
                if info is None or not info.session_root:
                    return
                # An agent span known by its name alone (pydantic-ai's legacy "agent run"):
                # its end still ends the session, in order with the session's queued spans.
            else:
                info = self._open.pop(span.context.span_id, None) if self._open else None
            if self.background:
                if len(self._queue) >= self._max_queue and not self._wait_for_room():
                    self.dropped_spans += 1
                    self._dropped("queue_full")
                    return
                self._queue.append((span, attrs, info))
                return
            self._observe_end(span, attrs, info)
        except Exception as exc:
            internal_error("CycleGuardSpanProcessor.on_end", exc)

    def _inactive_on_end(self, span: ReadableSpan) -> None:
        """``on_end`` while disabled or shut down: forget the open span, nothing else."""
        if self._open:
            self._open.pop(span.context.span_id, None)

    def drain(self) -> int:
        """Detect on every queued span now, on this thread (background mode); returns how many.

        One drainer at a time, so a session's spans are always detected in arrival order.
        """
        if not self._queue:
            return 0
        done = 0
        with self._drain_lock:
            self._drainer = threading.get_ident()
            try:
                queue = self._queue
                while queue:
                    try:
                        span, attrs, info = queue.popleft()
                    except IndexError:
                        break
                    try:
                        self._observe_end(span, attrs, info)
                    except Exception as exc:
                        internal_error("CycleGuardSpanProcessor.drain", exc)
                    done += 1
                    self._detected += 1
                    if not done % _ROOM_EVERY:
                        self._made_room()
            finally:
                self._drainer = None
        self._made_room()
        return done

    def _wait_for_room(self) -> bool:
        """The queue is full: wait (releasing the GIL to the worker) until it has room.

        False, at once, on the draining thread itself (it would wait for itself) and while
        a previous wait timed out with no progress (the worker is stuck: do not slow every
        span of the agent by ``max_wait_s``)."""
        if self._stalled or self._drainer == threading.get_ident():
            return False
        now = time.monotonic()
        deadline, cap, mark = now + self.max_wait_s, now + 10 * self.max_wait_s, self._detected
        with self._room:
            self._waiting += 1
            try:
                self._worker.wake()
                while len(self._queue) >= self._max_queue:
                    now = time.monotonic()
                    if now >= deadline:
                        if self._detected == mark:
                            self._stalled = True  # no progress in max_wait_s: stuck
                            return False
                        if now >= cap:  # progressing, but never our turn: this span only
                            return False
                        # Progressing, others took the room first: keep waiting.
                        deadline, mark = now + self.max_wait_s, self._detected
                    self._room.wait(deadline - now)
            finally:
                self._waiting -= 1
        return True

    def _made_room(self) -> None:
        self._stalled = False
        if self._waiting:
            with self._room:
                self._room.notify_all()

    def _dropped(self, reason: str) -> None:
        """Make a drop visible: the metric, and a log line at most once a minute."""
        if self.metrics is not None:
            self.metrics.span_dropped(reason)
        self._drop_log.log(
            "otel-cycleguard dropped a span (%s): %s; %d so far, %d more since the last line "
            "(cycleguard_spans_dropped_total)",
            reason,
            _DROP_WHY.get(reason, reason),
            self.dropped_spans + self.dropped_open_spans,
        )

    def _flush_timeout(self) -> float:
        return self._flush_interval_s

    def _observe_end(
        self, span: ReadableSpan, attrs: Mapping[str, Any], info: SpanScope | None
    ) -> None:
        """Hand one ended span and its scope to the shared pipeline (``pipeline.py``)."""
        role = conventions.classify(span.name, attrs)
        if role != SpanRole.TOOL and role != SpanRole.MODEL:
            if role == SpanRole.AGENT and info is not None and info.session_root:
                self.guard.end_session(info.session)
            return
        context = span.context
        ref = SpanRef(
            format_trace_id(context.trace_id),
            f"{context.span_id:016x}",
            span.end_time or 0,
            context,
        )
        self.pipeline.process(
            _SdkSpanView(span, attrs, ref.span_id_hex),
            scope_of(info, attrs, ref.trace_id_hex),
            ref,
            role,
        )

    def shutdown(self) -> None:
        self.drain()
        self._shutdown = True
        self.on_end = self._inactive_on_end  # type: ignore[method-assign]
        self._worker.stop(join_timeout_s=1.0)
        self._open.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        self.drain()
        return True

    # -- helpers ---------------------------------------------------------------------------

    @staticmethod
    def _baggage_session(parent_context: Context | None) -> str | None:
        # parent_context is None when start_span was given no context: baggage is then in the
        # current context, which is what baggage.get_all(None) reads.
        values = baggage.get_all(parent_context)
        for key in _BAGGAGE_SESSION_KEYS:
            value = values.get(key)
            if isinstance(value, str) and value:
                return value
        return None

    def session_of(self, span_id: int) -> str | None:
        """The session an open span belongs to (for enforcement points inside the agent)."""
        info = self._open.get(span_id)
        return info.session if info is not None else None

    def open_spans(self) -> int:
        """How many open spans are tracked (bounded by ``max_open_spans``)."""
        return len(self._open)

    def _after_fork(self) -> None:
        self._open_lock = threading.Lock()
        self._open = {}
        self._drain_lock = threading.Lock()
        self._room = threading.Condition(threading.Lock())
        self._waiting = 0
        self._drainer = None
        self._stalled = False
        self._drop_log = RateLimitedLog(logger, 60.0)
        self._queue = deque()
        self.guard.after_fork()
        self.derived.after_fork()
        self._worker.after_fork()  # threads do not survive fork: a fresh one if one ran


_processors: weakref.WeakSet[CycleGuardSpanProcessor] = weakref.WeakSet()
_fork_hook_registered = False


def _after_fork_in_child() -> None:
    for processor in list(_processors):
        processor._after_fork()


def _register_fork_handler(processor: CycleGuardSpanProcessor) -> None:
    global _fork_hook_registered
    if not _fork_hook_registered and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)
        _fork_hook_registered = True
    _processors.add(processor)
