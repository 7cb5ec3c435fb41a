"""The service's protobuf conversion gives back the SDK's spans, through the real encoder."""

from __future__ import annotations

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


def expected(spans: list[ReadableSpan], extra: dict[str, Any]) -> list[SpanData]:
    """What conversion must give, read from the SDK's own spans (not from the protobuf): the
    source of truth the encoder and both decoders sit between. ``extra`` are the attributes
    added to the first span on the wire (values the SDK cannot set)."""
    out = []
    for n, span in enumerate(spans):
        ctx, parent = span.context, span.parent
        attributes = dict(span.attributes or {})
        if n == 0:
            attributes.update(extra)
        out.append(
            SpanData(
                trace_id=f"{ctx.trace_id:032x}",
                span_id=f"{ctx.span_id:016x}",
                name=span.name,
                parent_span_id=f"{parent.span_id:016x}" if parent is not None else None,
                start_ns=span.start_time or 0,
                end_ns=span.end_time or 0,
                attributes=attributes,
                events=tuple(
                    SpanEvent(e.name, dict(e.attributes or {}), e.timestamp) for e in span.events
                ),
                status_error=span.status.status_code is StatusCode.ERROR,
                status_message=span.status.description or None,
                resource=dict(span.resource.attributes),
            )
        )
    return out


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


def test_protobuf_conversion_gives_back_the_sdk_spans() -> None:
    source = sdk_spans()
    request = encode_spans(source)
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
    # bytes become hex, a key-value list a dict, an unset value is dropped
    want = expected(source, {"blob": "0102", "map": {"k": "v"}})
    for got in (from_protobuf(body).spans, from_request(parsed).spans):
        assert len(got) == len(want) == 11
        assert list(map(repr, got)) == list(map(repr, want))  # repr tells 1, 1.0, True apart
        assert all(type(span) is SpanData for span in got)
    assert from_protobuf(body).rejected == 0
