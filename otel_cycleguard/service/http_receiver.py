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

Slow clients cannot lock anyone out. Connections are read by one asyncio event loop (a
socket and a buffer each, no thread), and only *complete* requests go to a few handler
threads; a request must arrive whole within ``request_timeout_s`` of its first byte (408
otherwise), however slowly it trickles. At most ``max_connections`` complete requests are
handled at once (``503`` + ``Retry-After`` beyond); at most ``max_open_connections`` sockets are
open, and at that cap a new connection evicts the one that has been idle or reading an
incomplete request the longest (for a second at least), so a flood of slow connections
always yields to a new one. ``GET /healthz`` is answered on the loop itself. Every failure
has a documented status; see docs/service.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import io
import json
import logging
import socket
import threading
import time
import zlib
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from google.protobuf import json_format
from google.rpc import code_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from prometheus_client import CONTENT_TYPE_LATEST

from otel_cycleguard.escalate.hitl import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify_signature
from otel_cycleguard.service.convert import from_json, from_protobuf

if TYPE_CHECKING:
    from otel_cycleguard.service.intake import Endpoints

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


_MAX_HEAD_BYTES = 64 * 1024  # request line + headers
_EVICTABLE_AFTER_S = 1.0  # a connection idle or mid-request this long may be evicted at the cap
_MAX_UNSENT_BYTES = 4 * 1024 * 1024  # a client that does not read its responses is dropped
_HEALTHZ = b'{"status": "ok"}'


def _plain(code: int, reason: str, body: bytes = b"", extra: str = "") -> bytes:
    """A complete response with ``Connection: close`` (answers given by the loop itself)."""
    return (
        f"HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n{extra}Connection: close\r\n\r\n"
    ).encode() + body


_BUSY = _plain(
    503, "Service Unavailable", b'{"code": 14, "message": "busy; retry"}', "Retry-After: 1\r\n"
)
_TIMEOUT = _plain(408, "Request Timeout", b'{"code": 4, "message": "request not complete in time"}')
_HEAD_TOO_LARGE = _plain(431, "Request Header Fields Too Large")


class _Head:
    """What the loop needs of a request head to know where its body ends."""

    __slots__ = ("body_limit", "expect_continue", "length", "path")

    def __init__(self, head: bytes, settings: Any) -> None:
        lines = head.split(b"\r\n")
        parts = lines[0].split()
        # parsed as the handler parses it, so an absolute-form target (``POST http://h/v1/traces``)
        # gets the trace body limit too
        self.path = urlsplit(parts[1]).path if len(parts) > 1 else b""
        fields: dict[bytes, bytes] = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            fields.setdefault(name.strip().lower(), value.strip())
        self.expect_continue = fields.get(b"expect", b"").lower() == b"100-continue" and (
            len(parts) > 2 and parts[2] == b"HTTP/1.1"
        )
        try:
            length = int(fields.get(b"content-length", b"0"))
        except ValueError:
            length = 0  # the handler answers 411 and closes
        if b"chunked" in fields.get(b"transfer-encoding", b"").lower() or length < 0:
            length = 0
        self.length = length
        self.body_limit = (
            settings.max_request_bytes if self.path == b"/v1/traces" else _MAX_DECISION_BYTES
        )


class _Front:
    """The event loop's bookkeeping: open connections (oldest phase first), limits, budget."""

    def __init__(self, receiver: HttpReceiver, settings: Any) -> None:
        self.receiver = receiver
        self.settings = settings
        self.waiting: OrderedDict[_Connection, None] = OrderedDict()  # idle or mid-request
        self.open = 0
        self.handling = 0  # complete requests handed to the handler threads
        self.buffered = 0  # bytes held by connections, all told
        self.budget = max(64 * 1024 * 1024, 16 * settings.max_request_bytes)
        self.evicted = 0
        self.timed_out = 0
        self.lingering = 0  # closed sockets still reading for _LINGER_S

    def admit(self, conn: _Connection) -> bool:
        """Room for a new connection: evict the longest-waiting one at the cap."""
        if self.open >= self.receiver.max_open:
            oldest = next(iter(self.waiting), None)
            if oldest is None or time.monotonic() - oldest.since < _EVICTABLE_AFTER_S:
                return False
            self.evicted += 1
            oldest.abort(_BUSY)
        self.open += 1
        return True


