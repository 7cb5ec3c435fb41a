"""OTLP JSON (also inside Tempo and Jaeger v3 responses) to :class:`SpanData`.

Accepts both the OTLP JSON spec (hex ids, enum values as ints) and the plain protobuf JSON
mapping that ``MessageToJson`` and Tempo produce (base64 ids, enum names such as
``STATUS_CODE_ERROR``, 64-bit integers as strings). Field names are the lowerCamelCase ones
the spec requires; the legacy ``instrumentationLibrarySpans`` is read like ``scopeSpans``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from otel_cycleguard.analyze.ids import SPAN_ID_BYTES, TRACE_ID_BYTES, hex_id
from otel_cycleguard.analyze.problems import BadSpan
from otel_cycleguard.spans import SpanData, SpanEvent

__all__ = ["any_value", "attributes", "span_from_otlp", "spans_from_resource_spans"]

Report = Callable[[str], None]

_ERROR_CODES = frozenset({2, "2", "STATUS_CODE_ERROR", "ERROR"})


def any_value(value: Mapping[str, Any]) -> Any:
    """Unwrap an OTLP ``AnyValue`` into a plain Python value (None when empty).

    Arrays become tuples, key-value lists dicts, bytes stay base64 text.
    """
    if "stringValue" in value:
        text = value["stringValue"]
        if not isinstance(text, str):
            raise ValueError(f"stringValue is not a string: {text!r}")
        return text
    if "intValue" in value:
        number = value["intValue"]
        if isinstance(number, bool) or not isinstance(number, (int, str)):
            raise ValueError(f"intValue is not an integer: {number!r}")
        return int(number)
    if "boolValue" in value:
        flag = value["boolValue"]
        if not isinstance(flag, bool):
            raise ValueError(f"boolValue is not a boolean: {flag!r}")
        return flag
    if "doubleValue" in value:
        real = value["doubleValue"]
        if isinstance(real, bool) or not isinstance(real, (int, float, str)):
            raise ValueError(f"doubleValue is not a number: {real!r}")
        return float(real)  # the protobuf mapping writes "NaN" and "Infinity" as strings
    if "arrayValue" in value:
        return tuple(any_value(item) for item in value["arrayValue"].get("values", ()))
    if "kvlistValue" in value:
        return attributes(value["kvlistValue"].get("values", ()))
    if "bytesValue" in value:
        return str(value["bytesValue"])
    return None


def attributes(items: Iterable[Mapping[str, Any]] | None) -> dict[str, Any]:
    """OTLP ``KeyValue`` list to a dict; keys with an empty value are left out."""
    result: dict[str, Any] = {}
    for item in items or ():
        key = item["key"]
        try:
            value = any_value(item.get("value") or {})
        except (ValueError, TypeError, AttributeError) as exc:
            raise ValueError(f"attribute {key!r}: {exc}") from exc
        if value is not None:
            result[key] = value
    return result


def span_from_otlp(span: Mapping[str, Any], resource: Mapping[str, Any]) -> SpanData:
    """Convert one OTLP JSON span; raises :class:`BadSpan` with the reason to skip it."""
    name = span.get("name")
    label = f"span {name!r}" if name else "span"
    try:
        trace_id = hex_id(span.get("traceId"), TRACE_ID_BYTES)
        span_id = hex_id(span.get("spanId"), SPAN_ID_BYTES)
        if trace_id is None:
            raise BadSpan(f"{label} without traceId")
        if span_id is None:
            raise BadSpan(f"{label} without spanId")
        if not name or not isinstance(name, str):
            raise BadSpan(f"span {span_id} without a name")
        status = span.get("status") or {}
        message = status.get("message") or None
        return SpanData(
            trace_id=trace_id,
            span_id=span_id,
            name=name,
            parent_span_id=hex_id(span.get("parentSpanId"), SPAN_ID_BYTES),
            start_ns=int(span.get("startTimeUnixNano") or 0),
            end_ns=int(span.get("endTimeUnixNano") or 0),
            attributes=attributes(span.get("attributes")),
            events=tuple(_event(event) for event in span.get("events") or ()),
            status_error=status.get("code") in _ERROR_CODES,
            status_message=str(message) if message is not None else None,
            resource=resource,
        )
    except BadSpan:
        raise
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise BadSpan(f"{label}: {_describe(exc)}") from exc


def spans_from_resource_spans(
    resource_spans: Iterable[Mapping[str, Any]], report: Report
) -> Iterator[SpanData]:
    """Yield the spans of a ``resourceSpans`` list, reporting the ones skipped.

    The resource attribute dict is shared by all spans of one resource.
    """
    for block in resource_spans or ():
        try:
            resource = attributes((block.get("resource") or {}).get("attributes"))
            scopes = block.get("scopeSpans") or block.get("instrumentationLibrarySpans") or ()
            span_lists = [scope.get("spans") or () for scope in scopes]
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            report(f"resourceSpans entry skipped: {_describe(exc)}")
            continue
        for spans in span_lists:
            for span in spans:
                try:
                    converted = span_from_otlp(span, resource)
                except BadSpan as exc:
                    report(str(exc))
                    continue
                except AttributeError:
                    report(f"span entry is not an object: {span!r:.80}")
                    continue
                yield converted


def _event(event: Mapping[str, Any]) -> SpanEvent:
    """Convert one OTLP span event."""
    return SpanEvent(
        name=str(event.get("name") or ""),
        attributes=attributes(event.get("attributes")),
        time_ns=int(event.get("timeUnixNano") or 0),
    )


def _describe(exc: Exception) -> str:
    """A one-line reason for a malformed value; KeyError alone would only show the key."""
    if isinstance(exc, KeyError):
        return f"missing field {exc}"
    return str(exc) or type(exc).__name__
