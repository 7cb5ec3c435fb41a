r"""Recognise a parsed JSON document as one of the trace formats, and get its spans.

Each format is recognised by its top-level shape; a file of JSON lines holds one such
document per line. Examples, shortened:

OTLP JSON (``ExportTraceServiceRequest`` / ``TracesData``; the Collector file exporter writes
one per line)::

    {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name",
        "value": {"stringValue": "agent"}}]},
      "scopeSpans": [{"scope": {"name": "x"}, "spans": [{
        "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
        "parentSpanId": "", "name": "execute_tool search", "kind": 1,
        "startTimeUnixNano": "1704067200000000000", "endTimeUnixNano": "1704067201000000000",
        "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "search"}}],
        "events": [], "status": {"code": 2, "message": "boom"}}]}]}]}

Jaeger JSON (UI "download JSON", ``/api/traces/<id>``; times in microseconds)::

    {"data": [{"traceID": "5b8efff798038103d269b633813fc60c",
      "spans": [{"traceID": "5b8e...c60c", "spanID": "eee19b7ec3c1b174",
        "operationName": "execute_tool search",
        "references": [{"refType": "CHILD_OF", "traceID": "5b8e...c60c",
                        "spanID": "a1b2c3d4e5f60718"}],
        "startTime": 1704067200000000, "duration": 1000000,
        "tags": [{"key": "gen_ai.tool.name", "type": "string", "value": "search"},
                 {"key": "otel.status_code", "type": "string", "value": "ERROR"}],
        "logs": [{"timestamp": 1704067200500000,
                  "fields": [{"key": "event", "type": "string", "value": "retry"}]}],
        "processID": "p1"}],
      "processes": {"p1": {"serviceName": "agent", "tags": []}}}]}

Grafana Tempo JSON (``/api/traces/<id>`` gives ``batches``, ``/api/v2/traces/<id>`` gives
``trace``; ids base64, kind and status code often enum names)::

    {"batches": [{"resource": {...}, "instrumentationLibrarySpans": [{"spans": [{
        "traceId": "W47/95gDgQPSabYzgT/GDA==", "spanId": "7uGbfsPBsXQ=",
        "kind": "SPAN_KIND_INTERNAL", "status": {"code": "STATUS_CODE_ERROR"}, ...}]}]}]}
    {"trace": {"resourceSpans": [...]}}

Jaeger's API v3 (``{"result": {"resourceSpans": [...]}}``) is OTLP JSON and read as such.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from otel_cycleguard.analyze.jaeger import spans_from_jaeger_traces
from otel_cycleguard.spans import SpanData
from otel_cycleguard.wire.otlp_json import spans_from_resource_spans

__all__ = ["OTLP_JSON", "DocumentSpans", "describe_shape", "document_spans"]

OTLP_JSON = "OTLP JSON"
"""The format name of a ``resourceSpans`` document."""

Report = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class DocumentSpans:
    """A recognised document: its format's name and the (lazy) spans it holds."""

    format_name: str
    spans: Iterator[SpanData]


def document_spans(document: Any, report: Report) -> DocumentSpans | None:
    """Recognise ``document`` and return its spans, or None when it is no known format."""
    if not isinstance(document, Mapping):
        return None
    if "resourceSpans" in document:
        return DocumentSpans(
            OTLP_JSON, spans_from_resource_spans(document["resourceSpans"], report)
        )
    if not document:
        return DocumentSpans(OTLP_JSON, iter(()))  # MessageToJson of an empty request
    if "batches" in document:
        return DocumentSpans("Tempo JSON", spans_from_resource_spans(document["batches"], report))
    trace = document.get("trace")
    if isinstance(trace, Mapping):
        inner = trace.get("resourceSpans", trace.get("batches", ()))
        return DocumentSpans("Tempo JSON", spans_from_resource_spans(inner, report))
    result = document.get("result")
    if isinstance(result, Mapping) and "resourceSpans" in result:
        return DocumentSpans(
            "Jaeger API v3 (OTLP JSON)", spans_from_resource_spans(result["resourceSpans"], report)
        )
    data = document.get("data")
    if isinstance(data, list) and all(isinstance(t, Mapping) and "spans" in t for t in data[:1]):
        return DocumentSpans("Jaeger JSON", spans_from_jaeger_traces(data, report))
    return None


def describe_shape(document: Any) -> str:
    """A short description of an unrecognised document, for error messages."""
    if isinstance(document, Mapping):
        if isinstance(document.get("traces"), list):
            return (
                "a Tempo search result, which lists trace ids without their spans; "
                "download each trace from /api/traces/<trace id>"
            )
        keys = ", ".join(repr(key) for key in list(document)[:6])
        more = ", ..." if len(document) > 6 else ""
        return f"a JSON object with keys {keys}{more}"
    return f"a JSON {type(document).__name__}, not an object"