class _Connection(asyncio.Protocol):
    """One client connection: buffers a request until it is whole, then hands it over."""

    def __init__(self, front: _Front) -> None:
        self.front = front
        self.transport: asyncio.Transport | None = None
        self.peer: Any = ("", 0)
        self.buf = bytearray()
        self.head: _Head | None = None
        self.head_end = 0
        self.busy = False
        self.closed = False
        self.counted = False
        self.since = time.monotonic()
        self.timer: asyncio.TimerHandle | None = None
        self.continued = False
        self.discard = False

    # -- asyncio callbacks -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.peer = transport.get_extra_info("peername") or ("", 0)
        if not self.front.admit(self):
            self.closed = True
            transport.write(_BUSY)  # type: ignore[attr-defined]
            _linger_close(transport, self.front)  # type: ignore[arg-type]
            return
        self.counted = True
        self._phase(self.front.settings.request_timeout_s, _TIMEOUT)

    def data_received(self, data: bytes) -> None:
        if self.closed or self.discard:
            return
        front = self.front
        if front.buffered + len(data) > front.budget:
            self.abort(_BUSY)  # too much held at once, all connections told: shed this one
            return
        if not self.buf and not self.busy and self.head is None:
            self._phase(front.settings.request_timeout_s, _TIMEOUT)  # a request starts
        self.buf += data
        front.buffered += len(data)
        if len(self.buf) > _MAX_HEAD_BYTES + front.settings.max_request_bytes:
            self.abort(_BUSY)  # pipelining far ahead of its answers
            return
        if not self.busy:
            self._next_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._release()

    # -- requests ----------------------------------------------------------------------------

    def _next_request(self) -> None:
        buf = self.buf
        if self.head is None:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > _MAX_HEAD_BYTES:
                    self.abort(_HEAD_TOO_LARGE)
                return
            self.head_end = end + 4
            self.head = _Head(bytes(buf[:end]), self.front.settings)
        head = self.head
        skip = head.length > head.body_limit  # answered (413 and close) without reading it
        self.discard = skip  # and what follows of it is not buffered
        need = self.head_end + (0 if skip else head.length)
        if len(buf) < need:
            if head.expect_continue and not self.continued and self.transport is not None:
                self.continued = True
                self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            return
        healthz = head.path == b"/healthz" and buf.startswith(b"GET ")  # answered right here
        raw = None if healthz else bytes(buf[:need])
        del buf[:need]
        self.front.buffered -= need
        self.head = None
        self.continued = False
        self._cancel_timer()
        self.front.waiting.pop(self, None)
        if raw is None:
            self._respond(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(_HEALTHZ)).encode()
                + b"\r\n\r\n"
                + _HEALTHZ,
                False,
            )
            return
        front = self.front
        if front.handling >= front.settings.max_connections:
            self.abort(_BUSY)
            return
        front.handling += 1
        self.busy = True
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(front.receiver.pool, front.receiver.handle, raw, self.peer)
        future.add_done_callback(lambda f: self._handled(f, skip))

    def _handled(self, future: asyncio.Future[tuple[bytes, bool]], skip: bool) -> None:
        self.front.handling -= 1
        self.busy = False
        try:
            response, close = future.result()
        except Exception:  # handle() catches everything; belt and braces
            response, close = _BUSY, True
        self._respond(response, close or skip)

    def _respond(self, response: bytes, close: bool) -> None:
        transport = self.transport
        if self.closed or transport is None:
            return
        transport.write(response)
        if close or transport.get_write_buffer_size() > _MAX_UNSENT_BYTES:
            self.closed = True
            _linger_close(transport, self.front)
            return
        if self.buf:
            self._phase(self.front.settings.request_timeout_s, _TIMEOUT)
            self._next_request()
        else:
            self._phase(_IDLE_TIMEOUT_S, None)

    # -- deadlines and closing ---------------------------------------------------------------

    def _phase(self, seconds: float, answer: bytes | None) -> None:
        """Start a phase (reading a request, or idle) that must end within ``seconds``."""
        self._cancel_timer()
        self.since = time.monotonic()
        waiting = self.front.waiting
        waiting.pop(self, None)
        waiting[self] = None  # newest last: the first entry is the longest waiting
        self.timer = asyncio.get_running_loop().call_later(seconds, self._expired, answer)

    def _expired(self, answer: bytes | None) -> None:
        if answer is not None:
            self.front.timed_out += 1
        self.abort(answer)

    def _cancel_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def abort(self, answer: bytes | None) -> None:
        """Answer (when there is something to say) and close, dropping what was buffered."""
        if self.closed:
            return
        self.closed = True
        transport = self.transport
        if transport is not None:
            if answer is not None and not self.busy:
                transport.write(answer)
            _linger_close(transport, self.front)
        self._release()

    def _release(self) -> None:
        self.closed = True
        self._cancel_timer()
        front = self.front
        front.waiting.pop(self, None)
        front.buffered -= len(self.buf)
        self.buf = bytearray()
        if self.counted:
            self.counted = False
            front.open -= 1


_IDLE_TIMEOUT_S = 30.0  # a keep-alive connection with no request in flight
_LINGER_S = 0.5


