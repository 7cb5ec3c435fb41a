"""Garbage, wrong types, oversized bodies, floods, bad credentials: documented answers only.

The service runs in-process here (a thread per receiver) so the worker can be held to fill
the queue deterministically; each test ends by checking the service is still up and that
everything it accepted was processed.
"""

from __future__ import annotations

import gzip
import http.client
import json
import threading

import grpc
import pytest
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.service import CycleGuardService, ServiceSettings
from tests.service.conftest import metric_value, wait_for

PB = "application/x-protobuf"


def tool_request(n: int, *, bad_ids: int = 0, trace: int = 1) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add().spans
    for i in range(n + bad_ids):
        span = spans.add()
        span.trace_id = trace.to_bytes(16, "big")
        span.span_id = (i + 1).to_bytes(8, "big") if i < n else b"\x01\x02"
        span.name = "execute_tool read"
        for key, value in (
            ("gen_ai.operation.name", "execute_tool"),
            ("gen_ai.tool.name", "read"),
            ("gen_ai.tool.call.arguments", f'{{"i": {i}}}'),
        ):
            span.attributes.append(KeyValue(key=key, value=AnyValue(string_value=value)))
    return request


@pytest.fixture(name="service")
def fixture_service(tmp_path):
    config = CycleGuardConfig(escalation={"progress_dir": str(tmp_path / "p")})
    settings = ServiceSettings(
        http_port=0,
        grpc_port=0,
        state_file=None,
        queue_spans=100,
        max_request_bytes=64 * 1024,
        max_decompressed_bytes=256 * 1024,
        decision_token="dt",
        retry_after_s=3,
    )
    svc = CycleGuardService(config, settings).start()
    yield svc
    svc.stop()


def post(svc, body: bytes, ctype: str = PB, headers: dict | None = None, path="/v1/traces"):
    conn = http.client.HTTPConnection(*svc.http.address, timeout=10)
    conn.request("POST", path, body=body, headers={"Content-Type": ctype, **(headers or {})})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp, data


def assert_healthy(svc) -> None:
    conn = http.client.HTTPConnection(*svc.http.address, timeout=10)
    conn.request("GET", "/healthz")
    assert conn.getresponse().status == 200
    resp, _ = post(svc, tool_request(1, trace=99).SerializeToString())
    assert resp.status == 200
    assert svc.ingestor.wait_idle()
    assert svc.ingestor.processed == svc.ingestor.accepted


