"""The service terminates a run at the HITL deadline, whatever its human channel does.

The service executes the same escalation policy as the in-process engine, through the same
deadline watchdog (``escalate/engine.py``). Here the webhook is a real local HTTP server that
accepts the request and never answers, with a per-attempt timeout far past the deadline; and,
separately, an escalator that never returns at all. Either way the run is terminated, its
progress saved, within moments of the deadline.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.escalate.hitl import EscalationRequest, HumanDecision
from otel_cycleguard.escalate.progress import DirectoryProgressStore
from otel_cycleguard.spans import SpanData

pytest.importorskip("otel_cycleguard.service.app")

from otel_cycleguard.service.app import CycleGuardService, ServiceSettings

DEADLINE_S = 1.0
SLACK_S = 1.5  # the watchdog fires 0.25 s after the deadline; a loaded host needs more


class HangingServer:
    """A real HTTP endpoint that accepts connections, reads, and never answers."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.connections: list[socket.socket] = []
        self.received = threading.Event()
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.sock.getsockname()[:2]
        return f"http://{host}:{port}/hitl"

    def _serve(self) -> None:
        self.sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections.append(conn)
            conn.settimeout(0.1)
            try:
                if conn.recv(65536):
                    self.received.set()  # the escalation arrived; no answer will ever come
            except (TimeoutError, OSError):
                pass

    def close(self) -> None:
        self._stop.set()
        self.sock.close()
        self.thread.join(2)
        for conn in self.connections:
            conn.close()


@pytest.fixture(name="hanging")
def fixture_hanging() -> Iterator[HangingServer]:
    server = HangingServer()
    yield server
    server.close()


def _loop(session: str, n: int = 30) -> list[SpanData]:
    """A run calling the same tool with the same arguments and result: TERM, self-heal, TERM."""
    return [
        SpanData(
            trace_id="ab" * 16,
            span_id=f"{i + 1:016x}",
            name="execute_tool search",
            parent_span_id="ff" * 8,
            start_ns=1_000_000 * i + 1,
            end_ns=1_000_000 * i + 2,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search",
                "gen_ai.tool.call.arguments": '{"q": "same"}',
                "gen_ai.tool.call.result": "no results",
                "gen_ai.conversation.id": session,
            },
        )
        for i in range(n)
    ]


def _service(tmp_path, config: CycleGuardConfig, **kwargs) -> CycleGuardService:
    settings = ServiceSettings(
        http_port=0,
        grpc_port=None,
        state_file=None,
        webhook_attempt_timeout_s=60.0,  # one attempt could hang far past the deadline
    )
    return CycleGuardService(
        config,
        settings,
        progress_store=DirectoryProgressStore(str(tmp_path / "progress")),
        **kwargs,
    )


def _wait_for_termination(service: CycleGuardService, timeout_s: float) -> float | None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if service.engine.terminations:
            return time.monotonic()
        time.sleep(0.02)
    return None


@pytest.mark.slow
def test_service_terminates_at_the_deadline_when_its_webhook_hangs(tmp_path, hanging):
    config = CycleGuardConfig.model_validate(
        {"escalation": {"webhook_url": hanging.url, "hitl_timeout_s": DEADLINE_S}}
    )
    service = _service(tmp_path, config).start()
    try:
        assert service.offer(_loop("conv-hang"))
        assert hanging.received.wait(10), "the escalation never reached the webhook"
        asked = time.monotonic()
        ended = _wait_for_termination(service, DEADLINE_S + SLACK_S)
        assert ended is not None, "no termination by the deadline: the run was left paused"
        assert ended - asked <= DEADLINE_S + SLACK_S
        (session, ref) = service.engine.terminations[0]
        assert session == "conv-hang"
        assert ref is not None  # progress saved
        assert service.pending_requests() == []  # nothing left open
    finally:
        service.stop()


class NeverReturns:
    """An escalator whose ``ask`` blocks forever, ignoring its deadline (the worst channel)."""

    include_raw = False

    def __init__(self) -> None:
        self.release = threading.Event()
        self.asked = threading.Event()

    def ask(self, request: EscalationRequest, deadline_s: float) -> HumanDecision:
        self.asked.set()
        self.release.wait()
        raise RuntimeError("released at teardown")


def test_service_terminates_at_the_deadline_when_its_escalator_never_returns(tmp_path):
    config = CycleGuardConfig.model_validate({"escalation": {"hitl_timeout_s": DEADLINE_S}})
    escalator = NeverReturns()
    service = _service(tmp_path, config, escalator=escalator).start()
    try:
        assert service.offer(_loop("conv-stuck"))
        assert escalator.asked.wait(10)
        asked = time.monotonic()
        ended = _wait_for_termination(service, DEADLINE_S + SLACK_S)
        assert ended is not None, "the service relied on the escalator to honour the deadline"
        assert ended - asked <= DEADLINE_S + SLACK_S
        assert service.engine.terminations[0][0] == "conv-stuck"
    finally:
        escalator.release.set()
        service.stop()
