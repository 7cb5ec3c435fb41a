"""How signals reach exported traces.

Ended spans are immutable in opentelemetry-sdk (edits in ``_on_ending``/``on_end`` are
dropped), and the tool span that fired a signal has ended by the time we know. So each signal
becomes a short child span ``cycleguard.signal`` parented on the offending tool (or model) span,
starting when it ended, carrying the ``cycleguard.*`` attributes and one span event
``cycleguard.warn`` / ``cycleguard.term``. Jaeger and Tempo draw it directly under that span.
It goes through the same provider, so it reaches whatever exporter the agent already uses.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, TracerProvider

from otel_cycleguard.detect import Signal
from otel_cycleguard.guard import Observer, SessionEntry

__all__ = ["SIGNAL_SPAN_NAME", "SignalAnnotator"]

SIGNAL_SPAN_NAME = "cycleguard.signal"
_SCOPE = "otel_cycleguard"


class SignalAnnotator(Observer):
    """Turns signals into ``cycleguard.signal`` child spans with a ``cycleguard.<level>`` event."""

    def __init__(self, tracer_provider: TracerProvider | None = None) -> None:
        self._provider = tracer_provider
        self._tracer: trace.Tracer | None = None

    def _get_tracer(self) -> trace.Tracer:
        if self._tracer is None:
            provider = self._provider or trace.get_tracer_provider()
            from otel_cycleguard import __version__

            self._tracer = provider.get_tracer(_SCOPE, __version__)
        return self._tracer

    def signals(self, entry: SessionEntry, signals: list[Signal], span_ref: Any) -> None:
        span_context = getattr(span_ref, "span_context", None)
        if span_context is None:
            return
        tracer = self._get_tracer()
        parent = trace.set_span_in_context(NonRecordingSpan(span_context))
        at = getattr(span_ref, "end_ns", 0) or None
        for signal in signals:
            attributes = signal.as_attributes()
            attributes["cycleguard.span_id"] = span_ref.span_id_hex
            span = tracer.start_span(
                SIGNAL_SPAN_NAME, context=parent, attributes=attributes, start_time=at
            )
            span.add_event(f"cycleguard.{signal.level.value}", attributes=attributes, timestamp=at)
            span.end(end_time=(at + 1_000) if at else None)