class TestMalformed:
    @pytest.mark.parametrize(
        ("body", "ctype", "headers", "status"),
        [
            (b"\xff\xfe garbage", PB, {}, 400),
            (b"{not json", "application/json", {}, 400),
            (b'["a list"]', "application/json", {}, 400),
            (b"hello", "text/plain", {}, 415),
            (b"", "", {}, 415),
            (b"x", PB, {"Content-Encoding": "br"}, 415),
            (b"not gzip at all", PB, {"Content-Encoding": "gzip"}, 400),
            (gzip.compress(b"\x0a\x05")[:-6], PB, {"Content-Encoding": "gzip"}, 400),
        ],
    )
    def test_bad_bodies_get_a_clear_4xx(self, service, body, ctype, headers, status):
        resp, data = post(service, body, ctype, headers)
        assert resp.status == status
        if resp.getheader("Content-Type") == PB:
            parsed = status_pb2.Status()
            parsed.ParseFromString(data)
            assert parsed.message
        else:
            assert json.loads(data)["message"]
        assert_healthy(service)

    def test_oversized_and_zip_bombs_get_413(self, service):
        resp, _ = post(service, b"\0" * (64 * 1024 + 1))
        assert resp.status == 413
        bomb = gzip.compress(b"\0" * (1024 * 1024))  # 1 MiB inflates past the 256 KiB limit
        resp, _ = post(service, bomb, headers={"Content-Encoding": "gzip"})
        assert resp.status == 413
        assert_healthy(service)

    def test_missing_length_gets_411(self, service):
        conn = http.client.HTTPConnection(*service.http.address, timeout=10)
        conn.putrequest("POST", "/v1/traces")
        conn.putheader("Content-Type", PB)
        conn.putheader("Transfer-Encoding", "chunked")
        conn.endheaders()
        conn.send(b"0\r\n\r\n")
        assert conn.getresponse().status == 411
        assert_healthy(service)

    def test_bad_spans_are_a_partial_success(self, service):
        resp, data = post(service, tool_request(3, bad_ids=2).SerializeToString())
        assert resp.status == 200
        parsed = ExportTraceServiceResponse()
        parsed.ParseFromString(data)
        assert parsed.partial_success.rejected_spans == 2
        assert "span_id" in parsed.partial_success.error_message
        body = {
            "resourceSpans": [
                {
                    "scopeSpans": [
                        {
                            "spans": [
                                {"traceId": "0" * 31 + "1", "spanId": "0" * 15 + "1", "name": "ok"},
                                {"spanId": "0" * 15 + "2", "name": "no trace id"},
                            ]
                        }
                    ]
                }
            ]
        }
        resp, data = post(service, json.dumps(body).encode(), "application/json")
        assert resp.status == 200
        assert json.loads(data)["partialSuccess"]["rejectedSpans"] == "1"
        assert_healthy(service)

    @pytest.mark.parametrize("spans", [5, True, 1.5, "text", {"a": 1}])
    def test_a_scope_whose_spans_is_not_a_list_is_skipped_and_its_neighbour_kept(
        self, service, spans
    ):
        good = {"traceId": "0" * 31 + "7", "spanId": "0" * 15 + "1", "name": "kept"}
        body = {
            "resourceSpans": [
                {"scopeSpans": [{"spans": spans}]},
                {"scopeSpans": [{"spans": [good]}]},
            ]
        }
        accepted = service.ingestor.accepted
        resp, data = post(service, json.dumps(body).encode(), "application/json")
        assert resp.status == 200
        assert "not a list" in json.loads(data)["partialSuccess"]["errorMessage"]
        assert service.ingestor.accepted == accepted + 1
        assert_healthy(service)

    def test_an_absolute_form_target_gets_the_trace_body_limit(self, tmp_path):
        """``POST http://host/v1/traces`` (a form HTTP/1.1 servers must accept) with a large body."""
        settings = ServiceSettings(http_port=0, grpc_port=0, state_file=None)
        svc = CycleGuardService(CycleGuardConfig(), settings).start()
        try:
            request = tool_request(1, trace=5)
            request.resource_spans[0].scope_spans[0].spans[0].attributes.append(
                KeyValue(key="pad", value=AnyValue(string_value="z" * 100_000))
            )
            body = request.SerializeToString()
            conn = http.client.HTTPConnection(*svc.http.address, timeout=10)
            conn.request(
                "POST",
                "http://{}:{}/v1/traces".format(*svc.http.address),
                body=body,
                headers={"Content-Type": PB},
            )
            assert conn.getresponse().status == 200
            assert svc.ingestor.wait_idle()
            assert svc.ingestor.processed == 1
        finally:
            svc.stop()

    def test_a_grpc_message_that_is_not_otlp_gets_invalid_argument(self, service):
        with grpc.insecure_channel("{}:{}".format(*service.grpc.address)) as channel:
            export = channel.unary_unary(
                "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
            )  # no serializers: the bytes as they are
            with pytest.raises(grpc.RpcError) as info:
                export(b"\xff\xfe garbage", timeout=10)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "ExportTraceServiceRequest" in info.value.details()
        base = "http://{}:{}".format(*service.http.address)
        assert (
            metric_value(
                base, "cycleguard_service_requests_total", protocol="grpc", outcome="malformed"
            )
            == 1
        )
        assert_healthy(service)

    def test_grpc_partial_success(self, service):
        with grpc.insecure_channel("{}:{}".format(*service.grpc.address)) as channel:
            stub = trace_service_pb2_grpc.TraceServiceStub(channel)
            response = stub.Export(tool_request(2, bad_ids=1), timeout=10)
        assert response.partial_success.rejected_spans == 1


