"""Signals survive a real exporter: OTLP/HTTP protobuf to a local receiver, and encode_spans."""

from __future__ import annotations

import gzip
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from otel_rig import agent_attrs, genai_tool, make_rig

from otel_cycleguard import CycleGuard, CycleGuardSpanProcessor, load_config
from otel_cycleguard.otel import SIGNAL_SPAN_NAME, SignalAnnotator

SIGNAL_KEYS = {
    "cycleguard.dimension",
    "cycleguard.level",
    "cycleguard.streak",
    "cycleguard.threshold",
}


class _Receiver(BaseHTTPRequestHandler):
    bodies: list[bytes]

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        encoding = self.headers.get("Content-Encoding", "")
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "deflate":
            body = zlib.decompress(body)
        if self.path == "/v1/traces":
            self.server.bodies.append(body)  # type: ignore[attr-defined]
        payload = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture(name="receiver")
def fixture_receiver():
    """A tiny OTLP/HTTP receiver on 127.0.0.1 that keeps every /v1/traces body."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    server.bodies = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _spans(requests):
    """(span, resource-less) protobuf spans of every ExportTraceServiceRequest."""
    out = []
    for request in requests:
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                out.extend(scope_spans.spans)
    return out


def _attrs(kv_list):
    out = {}
    for kv in kv_list:
        value = kv.value
        out[kv.key] = getattr(value, value.WhichOneof("value"))
    return out


def _run_agent_loop(tracer, times=6):
    with tracer.start_as_current_span("invoke_agent coder", attributes=agent_attrs("coder")):
        for _ in range(times):
            with tracer.start_as_current_span("execute_tool grep", attributes=genai_tool()):
                pass


def _assert_term_signal_on_offending_tool_span(spans):
    by_id = {span.span_id: span for span in spans}
    signals = [span for span in spans if span.name == SIGNAL_SPAN_NAME]
    terms = [
        span for span in signals if any(event.name == "cycleguard.term" for event in span.events)
    ]
    assert len(signals) == 2 and len(terms) == 1
    term = terms[0]
    parent = by_id[term.parent_span_id]
    assert parent.name == "execute_tool grep"
    assert parent.trace_id == term.trace_id
    tool_spans = [s for s in spans if s.name == "execute_tool grep"]
    assert parent.span_id == sorted(tool_spans, key=lambda s: s.end_time_unix_nano)[4].span_id
    (event,) = [e for e in term.events if e.name == "cycleguard.term"]
    attrs = _attrs(event.attributes)
    assert attrs.keys() >= SIGNAL_KEYS
    assert (attrs["cycleguard.dimension"], attrs["cycleguard.level"]) == ("identical_call", "term")
    assert (attrs["cycleguard.streak"], attrs["cycleguard.threshold"]) == (5, 5)
    assert attrs["cycleguard.span_id"] == parent.span_id.hex()
    assert term.start_time_unix_nano >= parent.end_time_unix_nano


class TestOtlpHttpExport:
    """Through BatchSpanProcessor + OTLPSpanExporter to a real HTTP receiver."""

    def test_signal_span_reaches_the_receiver_under_the_offending_tool_span(self, receiver):
        """The decoded ExportTraceServiceRequest holds the signal span, parented and attributed."""
        provider = TracerProvider()
        guard = CycleGuard(load_config(environ={}), observers=[SignalAnnotator(provider)])
        provider.add_span_processor(CycleGuardSpanProcessor(guard))
        endpoint = f"http://127.0.0.1:{receiver.server_address[1]}/v1/traces"
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
        _run_agent_loop(provider.get_tracer("agent"))
        assert provider.force_flush(10_000)
        provider.shutdown()
        requests = []
        for body in receiver.bodies:
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            requests.append(request)
        spans = _spans(requests)
        assert len(spans) == 1 + 6 + 2
        _assert_term_signal_on_offending_tool_span(spans)
        scopes = {
            scope_spans.scope.name
            for request in requests
            for resource_spans in request.resource_spans
            for scope_spans in resource_spans.scope_spans
            if any(span.name == SIGNAL_SPAN_NAME for span in scope_spans.spans)
        }
        assert scopes == {"otel_cycleguard"}


class TestEncodeSpans:
    """The same through encode_spans on what an InMemorySpanExporter collected."""

    def test_signal_span_survives_protobuf_encoding(self):
        """encode_spans keeps the signal span, its parent link and its event attributes."""
        rig = make_rig()
        _run_agent_loop(rig.tracer)
        request = encode_spans(rig.exporter.get_finished_spans())
        decoded = ExportTraceServiceRequest()
        decoded.ParseFromString(request.SerializeToString())
        _assert_term_signal_on_offending_tool_span(_spans([decoded]))
