"""Span wire formats shared by the offline readers (``analyze``) and the OTLP service.

OTLP/JSON decoding, id normalisation and the fast :class:`~otel_cycleguard.spans.SpanData`
constructor live here, below both of their users, so neither reaches into the other.
No OpenTelemetry import here.
"""

from otel_cycleguard.wire.ids import BadSpan, hex_id
from otel_cycleguard.wire.otlp_json import spans_from_resource_spans

__all__ = ["BadSpan", "hex_id", "spans_from_resource_spans"]
