"""A span as plain data: the one shape every span source is turned into.

The live processor (opentelemetry-sdk ``ReadableSpan``), the offline readers (OTLP JSON,
Jaeger, Tempo) and the OTLP service (protobuf) each convert their spans into
:class:`SpanData`, so the conventions and the replay logic are written once.
No OpenTelemetry import here on purpose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SpanData", "SpanEvent", "SpanRef"]


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """A span event: name, attributes and time (ns since the epoch, 0 when unknown)."""

    name: str
    attributes: Mapping[str, Any] = field(default_factory=dict)
    time_ns: int = 0


@dataclass(frozen=True, slots=True)
class SpanData:
    """One finished span, independent of where it came from.

    Ids are lowercase hex (trace id 32 chars, span id 16 chars). ``status_error`` is true when
    the span status code is ERROR. Attribute values are the OTLP ones: str, bool, int, float,
    or sequences of those.
    """

    trace_id: str
    span_id: str
    name: str
    parent_span_id: str | None = None
    start_ns: int = 0
    end_ns: int = 0
    attributes: Mapping[str, Any] = field(default_factory=dict)
    events: Sequence[SpanEvent] = ()
    status_error: bool = False
    status_message: str | None = None
    resource: Mapping[str, Any] = field(default_factory=dict)


class SpanRef:
    """Identifies the span a signal fired on: ids (hex) and end time, for every span source.

    ``span_context`` is the OpenTelemetry ``SpanContext`` when the span came from this
    process's SDK (the annotator parents its signal span on it), else None: the offline
    replay and the OTLP service cannot annotate a span that was already exported.
    """

    __slots__ = ("end_ns", "span_context", "span_id_hex", "trace_id_hex")

    def __init__(
        self, trace_id_hex: str, span_id_hex: str, end_ns: int, span_context: Any = None
    ) -> None:
        self.trace_id_hex = trace_id_hex
        self.span_id_hex = span_id_hex
        self.end_ns = end_ns
        self.span_context = span_context

    def __repr__(self) -> str:
        return f"SpanRef(trace={self.trace_id_hex}, span={self.span_id_hex}, end={self.end_ns})"
