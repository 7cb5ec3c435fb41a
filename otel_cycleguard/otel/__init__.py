"""Adapters at the OpenTelemetry edge: the span processor, trace annotation, installation."""

from otel_cycleguard.otel.annotate import SIGNAL_SPAN_NAME, SignalAnnotator
from otel_cycleguard.otel.processor import CycleGuardSpanProcessor, SpanRef

__all__ = ["SIGNAL_SPAN_NAME", "CycleGuardSpanProcessor", "SignalAnnotator", "SpanRef"]
