"""Slow clients must not lock anyone out: of OTLP/HTTP (and the routes beside it), or of OTLP/gRPC.

Raw sockets that send a request head one byte a second (the issue's attack: 64 clients, one
byte every 2 s, used to hold every handler slot, so every legitimate export, ``/healthz``,
``/metrics`` and the decision endpoint got 503 for as long as they kept going). Against a
real ``cycleguard serve`` with its default limits, the official OTLP/HTTP exporter keeps
exporting and every route answers; a whole-request deadline closes the slow ones.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
import urllib.error
import urllib.request

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
    OTLPSpanExporter as GrpcSpanExporter,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.service.conftest import wait_for

pytestmark = pytest.mark.slow

HEAD = (
    b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
    b"Content-Length: 100\r\n\r\n" + b"\0" * 100
)


class SlowClients:
    """``n`` connections, each sending one more byte of HEAD every ``every_s``."""

    def __init__(self, port: int, n: int, every_s: float = 1.0) -> None:
        self.socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(n)]
        self.closed_at: dict[int, float] = {}
        self.answers: dict[int, bytes] = {}
        self.every_s = every_s
        self.stop = threading.Event()
        self.start = time.monotonic()
        self.thread = threading.Thread(target=self._trickle, daemon=True)
        self.thread.start()

    def _trickle(self) -> None:
        sent = 0
        while not self.stop.is_set() and sent < len(HEAD):
            for i, sock in enumerate(self.socks):
                if i in self.closed_at:
                    continue
                try:
                    sock.sendall(HEAD[sent : sent + 1])
                    sock.setblocking(False)
                    try:
                        data = sock.recv(4096)
                    except BlockingIOError:
                        data = None
                    finally:
                        sock.setblocking(True)
                    if data is not None:  # an answer, or b"" (closed)
                        self.answers[i] = data
                        self.closed_at[i] = time.monotonic() - self.start
                except OSError:
                    self.closed_at[i] = time.monotonic() - self.start
            sent += 1
            self.stop.wait(self.every_s)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        for sock in self.socks:
            sock.close()


def _spans(n: int) -> list:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("legit")
    for i in range(n):
        tracer.start_span(
            "execute_tool read",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "read",
                "gen_ai.conversation.id": "legit",
                "gen_ai.tool.call.arguments": f'{{"i": {i}}}',
            },
        ).end()
    return list(exporter.get_finished_spans())


def _status(url: str, headers: dict | None = None) -> int:
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, headers=headers or {}), timeout=5
        ) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


def test_sixty_four_slow_connections_lock_nobody_out(services, tmp_path):
    svc = services(
        "--state-file",
        "",
        "--decision-token",
        "dt",
        env={"CYCLEGUARD_ESCALATION__PROGRESS_DIR": str(tmp_path / "p")},
    ).start()
    slow = SlowClients(svc.http_port, 64)
    try:
        time.sleep(1.5)  # every slow connection is open and mid-request
        assert not slow.closed_at
        exporter = OTLPSpanExporter(endpoint=svc.http + "/v1/traces", timeout=5)
        spans = _spans(10)
        sent = accepted = 0
        statuses = []
        for _ in range(20):  # 20 exports of 10 spans during the attack
            sent += len(spans)
            if exporter.export(spans) == SpanExportResult.SUCCESS:
                accepted += len(spans)
            statuses.append(
                (
                    _status(svc.http + "/healthz"),
                    _status(svc.http + "/metrics"),
                    _status(svc.http + "/v1/decisions", {"Authorization": "Bearer dt"}),
                )
            )
        assert not slow.closed_at  # the attack was still going on throughout
        wait_for(lambda: svc.metric("cycleguard_service_spans_processed") >= accepted)
        processed = svc.metric("cycleguard_service_spans_processed")
        print(
            f"\nunder 64 slow connections: {accepted} of {sent} spans accepted, "
            f"{processed:.0f} processed"
        )
        assert accepted == sent
        assert processed == accepted
        assert set(statuses) == {(200, 200, 200)}
    finally:
        slow.close()
    assert svc.stop() == 0


def test_a_request_must_arrive_whole_in_time_and_a_full_house_evicts_the_slowest(
    services, tmp_path
):
    """--request-timeout 3: slow requests get 408 after 3 s however steadily they trickle.
    --max-open-connections 32 against 48 slow clients: new connections evict the slowest."""
    svc = services(
        "--state-file",
        "",
        "--request-timeout",
        "3",
        "--max-open-connections",
        "32",
        env={"CYCLEGUARD_ESCALATION__PROGRESS_DIR": str(tmp_path / "p")},
    ).start()
    slow = SlowClients(svc.http_port, 48, every_s=0.5)
    try:
        time.sleep(1.2)
        assert _status(svc.http + "/healthz") == 200  # evicts one waiting for over a second
        exporter = OTLPSpanExporter(endpoint=svc.http + "/v1/traces", timeout=5)
        assert exporter.export(_spans(5)) == SpanExportResult.SUCCESS
        wait_for(lambda: len(slow.closed_at) == 48, timeout=10)
    finally:
        slow.close()
    refused = {i for i, a in slow.answers.items() if a.startswith(b"HTTP/1.1 503")}
    refused |= {i for i, t in slow.closed_at.items() if t < 2.0 and not slow.answers.get(i)}
    admitted = {i: t for i, t in slow.closed_at.items() if i not in refused}
    got_408 = [i for i in admitted if slow.answers.get(i, b"").startswith(b"HTTP/1.1 408")]
    print(
        f"\n{len(refused)} refused or evicted (503), {len(admitted)} closed at "
        f"{min(admitted.values()):.1f}-{max(admitted.values()):.1f}s, {len(got_408)} read the 408"
    )
    assert len(admitted) >= 16 and got_408
    assert all(2.5 <= t <= 6.0 for t in admitted.values())  # the deadline, not inactivity
    assert svc.stop() == 0


def _frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    """One HTTP/2 frame: 24-bit length, type, flags, 31-bit stream id, payload."""
    return (
        struct.pack(">I", len(payload))[1:]
        + bytes([kind, flags])
        + struct.pack(">I", stream)
        + payload
    )


def _literal(name: str, value: str) -> bytes:
    """An HPACK header field, literal and not indexed (names and values under 127 bytes)."""
    return b"\x00" + bytes([len(name)]) + name.encode() + bytes([len(value)]) + value.encode()


class StalledGrpcCalls:
    """One HTTP/2 connection opening ``calls`` Export calls that each send 10 bytes of a declared
    1,000-byte message, then nothing: gRPC's slow client. A reader thread acknowledges the
    server's SETTINGS and PINGs, as a live client would, so the connection stays up."""

    _HEADERS, _DATA, _SETTINGS, _PING = 1, 0, 4, 6

    def __init__(self, port: int, calls: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + _frame(self._SETTINGS, 0, 0))
        self.closed = threading.Event()
        threading.Thread(target=self._answer, daemon=True).start()
        head = b"".join(
            _literal(name, value)
            for name, value in (
                (":method", "POST"),
                (":scheme", "http"),
                (":authority", "127.0.0.1"),
                (":path", "/opentelemetry.proto.collector.trace.v1.TraceService/Export"),
                ("content-type", "application/grpc"),
                ("te", "trailers"),
            )
        )
        partial = b"\x00" + struct.pack(">I", 1000) + b"\x0a" * 10
        out = b""
        for i in range(calls):
            stream = 1 + 2 * i
            out += _frame(self._HEADERS, 0x4, stream, head)  # END_HEADERS, not END_STREAM
            out += _frame(self._DATA, 0, stream, partial)
        self.sock.sendall(out)

    def _answer(self) -> None:
        buffer = b""
        try:
            while chunk := self.sock.recv(65536):
                buffer += chunk
                while len(buffer) >= 9:
                    length = int.from_bytes(buffer[:3], "big")
                    if len(buffer) < 9 + length:
                        break
                    kind, flags, payload = buffer[3], buffer[4], buffer[9 : 9 + length]
                    buffer = buffer[9 + length :]
                    if kind == self._SETTINGS and not flags & 1:
                        self.sock.sendall(_frame(self._SETTINGS, 1, 0))
                    elif kind == self._PING and not flags & 1:
                        self.sock.sendall(_frame(self._PING, 1, 0, payload))
        except OSError:
            pass
        self.closed.set()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


def test_stalled_grpc_calls_lock_no_exporter_out(services, tmp_path):
    """64 calls over four connections, each stuck mid-message (the thread-pool server it
    replaced was locked out by eight on one connection: every export ``DEADLINE_EXCEEDED``)."""
    svc = services(
        "--state-file", "", env={"CYCLEGUARD_ESCALATION__PROGRESS_DIR": str(tmp_path / "p")}
    ).start()
    stalled = [StalledGrpcCalls(svc.grpc_port, 16) for _ in range(4)]
    try:
        time.sleep(1.0)  # every stalled call has reached the server
        exporter = GrpcSpanExporter(endpoint=f"127.0.0.1:{svc.grpc_port}", insecure=True, timeout=5)
        spans = _spans(10)
        results = [exporter.export(spans) for _ in range(5)]
        exporter.shutdown()
        assert not any(s.closed.is_set() for s in stalled)  # the attack went on throughout
        assert results == [SpanExportResult.SUCCESS] * 5
        wait_for(lambda: svc.metric("cycleguard_service_spans_processed") >= 50)
        assert svc.metric("cycleguard_service_spans_processed") == 50
    finally:
        for s in stalled:
            s.close()
    assert svc.stop() == 0
