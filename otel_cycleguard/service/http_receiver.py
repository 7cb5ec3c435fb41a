"""OTLP/HTTP receiver and the service's HTTP endpoints, on the standard library's HTTP server.

Routes (one port):

* ``POST /v1/traces``: OTLP/HTTP, ``application/x-protobuf`` or ``application/json``, optional
  ``Content-Encoding: gzip``; bearer token when configured.
* ``GET /healthz`` (alive), ``GET /readyz`` (accepting: restored, not stopping, queue below
  the high-water mark), ``GET /metrics`` (Prometheus exposition).
* ``GET /v1/decisions`` and ``POST /v1/decisions/{id}``: the HITL decision endpoint (a webhook
  that answered 202 posts the human's decision here); bearer decision token, or the webhook's
  HMAC signature headers.
* ``GET /v1/signals?session=...``: recent loop signals (the service cannot annotate traces).

Concurrency is bounded (``max_connections`` handler threads); a connection beyond that gets
``503`` with ``Retry-After`` at once. Every failure has a documented status; see docs/service.md.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from google.protobuf import json_format
from google.rpc import code_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from otel_cycleguard.escalate.hitl import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify_signature
from otel_cycleguard.service.convert import from_json, from_protobuf

if TYPE_CHECKING:
    from otel_cycleguard.service.app import CycleGuardService

__all__ = ["HttpReceiver"]

logger = logging.getLogger("otel_cycleguard.service")

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
_MAX_DECISION_BYTES = 64 * 1024


class _TooLarge(Exception):
    pass


def gunzip(data: bytes, limit: int) -> bytes:
    """Decompress gzip, refusing more than ``limit`` bytes of output (zip bombs)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as exc:
        raise ValueError(f"body is not valid gzip ({exc})") from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise _TooLarge(f"decompressed body exceeds {limit} bytes")
    if not inflater.eof:
        raise ValueError("gzip body is truncated")
    return out


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], handler: Any, max_connections: int) -> None:
        self._slots = threading.BoundedSemaphore(max_connections)
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.sendall(
                    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n"
                    b"Content-Length: 0\r\nConnection: close\r\n\r\n"
                )
            self.shutdown_request(request)
            return
        thread = threading.Thread(
            target=self._serve_one, args=(request, client_address), daemon=True
        )
        thread.start()

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            logger.debug("http connection from %s dropped: %s", client_address, exc)
        else:
            logger.exception("cycleguard serve: HTTP handler failed for %s", client_address)

    def _serve_one(self, request: Any, client_address: Any) -> None:
        try:
            self.process_request_thread(request, client_address)
        finally:
            self._slots.release()


