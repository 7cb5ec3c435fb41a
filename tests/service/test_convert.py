"""The service's protobuf conversion equals the plain one on the real encoder's output."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from otel_cycleguard.service.convert import from_protobuf, from_request
from otel_cycleguard.spans import SpanData, SpanEvent


def ref_value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "string_value":
        return v.string_value
    if kind == "int_value":
        return v.int_value
    if kind == "bool_value":
        return v.bool_value
    if kind == "double_value":
        return v.double_value
    if kind == "array_value":
        return tuple(ref_value(item) for item in v.array_value.values)
    if kind == "kvlist_value":
        return ref_attributes(v.kvlist_value.values)
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return None


def ref_attributes(items: Iterable[Any]) -> dict[str, Any]:
    out = {}
    for kv in items:
        value = ref_value(kv.value)
        if value is not None:
            out[kv.key] = value
    return out


def ref_spans(request: ExportTraceServiceRequest) -> list[SpanData]:
    """The conversion written plainly: every field read, every value by ``WhichOneof``."""
    spans = []
    for rs in request.resource_spans:
        resource = ref_attributes(rs.resource.attributes)
        for ss in rs.scope_spans:
            for span in ss.spans:
                parent = span.parent_span_id
                spans.append(
                    SpanData(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        name=span.name,
                        parent_span_id=parent.hex() if parent.strip(b"\0") else None,
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                        attributes=ref_attributes(span.attributes),
                        events=tuple(
                            SpanEvent(e.name, ref_attributes(e.attributes), e.time_unix_nano)
                            for e in span.events
                        ),
                        status_error=span.status.code == 2,
                        status_message=span.status.message or None,
                        resource=resource,
                    )
                )
    return spans


def sdk_spans() -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "agent", "n": 3}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span(
        "invoke_agent coder", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        for i in range(5):
            with tracer.start_as_current_span(
                "execute_tool grep",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "grep",
                    "gen_ai.tool.call.arguments": '{"pattern": "x"}',
                    "empty": "",
                    "count": i,
                    "zero": 0,
                    "negative": -5,
                    "ratio": 0.5,
                    "nothing": 0.0,
                    "flag": i % 2 == 0,
                    "no": False,
                    "paths": ("a.py", "b.py"),
                    "numbers": (1, 2),
                    "empty_list": (),
                },
            ) as tool:
                tool.add_event("retry", {"attempt": i, "why": "timeout"})
                if i == 3:
                    tool.set_status(Status(StatusCode.ERROR, "grep failed"))
            with tracer.start_as_current_span("chat", attributes={"gen_ai.usage.input_tokens": 9}):
                pass
    provider.shutdown()
    return list(exporter.get_finished_spans())


def test_protobuf_conversion_equals_the_plain_one() -> None:
    request = encode_spans(sdk_spans())
    # values the SDK cannot set: bytes and key-value lists
    extra = request.resource_spans[0].scope_spans[0].spans[0].attributes
    kv = extra.add(key="blob")
    kv.value.bytes_value = b"\x01\x02"
    kv = extra.add(key="map")
    inner = kv.value.kvlist_value.values.add(key="k")
    inner.value.string_value = "v"
    kv = extra.add(key="unset")
    body = request.SerializeToString()
    parsed = ExportTraceServiceRequest()
    parsed.ParseFromString(body)
    want = ref_spans(parsed)
    for got in (from_protobuf(body).spans, from_request(parsed).spans):
        assert len(got) == len(want) == 11
        assert list(map(repr, got)) == list(map(repr, want))  # repr tells 1, 1.0, True apart
        assert all(type(span) is SpanData for span in got)
    assert from_protobuf(body).rejected == 0
