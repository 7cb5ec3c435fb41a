"""OTLP payloads (protobuf ``ExportTraceServiceRequest`` or OTLP/JSON) to :class:`SpanData`.

The protobuf path is the hot one. An OTLP/HTTP body goes to the compiled core first
(``_core.otlp_spans``, rust/cycleguard-core/src/otlp_proto.rs): it reads the wire bytes and
makes the same :class:`SpanData` objects, about five times faster (benchmarks/convert.py).
On input it is not sure to read as upb does (malformed or unusual) it answers None, and the
Python path decides: upb parses the message, :func:`from_request` turns ids into hex with
``bytes.hex()`` and attribute values with one ``WhichOneof`` each. That path is the reference
the core is tested against (tests/service/test_convert_core.py); gRPC hands over parsed
messages and uses it directly. Spans that cannot be used (missing or wrongly sized ids, no
name) are counted as rejected, with the first reason kept for the OTLP partial-success
message.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_cycleguard import _core
from otel_cycleguard.spans import SpanData, SpanEvent
from otel_cycleguard.wire._json import loads as json_loads
from otel_cycleguard.wire._spandata import EVENT_FIELDS, FIELDS, new_span
from otel_cycleguard.wire.otlp_json import (
    MAX_VALUE_DEPTH,
    spans_from_json,
    spans_from_resource_spans,
)

__all__ = [
    "Converted",
    "from_json",
    "from_json_core",
    "from_json_python",
    "from_protobuf",
    "from_protobuf_core",
    "from_protobuf_upb",
    "from_request",
]

_STATUS_ERROR = 2
_ZERO_TRACE = bytes(16)
_ZERO_SPAN = bytes(8)


class Converted:
    """The usable spans of one request and how many were rejected (with the first reason)."""

    __slots__ = ("reason", "rejected", "spans")

    def __init__(self) -> None:
        self.spans: list[SpanData] = []
        self.rejected = 0
        self.reason: str | None = None

    def reject(self, reason: str) -> None:
        self.rejected += 1
        if self.reason is None:
            self.reason = reason


def _value(v: Any, depth: int = 0) -> Any:
    kind = v.WhichOneof("value")
    if kind == "string_value":
        return v.string_value
    if kind == "int_value":
        return v.int_value
    if kind == "bool_value":
        return v.bool_value
    if kind == "double_value":
        return v.double_value
    if kind == "array_value":  # nested too deep: left out (as OTLP/JSON, wire.otlp_json)
        if depth >= MAX_VALUE_DEPTH:
            return None
        return tuple([_value(item, depth + 1) for item in v.array_value.values])
    if kind == "kvlist_value":
        return _attributes(v.kvlist_value.values, depth + 1) if depth < MAX_VALUE_DEPTH else None
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return None


def _attributes(items: Iterable[Any], depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in items:
        v = kv.value
        text = v.string_value
        if text:  # a non-empty string can only be the string case of the oneof
            out[kv.key] = text
            continue
        kind = v.WhichOneof("value")
        # Inline the other common cases: an empty string, an int.
        if kind == "string_value":
            out[kv.key] = text
        elif kind == "int_value":
            out[kv.key] = v.int_value
        elif kind is not None:
            value = _value(v, depth)
            if value is not None:
                out[kv.key] = value
    return out


def from_request(request: ExportTraceServiceRequest) -> Converted:
    """Convert a parsed ``ExportTraceServiceRequest`` (what gRPC hands over)."""
    out = Converted()
    spans = out.spans
    append = spans.append
    for rs in request.resource_spans:
        resource = _attributes(rs.resource.attributes) if rs.HasField("resource") else {}
        for ss in rs.scope_spans:
            for span in ss.spans:
                trace_id = span.trace_id
                span_id = span.span_id
                if len(trace_id) != 16 or trace_id == _ZERO_TRACE:
                    out.reject(f"span {span.name!r}: trace_id must be 16 non-zero bytes")
                    continue
                if len(span_id) != 8 or span_id == _ZERO_SPAN:
                    out.reject(f"span {span.name!r}: span_id must be 8 non-zero bytes")
                    continue
                name = span.name
                if not name:
                    out.reject(f"span {span_id.hex()}: no name")
                    continue
                try:  # one unreadable span never costs its neighbours (try is free in 3.11)
                    converted = _span(span, trace_id, span_id, name, resource)
                except Exception as exc:
                    out.reject(f"span {span_id.hex()}: {type(exc).__name__}: {exc!s:.120}")
                    continue
                append(converted)
    return out


def _span(span: Any, trace_id: bytes, span_id: bytes, name: str, resource: Any) -> SpanData:
    parent = span.parent_span_id
    events = span.events
    status = span.status
    return new_span(
        trace_id.hex(),
        span_id.hex(),
        name,
        parent.hex() if len(parent) == 8 and parent != _ZERO_SPAN else None,
        span.start_time_unix_nano,
        span.end_time_unix_nano,
        _attributes(span.attributes),
        tuple(SpanEvent(e.name, _attributes(e.attributes), e.time_unix_nano) for e in events)
        if events
        else (),
        status.code == _STATUS_ERROR,
        status.message or None,
        resource,
    )


def from_protobuf(body: bytes) -> Converted:
    """Parse and convert an OTLP/HTTP protobuf body; raises ``ValueError`` when unparseable."""
    converted = from_protobuf_core(body)
    return converted if converted is not None else from_protobuf_upb(body)


def from_protobuf_core(body: bytes) -> Converted | None:
    """:func:`from_protobuf` by the compiled core, or None where the Python path must decide."""
    if body.__class__ is not bytes:  # the core reads bytes; upb takes any buffer
        return None
    decoded = _core.otlp_spans(body, SpanData, FIELDS, SpanEvent, EVENT_FIELDS, MAX_VALUE_DEPTH)
    if decoded is None:
        return None
    out = Converted()
    out.spans, out.rejected, out.reason = decoded
    return out


def from_protobuf_upb(body: bytes) -> Converted:
    """:func:`from_protobuf` by upb and :func:`from_request`: the reference, and the answer
    for whatever the core leaves (malformed input keeps upb's error message)."""
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except Exception as exc:  # google.protobuf.message.DecodeError and friends
        raise ValueError(f"not a valid ExportTraceServiceRequest protobuf ({exc})") from None
    return from_request(request)


def from_json(body: bytes) -> Converted:
    """Parse and convert an OTLP/JSON body; raises ``ValueError`` when it is not OTLP/JSON.

    The compiled core reads the usual body (:func:`from_json_core`); the rest takes the
    Python path (:func:`from_json_python`), which words the errors and counts the rejected
    spans.
    """
    converted = from_json_core(body)
    return converted if converted is not None else from_json_python(body)


def from_json_core(body: bytes) -> Converted | None:
    """:func:`from_json` by the compiled core, or None where the Python path must decide."""
    spans = spans_from_json(body)
    if spans is None:
        return None
    out = Converted()
    out.spans = spans
    return out


def from_json_python(body: bytes) -> Converted:
    """:func:`from_json` by orjson and the Python converter: the reference, and the answer
    for whatever the core leaves."""
    try:
        data = json_loads(body)  # orjson: nesting past 1024 levels is a JSONDecodeError
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"not valid JSON ({exc})") from None
    except RecursionError:  # the standard library's parser, when orjson is missing
        raise ValueError("not valid JSON (nested too deeply)") from None
    if not isinstance(data, dict):
        raise ValueError("an OTLP/JSON body must be an object with resourceSpans")
    blocks = data.get("resourceSpans", [])
    if not isinstance(blocks, list):
        raise ValueError("resourceSpans must be a list")
    out = Converted()
    out.spans.extend(spans_from_resource_spans(blocks, out.reject))
    return out