class HttpReceiver:
    """Serves the HTTP routes for one :class:`CycleGuardService`."""

    def __init__(self, service: CycleGuardService, host: str, port: int) -> None:
        handler = type("Handler", (_Handler,), {"service": service})
        self.server = _Server((host, port), handler, service.settings.max_connections)
        self.thread = threading.Thread(
            target=self.server.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="cycleguard-http",
            daemon=True,
        )

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.server.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "cycleguard"
    sys_version = ""
    timeout = 30  # seconds of socket inactivity before a connection is dropped
    service: CycleGuardService

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("http %s " + format, self.client_address[0], *args)

    # -- routing ---------------------------------------------------------------------------

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        try:
            if path == "/v1/traces":
                self._ingest()
            elif path.startswith("/v1/decisions/"):
                self._decide(path[len("/v1/decisions/") :])
            else:
                self._refuse_body()
                self._status(404, f"no route POST {path}", JSON)
        except (TimeoutError, ConnectionError):
            self.close_connection = True

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        svc = self.service
        if parts.path == "/healthz":
            self._json(200, {"status": "ok"})
        elif parts.path == "/readyz":
            ready, detail = svc.readiness()
            self._json(200 if ready else 503, {"ready": ready, **detail})
        elif parts.path == "/metrics":
            self._send(200, generate_latest(svc.registry), CONTENT_TYPE_LATEST)
        elif parts.path == "/v1/decisions":
            if self._decision_auth(b""):
                self._json(200, {"pending": svc.engine.pending_requests()})
        elif parts.path == "/v1/signals":
            if self._ingest_auth():
                query = parse_qs(parts.query)
                session = (query.get("session") or [None])[0]
                self._json(200, {"signals": svc.recent.list(session)})
        else:
            self._status(404, f"no route GET {parts.path}", JSON)

    def do_PUT(self) -> None:
        self._refuse_body()
        self._status(405, "method not allowed", JSON)

    do_DELETE = do_PATCH = do_PUT

    # -- ingestion -------------------------------------------------------------------------

    def _ingest(self) -> None:
        svc = self.service
        settings = svc.settings
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        reply_type = JSON if ctype == JSON else PROTOBUF
        if svc.stopping.is_set():
            self._refuse_body()
            svc.count_request("http", "unavailable")
            self._status(503, "shutting down; retry later", reply_type, retry_after=1)
            return
        if not self._ingest_auth(reply_type):
            return
        if ctype not in (PROTOBUF, JSON):
            self._refuse_body()
            svc.count_request("http", "bad_content_type")
            self._status(
                415, f"Content-Type must be {PROTOBUF} or {JSON}, got {ctype or 'none'}", JSON
            )
            return
        encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding not in ("identity", "gzip", ""):
            self._refuse_body()
            svc.count_request("http", "bad_encoding")
            self._status(415, f"Content-Encoding must be gzip or identity, got {encoding}", ctype)
            return
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self._refuse_body()
            svc.count_request("http", "no_length")
            self._status(411, "chunked bodies are not accepted: send Content-Length", ctype)
            return
        length = self._length()
        if length is None:
            return
        if length > settings.max_request_bytes:
            self._refuse_body()
            svc.count_request("http", "too_large")
            self._status(413, f"body exceeds {settings.max_request_bytes} bytes", ctype)
            return
        body = self.rfile.read(length)
        if len(body) != length:
            self.close_connection = True
            return
        try:
            if encoding == "gzip":
                body = gunzip(body, settings.max_decompressed_bytes)
            elif length > settings.max_decompressed_bytes:
                raise _TooLarge(f"body exceeds {settings.max_decompressed_bytes} bytes")
            converted = from_protobuf(body) if ctype == PROTOBUF else from_json(body)
        except _TooLarge as exc:
            svc.count_request("http", "too_large")
            self._status(413, str(exc), ctype)
            return
        except ValueError as exc:
            svc.count_request("http", "malformed")
            self._status(400, str(exc), ctype)
            return
        if not svc.ingestor.offer(converted.spans):
            if svc.stopping.is_set():
                svc.count_request("http", "unavailable")
                self._status(503, "shutting down; retry later", ctype, retry_after=1)
            else:
                svc.count_request("http", "throttled", spans=len(converted.spans))
                self._status(
                    429,
                    f"ingestion queue full ({svc.ingestor.queued} of {svc.ingestor.capacity} "
                    "spans); retry later",
                    ctype,
                    retry_after=settings.retry_after_s,
                )
            return
        svc.count_request(
            "http", "accepted", spans=len(converted.spans), rejected=converted.rejected
        )
        response = ExportTraceServiceResponse()
        if converted.rejected:
            response.partial_success.rejected_spans = converted.rejected
            response.partial_success.error_message = converted.reason or "spans rejected"
        if ctype == PROTOBUF:
            self._send(200, response.SerializeToString(), PROTOBUF)
        else:
            self._send(200, json_format.MessageToJson(response, indent=None).encode(), JSON)

    def _length(self) -> int | None:
        raw = self.headers.get("Content-Length")
        try:
            length = int(raw) if raw is not None else -1
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            self.service.count_request("http", "no_length")
            self._status(411, "Content-Length required", JSON)
            return None
        return length

    def _ingest_auth(self, reply_type: str = JSON) -> bool:
        token = self.service.settings.token
        if not token:
            return True
        given = self.headers.get("Authorization") or ""
        if hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return True
        self._refuse_body()
        self.service.count_request("http", "unauthenticated")
        self._status(401, "missing or wrong bearer token", reply_type, bearer=True)
        return False

    # -- decisions -------------------------------------------------------------------------

    def _decision_auth(self, body: bytes) -> bool:
        settings = self.service.settings
        if not settings.decision_token and not settings.webhook_secret:
            self._status(
                403,
                "decision endpoint disabled: set a decision token or a webhook secret",
                JSON,
            )
            return False
        given = self.headers.get("Authorization") or ""
        if settings.decision_token and hmac.compare_digest(
            given.encode(), f"Bearer {settings.decision_token}".encode()
        ):
            return True
        if settings.webhook_secret and verify_signature(
            settings.webhook_secret,
            self.headers.get(TIMESTAMP_HEADER),
            body,
            self.headers.get(SIGNATURE_HEADER),
        ):
            return True
        self._status(401, "missing or wrong decision credentials", JSON, bearer=True)
        return False

    def _decide(self, request_id: str) -> None:
        length = self._length()
        if length is None:
            return
        if length > _MAX_DECISION_BYTES:
            self._refuse_body()
            self._status(413, f"decision body exceeds {_MAX_DECISION_BYTES} bytes", JSON)
            return
        body = self.rfile.read(length)
        if not self._decision_auth(body):
            return
        try:
            data = json.loads(body or b"null")
        except (UnicodeDecodeError, ValueError, RecursionError):  # nested thousands deep
            self._status(400, "decision body is not valid JSON", JSON)
            return
        if not isinstance(data, dict):
            self._status(400, 'expected {"decision": "continue|terminate|modify"}', JSON)
            return
        pending = self.service.pending
        if pending is None:
            self._status(404, "no webhook escalator: nothing can be pending", JSON)
            return
        try:
            ok = pending.resolve(request_id, data.get("decision"), data.get("message"))
        except ValueError as exc:
            self._status(400, str(exc), JSON)
            return
        if not ok:
            self._status(404, f"escalation {request_id!r} is unknown, expired or decided", JSON)
            return
        self._json(200, {"id": request_id, "decision": data.get("decision"), "status": "applied"})

    # -- responses -------------------------------------------------------------------------

    def _refuse_body(self) -> None:
        """We answer without reading the body: the connection cannot be reused."""
        self.close_connection = True

    def _status(
        self,
        code: int,
        message: str,
        ctype: str,
        *,
        retry_after: float | None = None,
        bearer: bool = False,
    ) -> None:
        grpc_code = {
            400: code_pb2.INVALID_ARGUMENT,
            401: code_pb2.UNAUTHENTICATED,
            403: code_pb2.PERMISSION_DENIED,
            404: code_pb2.NOT_FOUND,
            413: code_pb2.INVALID_ARGUMENT,
            429: code_pb2.RESOURCE_EXHAUSTED,
            503: code_pb2.UNAVAILABLE,
        }.get(code, code_pb2.INVALID_ARGUMENT)
        status = status_pb2.Status(code=grpc_code, message=message)
        headers = {}
        if retry_after is not None:
            headers["Retry-After"] = str(max(1, round(retry_after)))
        if bearer:
            headers["WWW-Authenticate"] = 'Bearer realm="cycleguard"'
        if ctype == PROTOBUF:
            self._send(code, status.SerializeToString(), PROTOBUF, headers)
        else:
            body = json.dumps({"code": grpc_code, "message": message}).encode()
            self._send(code, body, JSON, headers)

    def _json(self, code: int, data: Any) -> None:
        self._send(code, json.dumps(data).encode(), JSON)

    def _send(
        self, code: int, body: bytes, ctype: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
