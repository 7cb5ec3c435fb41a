"""64 slow connections must not lock anyone out of OTLP/HTTP (and the routes beside it).

Raw sockets that send a request head one byte a second (the issue's attack: 64 clients, one
byte every 2 s, used to hold every handler slot, so every legitimate export, ``/healthz``,
``/metrics`` and the decision endpoint got 503 for as long as they kept going). Against a
real ``cycleguard serve`` with its default limits, the official OTLP/HTTP exporter keeps
exporting and every route answers; a whole-request deadline closes the slow ones.
"""

from __future__ import annotations

import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
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
