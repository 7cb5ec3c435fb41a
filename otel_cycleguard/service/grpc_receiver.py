"""OTLP/gRPC receiver: ``opentelemetry.proto.collector.trace.v1.TraceService/Export``.

The server is grpcio's asyncio server on a thread and event loop of its own. A call waiting
for its message is a coroutine there, not a thread: the thread-pool server reads each message
on a pool thread, so eight calls that send headers and half a message, then nothing, held all
eight of its threads and locked every exporter out for as long as they stayed open. Handling a
complete request (converting it and offering it to the queue) never blocks, so it runs on the
loop itself. Calls in flight are bounded per connection (``grpc.max_concurrent_streams``) and in
time: a connection is asked to go away after ``_MAX_CONNECTION_AGE_MS`` and closed, with whatever
it still has in flight, ``_MAX_CONNECTION_AGE_GRACE_MS`` later (exporters reconnect on GOAWAY).

Back-pressure follows the OTLP spec: a full queue answers ``RESOURCE_EXHAUSTED`` with a
``google.rpc.RetryInfo`` both in the standard status details (``grpc-status-details-bin``,
read by the Collector) and as ``google.rpc.retryinfo-bin`` trailing metadata (read by the
Python exporter). A bearer token, when configured, is checked on the ``authorization``
metadata (``UNAUTHENTICATED`` otherwise). gzip is negotiated by gRPC itself.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import threading
from typing import TYPE_CHECKING, Any

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from otel_cycleguard.service.convert import from_protobuf

if TYPE_CHECKING:
    from otel_cycleguard.service.intake import Intake

__all__ = ["GrpcReceiver"]

logger = logging.getLogger("otel_cycleguard.service")

_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
#: streams one connection may have open at once (an exporter uses one at a time; the
#: Collector one per sending-queue consumer, 10 by default)
_MAX_STREAMS_PER_CONNECTION = 32
_MAX_CONNECTION_AGE_MS = 5 * 60 * 1000
_MAX_CONNECTION_AGE_GRACE_MS = 30 * 1000
_START_TIMEOUT_S = 30.0


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


class _TraceService:
    """``TraceService/Export`` on the request's bytes, decoded by the same converter as
    OTLP/HTTP protobuf bodies (the compiled core; upb for what it leaves), not by grpcio's
    protobuf classes and the Python converter, which cost about five times as much a span."""

    def __init__(self, service: Intake) -> None:
        self.service = service

    def handler(self) -> grpc.GenericRpcHandler:
        export = grpc.unary_unary_rpc_method_handler(
            self.export,
            request_deserializer=None,  # the raw bytes
            response_serializer=ExportTraceServiceResponse.SerializeToString,
        )
        return grpc.method_handlers_generic_handler(_SERVICE, {"Export": export})

    async def export(
        self, body: bytes, context: grpc.aio.ServicerContext
    ) -> ExportTraceServiceResponse:
        svc = self.service
        if svc.stopping.is_set():
            svc.count_request("grpc", "unavailable")
            await context.abort(grpc.StatusCode.UNAVAILABLE, "shutting down; retry later")
        token = svc.settings.token
        if token:
            given = dict(context.invocation_metadata()).get("authorization", "")
            if not hmac.compare_digest(str(given).encode(), f"Bearer {token}".encode()):
                svc.count_request("grpc", "unauthenticated")
                await context.abort(
                    grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token"
                )
        try:
            converted = from_protobuf(body)
        except ValueError as exc:
            svc.count_request("grpc", "malformed")
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        if not svc.offer(converted.spans):
            if svc.stopping.is_set():
                svc.count_request("grpc", "unavailable")
                await context.abort(grpc.StatusCode.UNAVAILABLE, "shutting down; retry later")
            svc.count_request("grpc", "throttled", spans=len(converted.spans))
            message = "ingestion queue full ({} of {} spans)".format(*svc.queue_status())
            context.set_trailing_metadata(_retry_trailers(message, svc.settings.retry_after_s))
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, message)
        svc.count_request(
            "grpc", "accepted", spans=len(converted.spans), rejected=converted.rejected
        )
        response = ExportTraceServiceResponse()
        if converted.rejected:
            response.partial_success.rejected_spans = converted.rejected
            response.partial_success.error_message = converted.reason or "spans rejected"
        return response


class GrpcReceiver:
    """A ``grpc.aio`` server bound to ``host:port`` (port 0 picks a free one), on its own loop."""

    def __init__(self, service: Intake, host: str, port: int) -> None:
        self.host = host
        self._service = service
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="cg-grpc", daemon=True)
        self._thread.start()
        target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        try:
            self.server, self.port = self._call(self._bind(target), _START_TIMEOUT_S)
        except BaseException:
            self._close_loop()
            raise

    async def _bind(self, target: str) -> tuple[grpc.aio.Server, int]:
        settings = self._service.settings
        server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", settings.max_decompressed_bytes),
                ("grpc.max_concurrent_streams", _MAX_STREAMS_PER_CONNECTION),
                ("grpc.max_connection_age_ms", _MAX_CONNECTION_AGE_MS),
                ("grpc.max_connection_age_grace_ms", _MAX_CONNECTION_AGE_GRACE_MS),
                ("grpc.so_reuseport", 0),
            ],
        )
        server.add_generic_rpc_handlers((_TraceService(self._service).handler(),))
        try:
            port = server.add_insecure_port(target)
        except RuntimeError as exc:
            raise OSError(f"cannot bind OTLP/gRPC on {target}: {exc}") from exc
        if not port:
            raise OSError(f"cannot bind OTLP/gRPC on {target}")
        return server, port

    def _call(self, coroutine: Any, timeout_s: float) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout_s)

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port

    def start(self) -> None:
        self._call(self.server.start(), _START_TIMEOUT_S)

    def stop(self, grace_s: float = 5.0) -> None:
        """Refuse new calls, let calls in flight finish for ``grace_s``, then stop the loop."""
        try:
            self._call(self.server.stop(grace_s), grace_s + 5.0)
        finally:
            self._close_loop()

    def _close_loop(self) -> None:
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10.0)
        if not self._thread.is_alive():
            self._loop.close()