_MAX_LINGERING = 256  # sockets closing gracefully at once; past that, closed at once


def _linger_close(transport: asyncio.Transport, front: _Front) -> None:
    """Close after the answer: send FIN, and read (and discard) a moment longer, so request
    bytes still arriving do not turn the close into a reset that destroys the answer."""
    if transport.is_closing():
        return
    if not transport.can_write_eof() or front.lingering >= _MAX_LINGERING:
        transport.close()
        return
    transport.write_eof()
    front.lingering += 1

    def close() -> None:
        front.lingering -= 1
        transport.close()

    asyncio.get_running_loop().call_later(_LINGER_S, close)


def _descriptor_room() -> int:
    """Connections this process can open (its file descriptor limit, less a margin)."""
    try:
        import resource
    except ImportError:  # not on Unix
        return 1 << 30
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return 1 << 30 if soft == resource.RLIM_INFINITY else max(16, soft - 128)


class HttpReceiver:
    """Serves the HTTP routes of one service, through its :class:`Endpoints` (asyncio front)."""

    def __init__(self, service: Endpoints, host: str, port: int) -> None:
        settings = service.settings
        self.handler = type("Handler", (_OneRequest,), {"service": service})
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        self.sock = socket.create_server((host, port), family=family, backlog=1024)
        self.max_open = min(settings.max_open_connections, _descriptor_room())
        self.pool = ThreadPoolExecutor(
            max_workers=min(8, settings.max_connections), thread_name_prefix="cg-http"
        )
        self.front = _Front(self, settings)
        self.loop = asyncio.new_event_loop()
        self._server: asyncio.AbstractServer | None = None
        self.thread = threading.Thread(target=self._serve, name="cycleguard-http", daemon=True)
        self._ready = threading.Event()

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.sock.getsockname()[:2]
        return str(host), int(port)

    def start(self) -> None:
        self.thread.start()
        self._ready.wait(10)

    def _serve(self) -> None:
        loop = self.loop
        asyncio.set_event_loop(loop)
        self._server = loop.run_until_complete(
            loop.create_server(lambda: _Connection(self.front), sock=self.sock)
        )
        self._ready.set()
        loop.run_forever()
        loop.close()

    def stop(self) -> None:
        def close() -> None:
            if self._server is not None:
                self._server.close()
            for conn in list(self.front.waiting):
                conn.abort(None)
            self.loop.call_later(0.2, self.loop.stop)  # let in-flight answers go out

        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(close)
            self.thread.join(5.0)
        self.pool.shutdown(wait=False)
        with contextlib.suppress(OSError):
            self.sock.close()

    def handle(self, raw: bytes, peer: Any) -> tuple[bytes, bool]:
        """One complete request on a handler thread: (response bytes, close afterwards)."""
        try:
            handler = self.handler(raw, peer, None)
            return handler.wfile.getvalue(), handler.close_connection
        except Exception:
            logger.exception("cycleguard serve: HTTP handler failed for %s", peer)
            return _plain(500, "Internal Server Error"), True


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "cycleguard"
    sys_version = ""
    service: Endpoints

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
            self._send(200, svc.metrics_text(), CONTENT_TYPE_LATEST)
        elif parts.path == "/v1/decisions":
            if self._decision_auth(b""):
                self._json(200, {"pending": svc.pending_requests()})
        elif parts.path == "/v1/signals":
            if self._ingest_auth():
                query = parse_qs(parts.query)
                session = (query.get("session") or [None])[0]
                self._json(200, {"signals": svc.recent_signals(session)})
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
        if not svc.offer(converted.spans):
            if svc.stopping.is_set():
                svc.count_request("http", "unavailable")
                self._status(503, "shutting down; retry later", ctype, retry_after=1)
            else:
                svc.count_request("http", "throttled", spans=len(converted.spans))
                self._status(
                    429,
                    "ingestion queue full ({} of {} spans); retry later".format(
                        *svc.queue_status()
                    ),
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
        try:
            ok = self.service.resolve_decision(
                request_id, data.get("decision"), data.get("message")
            )
        except ValueError as exc:
            self._status(400, str(exc), JSON)
            return
        if ok is None:
            self._status(404, "no webhook escalator: nothing can be pending", JSON)
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


class _OneRequest(_Handler):
    """``_Handler`` on one complete request in memory; the response is collected in memory
    (the event loop does all socket I/O)."""

    wfile: io.BytesIO

    def setup(self) -> None:
        self.rfile = io.BytesIO(self.request)
        self.wfile = io.BytesIO()

    def handle(self) -> None:
        self.close_connection = True
        self.handle_one_request()

    def finish(self) -> None:
        pass

    def handle_expect_100(self) -> bool:
        return True  # the loop already said 100 Continue, if the body was not there yet
