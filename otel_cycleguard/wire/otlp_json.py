"""OTLP JSON (also inside Tempo and Jaeger v3 responses) to :class:`SpanData`.

Accepts both the OTLP JSON spec (hex ids, enum values as ints) and the plain protobuf JSON
mapping that ``MessageToJson`` and Tempo produce (base64 ids, enum names such as
``STATUS_CODE_ERROR``, 64-bit integers as strings). Field names are the lowerCamelCase ones
the spec requires; the legacy ``instrumentationLibrarySpans`` is read like ``scopeSpans``.

A whole document given as bytes goes to the compiled core first (:func:`spans_from_json`,
rust/cycleguard-core/src/otlp_json.rs): it parses and converts in one pass, without
orjson's dicts, and gives the same spans. Whatever it is not sure to read as this module does
(invalid JSON, a span this module would skip, an unusual form) it leaves to the Python path,
which keeps the verdicts and the worded reasons; tests/analyze/test_otlp_json_core.py holds the
two to the same answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from otel_cycleguard import _core
from otel_cycleguard.spans import SpanData, SpanEvent
from otel_cycleguard.wire._spandata import EVENT_FIELDS, FIELDS, new_span
from otel_cycleguard.wire.ids import SPAN_ID_BYTES, TRACE_ID_BYTES, BadSpan, hex_id

__all__ = [
    "MAX_VALUE_DEPTH",
    "any_value",
    "attributes",
    "span_from_otlp",
    "spans_from_json",
    "spans_from_resource_spans",
]

MAX_VALUE_DEPTH = 32
"""Arrays and maps nested deeper than this are cut (the inner value is left out): no
instrumentation nests that deep, and unbounded recursion would end in ``RecursionError``."""

Report = Callable[[str], None]

_ERROR_CODES = frozenset({2, "2", "STATUS_CODE_ERROR", "ERROR"})
# The last trace id and parent id validated, as (raw, hex) pairs: a tuple is replaced whole,
# so threads converting at once read a consistent pair.
_NOTHING = object()  # equal to no JSON value
_last_trace_id: tuple[object, str] = (_NOTHING, "")
_last_parent_id: tuple[object, str] = (_NOTHING, "")


def any_value(value: Mapping[str, Any], _depth: int = 0) -> Any:
    """Unwrap an OTLP ``AnyValue`` into a plain Python value (None when empty).

    Arrays become tuples, key-value lists dicts, bytes stay base64 text. Values nested more
    than :data:`MAX_VALUE_DEPTH` arrays/maps deep are None (left out).
    """
    if value.__class__ is dict and len(value) == 1:
        # One key, as every exporter writes it: dispatch on it (same checks as below).
        for kind in value:
            unwrap = _UNWRAP.get(kind)
            if unwrap is None:
                return None
            if unwrap is _array or unwrap is _kvlist:
                return unwrap(value[kind], _depth + 1)
            return unwrap(value[kind])
    if "stringValue" in value:
        return _string(value["stringValue"])
    if "intValue" in value:
        return _int(value["intValue"])
    if "boolValue" in value:
        return _bool(value["boolValue"])
    if "doubleValue" in value:
        return _double(value["doubleValue"])
    if "arrayValue" in value:
        return _array(value["arrayValue"], _depth + 1)
    if "kvlistValue" in value:
        return _kvlist(value["kvlistValue"], _depth + 1)
    if "bytesValue" in value:
        return str(value["bytesValue"])
    return None


def _string(text: Any) -> str:
    if not isinstance(text, str):
        raise ValueError(f"stringValue is not a string: {text!r}")
    return text


def _int(number: Any) -> int:
    if isinstance(number, bool) or not isinstance(number, (int, str)):
        raise ValueError(f"intValue is not an integer: {number!r}")
    return int(number)


def _bool(flag: Any) -> bool:
    if not isinstance(flag, bool):
        raise ValueError(f"boolValue is not a boolean: {flag!r}")
    return flag


def _double(real: Any) -> float:
    if isinstance(real, bool) or not isinstance(real, (int, float, str)):
        raise ValueError(f"doubleValue is not a number: {real!r}")
    return float(real)  # the protobuf mapping writes "NaN" and "Infinity" as strings


def _array(array: Any, depth: int = 1) -> tuple[Any, ...] | None:
    if depth > MAX_VALUE_DEPTH:
        return None
    return tuple([any_value(item, depth) for item in array.get("values", ())])


def _kvlist(kvlist: Any, depth: int = 1) -> dict[str, Any] | None:
    if depth > MAX_VALUE_DEPTH:
        return None
    return attributes(kvlist.get("values", ()), depth)


_UNWRAP: dict[str, Callable[[Any], Any]] = {
    "stringValue": _string,
    "intValue": _int,
    "boolValue": _bool,
    "doubleValue": _double,
    "arrayValue": _array,
    "kvlistValue": _kvlist,
    "bytesValue": str,
}


def attributes(items: Iterable[Mapping[str, Any]] | None, _depth: int = 0) -> dict[str, Any]:
    """OTLP ``KeyValue`` list to a dict; keys with an empty value are left out."""
    result: dict[str, Any] = {}
    for item in items or ():
        key = item["key"]
        value = item.get("value")
        if value.__class__ is dict:
            # Most values are strings; ``any_value`` would return this one as it is.
            text = value.get("stringValue")
            if text.__class__ is str:
                result[key] = text
                continue
            if text is None and len(value) == 1:  # {"intValue": "123"}: int() it, if it can
                number = value.get("intValue")
                if number.__class__ is str:
                    try:
                        result[key] = int(number)
                        continue
                    except ValueError:
                        pass  # any_value words the error
        try:
            value = any_value(value or {}, _depth)
        except (ValueError, TypeError, AttributeError) as exc:
            raise ValueError(f"attribute {key!r}: {exc}") from exc
        if value is not None:
            result[key] = value
    return result


def span_from_otlp(span: Mapping[str, Any], resource: Mapping[str, Any]) -> SpanData:
    """Convert one OTLP JSON span; raises :class:`BadSpan` with the reason to skip it."""
    if span.__class__ is dict:
        try:
            converted = _fast_span(span, resource)  # type: ignore[arg-type]
        except Exception:  # the checked conversion decides and words the error
            converted = None
        if converted is not None:
            return converted
    return _checked_span(span, resource)


def _checked_span(span: Mapping[str, Any], resource: Mapping[str, Any]) -> SpanData:
    """The reference conversion: every field checked in order, errors worded for the user."""
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


def _fast_span(span: dict[str, Any], resource: Mapping[str, Any]) -> SpanData | None:
    """:func:`_checked_span` for a well-formed span, without its per-field overhead.

    Returns exactly what ``_checked_span`` returns, or None (or raises anything) when the span
    is not plainly valid: the caller then runs ``_checked_span``, which rejects it or, for an
    unusual but valid form, converts it. Ids go through :func:`hex_id` (its own fast path
    takes lowercase hex of the right width as it is), the trace and parent ids once per run
    of spans that share them.
    """
    global _last_trace_id, _last_parent_id
    get = span.get
    raw_trace = get("traceId")
    last = _last_trace_id  # the spans of a document mostly share one trace id: check it once
    if raw_trace == last[0]:
        trace_id: str | None = last[1]
    else:
        trace_id = hex_id(raw_trace, TRACE_ID_BYTES)
        if trace_id is not None:
            _last_trace_id = (raw_trace, trace_id)
    span_id = hex_id(get("spanId"), SPAN_ID_BYTES)
    name = get("name")
    if trace_id is None or span_id is None or name.__class__ is not str or not name:
        return None
    parent = get("parentSpanId")
    if parent is not None:
        last = _last_parent_id  # and siblings one parent
        if parent == last[0]:
            parent = last[1]
        else:
            raw_parent = parent
            parent = hex_id(raw_parent, SPAN_ID_BYTES)
            if parent is not None:
                _last_parent_id = (raw_parent, parent)
    status = get("status")
    if status:
        message = status.get("message") or None
        status_error = status.get("code") in _ERROR_CODES
        if message is not None:
            message = str(message)
    else:
        status_error = False
        message = None
    events = get("events")
    return new_span(
        trace_id,
        span_id,
        name,
        parent,
        int(get("startTimeUnixNano") or 0),
        int(get("endTimeUnixNano") or 0),
        attributes(get("attributes")),
        tuple([_event(event) for event in events]) if events else (),
        status_error,
        message,
        resource,
    )


def spans_from_json(document: bytes) -> list[SpanData] | None:
    """The spans of one OTLP JSON document (``{"resourceSpans": [...]}``), read by the core.

    Gives what ``spans_from_resource_spans(orjson.loads(document)["resourceSpans"], ...)``
    gives when every span converts, and None when the Python path must decide: the input is
    not JSON, not an object with a ``resourceSpans`` list, holds a span that path would skip
    or report, or a form only the general Python code reads.
    """
    if document.__class__ is not bytes:
        return None
    spans: list[SpanData] | None = _core.otlp_json_spans(
        document, SpanData, FIELDS, SpanEvent, EVENT_FIELDS, MAX_VALUE_DEPTH
    )
    return spans


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
            if not isinstance(spans, (list, tuple)):
                report(f"scopeSpans entry skipped: spans is {type(spans).__name__}, not a list")
                continue
            for span in spans:
                try:
                    converted = span_from_otlp(span, resource)
                except BadSpan as exc:
                    report(str(exc))
                    continue
                except AttributeError:
                    report(f"span entry is not an object: {span!r:.80}")
                    continue
                except Exception as exc:  # one unreadable span never costs its neighbours
                    report(f"span skipped: {type(exc).__name__}: {exc!s:.120}")
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
