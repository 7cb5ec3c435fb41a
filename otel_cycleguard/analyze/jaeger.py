"""Jaeger JSON (UI download, ``/api/traces`` response) to :class:`SpanData`.

Times are microseconds; they become nanoseconds, so sub-microsecond precision is lost. The
tags Jaeger adds when it converts OpenTelemetry spans (``span.kind``, ``otel.status_code``,
``error``, ``otel.scope.name``, ...) become the status and are not kept as attributes, so a
span reads the same from Jaeger as from OTLP. Jaeger cannot carry array or map attributes:
exporters write them as JSON strings, and they stay strings here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from otel_cycleguard.analyze.problems import BadSpan
from otel_cycleguard.spans import SpanData, SpanEvent
from otel_cycleguard.wire.ids import SPAN_ID_BYTES, TRACE_ID_BYTES, hex_id

__all__ = ["span_from_jaeger", "spans_from_jaeger_traces"]

Report = Callable[[str], None]

#: Tags that describe the span rather than being attributes of it.
_SPAN_TAGS = frozenset(
    {
        "span.kind",
        "otel.status_code",
        "otel.status_description",
        "error",
        "otel.scope.name",
        "otel.scope.version",
        "otel.library.name",
        "otel.library.version",
        "internal.span.format",
        "w3c.tracestate",
    }
)
_US = 1_000


def tag_value(tag: Mapping[str, Any]) -> Any:
    """The Python value of a Jaeger tag or log field, converted according to its ``type``."""
    value = tag.get("value")
    kind = str(tag.get("type") or "").lower()
    if kind == "bool":
        return value if isinstance(value, bool) else str(value).lower() == "true"
    if kind == "int64":
        return int(value)  # type: ignore[arg-type]
    if kind == "float64":
        return float(value)  # type: ignore[arg-type]
    return value


def span_from_jaeger(span: Mapping[str, Any], resource: Mapping[str, Any]) -> SpanData:
    """Convert one Jaeger span; raises :class:`BadSpan` with the reason to skip it."""
    name = span.get("operationName")
    label = f"span {name!r}" if name else "span"
    try:
        trace_id = hex_id(span.get("traceID"), TRACE_ID_BYTES, pad=True)
        span_id = hex_id(span.get("spanID"), SPAN_ID_BYTES, pad=True)
        if trace_id is None:
            raise BadSpan(f"{label} without traceID")
        if span_id is None:
            raise BadSpan(f"{label} without spanID")
        if not name or not isinstance(name, str):
            raise BadSpan(f"span {span_id} without an operationName")
        tags = {tag["key"]: tag_value(tag) for tag in span.get("tags") or ()}
        start_us = int(span.get("startTime") or 0)
        message = tags.get("otel.status_description")
        return SpanData(
            trace_id=trace_id,
            span_id=span_id,
            name=name,
            parent_span_id=_parent(span),
            start_ns=start_us * _US,
            end_ns=(start_us + int(span.get("duration") or 0)) * _US,
            attributes={k: v for k, v in tags.items() if k not in _SPAN_TAGS},
            events=tuple(_event(log) for log in span.get("logs") or ()),
            status_error=str(tags.get("otel.status_code", "")).upper() == "ERROR"
            or tags.get("error") is True
            or str(tags.get("error", "")).lower() == "true",
            status_message=str(message) if message else None,
            resource=resource,
        )
    except BadSpan:
        raise
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        reason = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise BadSpan(f"{label}: {reason}") from exc


def spans_from_jaeger_traces(
    traces: Iterable[Mapping[str, Any]], report: Report
) -> Iterator[SpanData]:
    """Yield the spans of the ``data`` list of a Jaeger response, reporting the ones skipped."""
    for trace in traces or ():
        try:
            processes = {
                key: _process_resource(process)
                for key, process in (trace.get("processes") or {}).items()
            }
            spans = trace.get("spans") or ()
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            report(f"Jaeger trace entry skipped: {exc}")
            continue
        for span in spans:
            try:
                inline = span.get("process")
                resource = (
                    _process_resource(inline)
                    if inline
                    else processes.get(span.get("processID"), {})
                )
                converted = span_from_jaeger(span, resource)
            except BadSpan as exc:
                report(str(exc))
                continue
            except (ValueError, TypeError, AttributeError, KeyError) as exc:
                report(f"span entry skipped: {exc!r:.120}")
                continue
            yield converted


def _parent(span: Mapping[str, Any]) -> str | None:
    """The parent span id: the first CHILD_OF reference, else a legacy ``parentSpanID``."""
    for ref in span.get("references") or ():
        if str(ref.get("refType", "")).upper() == "CHILD_OF":
            return hex_id(ref.get("spanID"), SPAN_ID_BYTES, pad=True)
    return hex_id(span.get("parentSpanID"), SPAN_ID_BYTES, pad=True)


def _event(log: Mapping[str, Any]) -> SpanEvent:
    """A Jaeger log as a span event: the ``event`` field is the name, the rest attributes."""
    fields = {field["key"]: tag_value(field) for field in log.get("fields") or ()}
    name = fields.pop("event", None)
    return SpanEvent(
        name=str(name) if name is not None else "log",
        attributes=fields,
        time_ns=int(log.get("timestamp") or 0) * _US,
    )


def _process_resource(process: Mapping[str, Any]) -> dict[str, Any]:
    """A Jaeger process as resource attributes: ``serviceName`` becomes ``service.name``."""
    resource = {tag["key"]: tag_value(tag) for tag in process.get("tags") or ()}
    service = process.get("serviceName")
    if service:
        resource["service.name"] = service
    return resource
