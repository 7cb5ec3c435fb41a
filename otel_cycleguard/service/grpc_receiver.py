"""OTLP/gRPC receiver: ``opentelemetry.proto.collector.trace.v1.TraceService/Export``.

Back-pressure follows the OTLP spec: a full queue answers ``RESOURCE_EXHAUSTED`` with a
``google.rpc.RetryInfo`` both in the standard status details (``grpc-status-details-bin``,
read by the Collector) and as ``google.rpc.retryinfo-bin`` trailing metadata (read by the
Python exporter). A bearer token, when configured, is checked on the ``authorization``
metadata (``UNAUTHENTICATED`` otherwise). gzip is negotiated by gRPC itself.
"""

from __future__ import annotations

import hmac
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from otel_cycleguard.service.convert import from_request

if TYPE_CHECKING:
    from otel_cycleguard.service.intake import Intake

__all__ = ["GrpcReceiver"]

logger = logging.getLogger("otel_cycleguard.service")


def _retry_trailers(message: str, delay_s: float) -> list[tuple[str, bytes]]:
    seconds = max(1, round(delay_s))
    info = error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=seconds))
    detail = any_pb2.Any()
    detail.Pack(info)
    status = status_pb2.Status(code=code_pb2.RESOURCE_EXHAUSTED, message=message, details=[detail])
    return [
        ("grpc-status-details-bin", status.SerializeToString()),
        ("google.rpc.retryinfo-bin", info.SerializeToString()),
    ]


class _TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, service: Intake) -> None:
        self.service = service

    def Export(self, request: Any, context: grpc.ServicerContext) -> ExportTraceServiceResponse:
        svc = self.service
        if svc.stopping.is_set():
            svc.count_request("grpc", "unavailable")
            context.abort(grpc.StatusCode.UNAVAILABLE, "shutting down; retry later")
        token = svc.settings.token
        if token:
            given = dict(context.invocation_metadata()).get("authorization", "")
            if not hmac.compare_digest(str(given).encode(), f"Bearer {token}".encode()):
                svc.count_request("grpc", "unauthenticated")
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
        converted = from_request(request)
        if not svc.offer(converted.spans):
            if svc.stopping.is_set():
                svc.count_request("grpc", "unavailable")
                context.abort(grpc.StatusCode.UNAVAILABLE, "shutting down; retry later")
            svc.count_request("grpc", "throttled", spans=len(converted.spans))
            message = "ingestion queue full ({} of {} spans)".format(*svc.queue_status())
            context.set_trailing_metadata(_retry_trailers(message, svc.settings.retry_after_s))
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, message)
        svc.count_request(
            "grpc", "accepted", spans=len(converted.spans), rejected=converted.rejected
        )
        response = ExportTraceServiceResponse()
        if converted.rejected:
            response.partial_success.rejected_spans = converted.rejected
            response.partial_success.error_message = converted.reason or "spans rejected"
        return response


class GrpcReceiver:
    """A grpcio server bound to ``host:port`` (port 0 picks a free one)."""

    def __init__(self, service: Intake, host: str, port: int) -> None:
        settings = service.settings
        self.server = grpc.server(
            ThreadPoolExecutor(max_workers=settings.grpc_workers, thread_name_prefix="cg-grpc"),
            maximum_concurrent_rpcs=settings.max_connections,
            options=[
                ("grpc.max_receive_message_length", settings.max_decompressed_bytes),
                ("grpc.so_reuseport", 0),
            ],
        )
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(
            _TraceService(service), self.server
        )
        target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self.port = self.server.add_insecure_port(target)
        if not self.port:
            raise OSError(f"cannot bind OTLP/gRPC on {target}")
        self.host = host

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port

    def start(self) -> None:
        self.server.start()

    def stop(self, grace_s: float = 5.0) -> None:
        self.server.stop(grace_s).wait(grace_s + 1)