class TestFlood:
    def test_over_capacity_gets_429_and_resource_exhausted_and_nothing_accepted_is_lost(
        self, service
    ):
        gate = threading.Event()
        original = service.ingestor.process
        service.ingestor.process = lambda spans: (gate.wait(20), original(spans))
        accepted = throttled = 0
        for i in range(30):  # 30 x 10 spans into a 100-span queue
            resp, data = post(service, tool_request(10, trace=i + 1).SerializeToString())
            if resp.status == 200:
                accepted += 10
            else:
                assert resp.status == 429
                assert resp.getheader("Retry-After") == "3"
                status = status_pb2.Status()
                status.ParseFromString(data)
                assert status.code == code_pb2.RESOURCE_EXHAUSTED
                throttled += 1
        assert throttled and accepted <= 110
        with grpc.insecure_channel("{}:{}".format(*service.grpc.address)) as channel:
            stub = trace_service_pb2_grpc.TraceServiceStub(channel)
            with pytest.raises(grpc.RpcError) as info:
                stub.Export(tool_request(50), timeout=10)
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        trailers = dict(info.value.trailing_metadata())
        retry = error_details_pb2.RetryInfo()
        retry.ParseFromString(trailers["google.rpc.retryinfo-bin"])
        assert retry.retry_delay.seconds == 3
        ready = http.client.HTTPConnection(*service.http.address, timeout=10)
        ready.request("GET", "/readyz")
        assert ready.getresponse().status == 503  # above the high-water mark: not ready
        gate.set()
        assert service.ingestor.wait_idle()
        assert service.ingestor.processed == accepted
        base = "http://{}:{}".format(*service.http.address)
        assert metric_value(base, "cycleguard_tool_calls_total") == accepted
        assert (
            metric_value(base, "cycleguard_service_requests_total", outcome="throttled")
            >= throttled
        )
        assert_healthy(service)


class TestAuth:
    def test_ingestion_token(self, tmp_path):
        config = CycleGuardConfig(escalation={"progress_dir": str(tmp_path)})
        svc = CycleGuardService(
            config, ServiceSettings(http_port=0, grpc_port=0, state_file=None, token="s3cret")
        ).start()
        try:
            body = tool_request(1).SerializeToString()
            resp, _ = post(svc, body)
            assert resp.status == 401 and resp.getheader("WWW-Authenticate")
            resp, _ = post(svc, body, headers={"Authorization": "Bearer wrong"})
            assert resp.status == 401
            resp, _ = post(svc, body, headers={"Authorization": "Bearer s3cret"})
            assert resp.status == 200
            with grpc.insecure_channel("{}:{}".format(*svc.grpc.address)) as channel:
                stub = trace_service_pb2_grpc.TraceServiceStub(channel)
                with pytest.raises(grpc.RpcError) as info:
                    stub.Export(tool_request(1), timeout=10)
                assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
                stub.Export(
                    tool_request(1), metadata=[("authorization", "Bearer s3cret")], timeout=10
                )
        finally:
            svc.stop()

    def test_decision_endpoint(self, service, tmp_path):
        resp, _ = post(
            service, b'{"decision": "continue"}', "application/json", path="/v1/decisions/x"
        )
        assert resp.status == 401
        auth = {"Authorization": "Bearer dt"}
        resp, _ = post(
            service, b'{"decision": "continue"}', "application/json", auth, "/v1/decisions/x"
        )
        assert resp.status == 404  # no webhook escalator here: nothing is pending
        config = CycleGuardConfig(escalation={"progress_dir": str(tmp_path)})
        bare = CycleGuardService(
            config, ServiceSettings(http_port=0, grpc_port=None, state_file=None)
        ).start()
        try:
            resp, _ = post(bare, b"{}", "application/json", auth, "/v1/decisions/x")
            assert resp.status == 403  # no decision credentials configured: disabled
        finally:
            bare.stop()


class TestShutdown:
    def test_stop_drains_the_queue_and_refuses_new_data(self, tmp_path):
        config = CycleGuardConfig(escalation={"progress_dir": str(tmp_path)})
        svc = CycleGuardService(
            config,
            ServiceSettings(http_port=0, grpc_port=None, state_file=str(tmp_path / "s.json")),
        ).start()
        gate = threading.Event()
        original = svc.ingestor.process
        svc.ingestor.process = lambda spans: (gate.wait(20), original(spans))
        for i in range(5):
            assert post(svc, tool_request(20, trace=i + 1).SerializeToString())[0].status == 200
        stopper = threading.Thread(target=svc.stop)
        stopper.start()
        wait_for(svc.stopping.is_set)
        assert post(svc, tool_request(1).SerializeToString())[0].status == 503
        gate.set()
        stopper.join(30)
        assert svc.ingestor.processed == 100
        saved = json.loads((tmp_path / "s.json").read_text())
        assert saved["schema"] == "cycleguard.service-state/v1"
        assert sum(s["detector"]["tool_calls"] for s in saved["sessions"]) == 100
