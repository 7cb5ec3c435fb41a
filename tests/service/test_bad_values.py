"""Attribute values of every OTLP type, and spans that break detection: only they are lost.

One span whose ``gen_ai.operation.name`` is a map (OTLP ``kvlistValue``; opentelemetry-sdk
accepts a dict) used to raise in classification, and the worker then lost every later span of
the request after answering 200. Here eight requests of [such a span, one step of an
identical-call loop] go through each real client (OTLP/HTTP protobuf and gRPC with the
official exporters, OTLP/JSON over HTTP) to a real ``cycleguard serve``: the loop must reach
TERM exactly as it does without the bad neighbours.
"""

from __future__ import annotations

import json
import urllib.request

import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.guard import CycleGuard
from otel_cycleguard.service.convert import from_json, from_request
from otel_cycleguard.service.ingest import Ingestor
from otel_cycleguard.service.sessions import SessionResolver
from tests.service.conftest import wait_for

# Every shape an attribute can take, in the keys the guard reads (SDK extended attributes:
# dict -> kvlistValue, tuple -> arrayValue, bytes -> bytesValue).
WEIRD = [
    {"name": "execute_tool"},
    ({"a": 1}, {"b": [1, 2]}),
    b"\x00execute_tool",
    ("chat", "execute_tool"),
    3.5,
    True,
    7,
    {"nested": {"deeper": ({"deepest": "x"},)}},
]
READ_KEYS = (
    "gen_ai.tool.name",
    "gen_ai.conversation.id",
    "session.id",
    "gen_ai.agent.name",
    "openinference.span.kind",
    "traceloop.span.kind",
    "gen_ai.usage.input_tokens",
    "cycleguard.state_hash",
    "gen_ai.output.messages",
    "cycleguard.tool.read_only",
)


def _spans(conversation: str, steps: int = 8) -> list[list]:
    """``steps`` pairs [bad span, identical loop step], made by the real SDK."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bad-values")
    pairs = []
    for i in range(steps):
        weird = WEIRD[i % len(WEIRD)]
        bad = tracer.start_span(
            "execute_tool weird",
            attributes={
                **dict.fromkeys(READ_KEYS, weird),
                # unhashable, as in the issue: a map, or an array holding one
                "gen_ai.operation.name": {"name": "x"} if i % 2 else ({"a": 1}, "execute_tool"),
            },
        )
        bad.end()
        good = tracer.start_span(
            "execute_tool read_file",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "read_file",
                "gen_ai.conversation.id": conversation,
                "gen_ai.tool.call.arguments": json.dumps({"path": "a.txt"}),
                "gen_ai.tool.call.result": {"content": "same", "lines": (1, 2)},  # a map
            },
        )
        good.end()
        pairs.append(list(exporter.get_finished_spans()))
        exporter.clear()
    provider.shutdown()
    return pairs


def _post_json(base: str, spans: list) -> int:
    body = json_format.MessageToJson(encode_spans(spans)).encode()
    req = urllib.request.Request(
        base + "/v1/traces", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.status


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["json", "protobuf", "grpc"])
def test_one_bad_span_never_costs_its_neighbours(protocol, services, tmp_path):
    svc = services(
        "--state-file",
        "",
        env={"CYCLEGUARD_ESCALATION__PROGRESS_DIR": str(tmp_path / "progress")},
    ).start()
    conversation = f"weird-{protocol}"
    pairs = _spans(conversation)
    if protocol == "protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=svc.http + "/v1/traces", timeout=10)
        send = lambda spans: exporter.export(spans) == SpanExportResult.SUCCESS  # noqa: E731
    elif protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcExporter,
        )

        exporter = GrpcExporter(endpoint=f"127.0.0.1:{svc.grpc_port}", insecure=True, timeout=10)
        send = lambda spans: exporter.export(spans) == SpanExportResult.SUCCESS  # noqa: E731
    else:
        send = lambda spans: _post_json(svc.http, spans) == 200  # noqa: E731
    for pair in pairs:
        assert send(pair)
    wait_for(lambda: svc.metric("cycleguard_service_spans_processed") == 16)
    signals = svc.get_json(f"/v1/signals?session={conversation}")["signals"]
    assert ("identical_call", "term") in {(s["dimension"], s["level"]) for s in signals}
    assert svc.metric("cycleguard_tool_calls_total", tool="read_file") == 8
    assert svc.metric("cycleguard_service_spans_skipped_total") == 0  # read, not raised
    assert svc.stop() == 0


def test_every_value_type_converts_the_same_over_json_and_protobuf():
    pairs = _spans("c", steps=len(WEIRD))
    spans = [s for pair in pairs for s in pair]
    request = encode_spans(spans)
    by_pb = from_request(request).spans
    by_json = from_json(json_format.MessageToJson(request).encode()).spans
    assert len(by_pb) == len(by_json) == 2 * len(WEIRD)
    for a, b in zip(by_pb, by_json, strict=True):
        assert a.attributes.keys() == b.attributes.keys()


def test_a_span_that_raises_in_detection_is_skipped_and_counted_alone():
    """Fault injection (no real value is known to raise any more): the worker skips that one
    span, counts it and carries on with the rest of the request."""
    guard = CycleGuard(CycleGuardConfig())
    original = guard.observe_tool_call
    seen = []

    def observe(session, call, **kwargs):
        if call.arguments == '{"poison": true}':
            raise RuntimeError("a bug")
        seen.append(call.arguments)
        return original(session, call, **kwargs)

    guard.observe_tool_call = observe  # type: ignore[method-assign]
    ingestor = Ingestor(guard, SessionResolver())
    body = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "0" * 31 + "1",
                                "spanId": f"{i + 1:016x}",
                                "name": "execute_tool t",
                                "attributes": [
                                    {
                                        "key": "gen_ai.operation.name",
                                        "value": {"stringValue": "execute_tool"},
                                    },
                                    {
                                        "key": "gen_ai.tool.call.arguments",
                                        "value": {
                                            "stringValue": '{"poison": true}'
                                            if i == 1
                                            else f'{{"i": {i}}}'
                                        },
                                    },
                                ],
                            }
                            for i in range(4)
                        ]
                    }
                ]
            }
        ]
    }
    ingestor.process(from_json(json.dumps(body).encode()).spans)
    assert seen == ['{"i": 0}', '{"i": 2}', '{"i": 3}']
    assert ingestor.skipped == 1
