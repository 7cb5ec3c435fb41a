"""The webhook escalator end to end: a real local HTTP receiver behind the installed engine.

An agent loops on the real stack (``install`` on a ``TracerProvider``); its second TERM posts a
signed escalation to a ``ThreadingHTTPServer`` on 127.0.0.1, which answers each of the ways a
receiver can. Every failure mode must end in termination (never silent continuation), with
the progress file written, the metrics counted and the termination notice delivered.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from prometheus_client import CollectorRegistry

import otel_cycleguard
from otel_cycleguard import CycleTerminated, Directive, install, load_config
from otel_cycleguard.escalate import DirectoryProgressStore, WebhookEscalator
from otel_cycleguard.integrations.generic import set_default_engine
from otel_cycleguard.metrics import CycleGuardMetrics

pytestmark = pytest.mark.slow

SECRET = b"receiver-secret"
SESSION = "conv-webhook"
AGENT = "coder"


# The receiver-side check from the README ("Verifying webhook signatures"); tests/test_readme.py
# checks that the README's block does the same job against a real request.
def verify_cycleguard(secret: bytes, headers: Any, body: bytes, tolerance_s: int = 300) -> bool:
    ts = headers.get("X-Cycleguard-Timestamp", "")
    sig = headers.get("X-Cycleguard-Signature", "")
    if not ts.isdigit() or abs(time.time() - int(ts)) > tolerance_s:
        return False
    mac = hmac.new(secret, ts.encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(sig.encode(), f"sha256={mac}".encode())


# --------------------------------------------------------------------------- receiver

Answer = tuple[int, Any]


@dataclass
class Receiver:
    """Verifies signatures, records everything, answers escalations with ``answer``."""

    answer: Callable[[dict[str, Any]], Answer] = lambda body: (200, {"decision": "continue"})
    url: str = ""
    escalations: list[dict[str, Any]] = field(default_factory=list)
    notices: list[dict[str, Any]] = field(default_factory=list)
    rejected: int = 0
    got_escalation: threading.Event = field(default_factory=threading.Event)
    got_notice: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, headers: Any, raw: bytes) -> Answer:
        if not verify_cycleguard(SECRET, headers, raw):
            with self.lock:
                self.rejected += 1
            return 401, {"error": "bad signature"}
        body = json.loads(raw)
        with self.lock:
            if body.get("type") == "cycleguard.termination":
                self.notices.append(body)
                self.got_notice.set()
                return 200, {"ok": True}
            self.escalations.append(body)
        self.got_escalation.set()
        return self.answer(body)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        receiver: Receiver = self.server.receiver  # type: ignore[attr-defined]
        status, payload = receiver.handle(self.headers, raw)
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the escalator gave up on us (deadline)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(name="receiver")
def fixture_receiver() -> Iterator[Receiver]:
    receiver = Receiver()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.receiver = receiver  # type: ignore[attr-defined]
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/cycleguard"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield receiver
    receiver.release.set()
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


# --------------------------------------------------------------------------- the guarded agent


@dataclass
class Run:
    escalator: WebhookEscalator
    processor: Any
    registry: CollectorRegistry
    store: DirectoryProgressStore
    provider: TracerProvider

    def loop(self, calls: int) -> list[Directive]:
        """An agent grepping the same thing ``calls`` times, checking between calls."""
        tracer = self.provider.get_tracer("agent")
        got: list[Directive] = []
        agent = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": AGENT,
            "gen_ai.conversation.id": SESSION,
        }
        tool = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "grep",
            "gen_ai.tool.call.arguments": '{"pattern": "retry"}',
            "gen_ai.tool.call.result": "no matches",
        }
        with tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes=agent):
            otel_cycleguard.checkpoint({"files_done": 3})
            for _ in range(calls):
                with tracer.start_as_current_span("execute_tool grep", attributes=tool):
                    pass
                got.extend(otel_cycleguard.check())
        return got

    def metric(self, name: str, **labels: str) -> float:
        value = self.registry.get_sample_value(
            f"cycleguard_{name}_total", {"agent": AGENT, **labels}
        )
        return 0.0 if value is None else value

    def record(self) -> dict[str, Any]:
        [ref] = self.store.refs(SESSION)
        return json.loads((self.store.path / ref).read_text())


@pytest.fixture(name="make_run")
def fixture_make_run(tmp_path: Path) -> Iterator[Callable[..., Run]]:
    runs: list[Run] = []

    def make(
        url: str, *, secret: bytes = SECRET, timeout_s: float = 5.0, include_raw: bool = False
    ) -> Run:
        escalator = WebhookEscalator(
            url, secret=secret, backoff_s=0.01, connect_timeout_s=1.0, include_raw=include_raw
        )
        registry = CollectorRegistry()
        store = DirectoryProgressStore(tmp_path / "progress")
        provider = TracerProvider()
        processor = install(
            load_config(
                environ={}, escalation={"hitl_timeout_s": timeout_s, "include_raw": include_raw}
            ),
            tracer_provider=provider,
            escalator=escalator,
            progress_store=store,
            metrics=CycleGuardMetrics(registry),
        )
        run = Run(escalator, processor, registry, store, provider)
        runs.append(run)
        return run

    yield make
    for run in runs:
        run.processor.escalation.shutdown(wait=False)
        run.provider.shutdown()
    set_default_engine(None)


def assert_terminated(run: Run, decision: str, receiver: Receiver | None = None) -> None:
    """Stopped fail-closed with nothing lost: file, metrics, and the notice when reachable."""
    with pytest.raises(CycleTerminated) as caught:
        run.loop(10)
    error = caught.value
    assert error.reason == "cycle_detected"
    assert error.progress_ref in run.store.refs(SESSION)
    data = run.record()
    assert data["hitl_decision"] == decision
    assert data["resumable"] is True
    assert data["checkpoint"] == {"files_done": 3}
    assert len(data["evidence"]) >= 5 and {e["tool"] for e in data["evidence"]} == {"grep"}
    assert data["counters"]["tool_calls"] == 10
    assert run.metric("self_heals", dimension="identical_call") == 1
    assert run.metric("human_escalations", dimension="identical_call") == 1
    assert run.metric("hitl_decisions", decision=decision) == 1
    assert run.metric("hitl_decisions", decision="continue") == 0
    assert run.metric("terminations", reason="cycle_detected") == 1
    if receiver is not None:
        assert receiver.got_notice.wait(5), "the termination notice never reached the receiver"
        [notice] = receiver.notices
        assert notice["session"] == SESSION
        assert notice["reason"] == "cycle_detected"
        assert notice["hitl_decision"] == decision
        assert notice["ref"] == error.progress_ref
        assert "checkpoint" not in notice


# --------------------------------------------------------------------------- the human answers


def test_continue_answer_resumes_the_run(receiver: Receiver, make_run: Callable[..., Run]) -> None:
    run = make_run(receiver.url)
    got = run.loop(11)
    assert [d.role for d in got] == ["system"]  # the self-heal only
    [escalation] = receiver.escalations
    assert escalation["type"] == "cycleguard.escalation"
    assert escalation["session"] == SESSION and escalation["dimension"] == "identical_call"
    assert escalation["choices"] == ["continue", "terminate", "modify"]
    assert escalation["deadline"] > time.time()
    assert "retry" not in json.dumps(escalation)  # hashes only, no raw arguments
    assert run.processor.guard.counters(SESSION)["identical_call"] == 1
    assert run.metric("hitl_decisions", decision="continue") == 1
    assert run.metric("terminations", reason="cycle_detected") == 0
    assert run.store.refs() == [] and receiver.notices == []


def test_raw_preview_is_sent_only_with_include_raw(
    receiver: Receiver, make_run: Callable[..., Run]
) -> None:
    """Opted in, the human sees the looping call itself (masked, short); by default, hashes only."""
    receiver.answer = lambda body: (200, {"decision": "continue"})
    make_run(receiver.url).loop(10)
    assert receiver.got_escalation.wait(5)
    assert "raw" not in receiver.escalations[0]
    make_run(receiver.url, include_raw=True).loop(10)
    assert len(receiver.escalations) == 2
    assert receiver.escalations[1]["raw"] == {
        "tool": "grep",
        "arguments": '{"pattern":"retry"}',
        "result": "no matches",
        "error": False,
    }


def test_terminate_answer_stops_the_run(receiver: Receiver, make_run: Callable[..., Run]) -> None:
    receiver.answer = lambda body: (200, {"decision": "terminate"})
    assert_terminated(make_run(receiver.url), "terminate", receiver)


def test_modify_answer_injects_a_user_message(
    receiver: Receiver, make_run: Callable[..., Run]
) -> None:
    receiver.answer = lambda body: (200, {"decision": "modify", "message": "Read the log."})
    run = make_run(receiver.url)
    got = run.loop(11)
    assert got[-1] == Directive("user", "Read the log.", "identical_call")
    assert run.metric("hitl_decisions", decision="modify") == 1
    assert run.metric("terminations", reason="cycle_detected") == 0


def test_accepted_then_decided_through_pending_decisions(
    receiver: Receiver, make_run: Callable[..., Run]
) -> None:
    receiver.answer = lambda body: (202, {"accepted": True})
    run = make_run(receiver.url)
    resolved: list[bool] = []

    def decision_endpoint() -> None:  # what the service's decision endpoint does
        assert receiver.got_escalation.wait(5)
        time.sleep(0.2)  # the agent is paused meanwhile
        request_id = receiver.escalations[0]["id"]
        resolved.append(run.escalator.pending.resolve(request_id, "modify", "Try the cache."))

    helper = threading.Thread(target=decision_endpoint)
    helper.start()
    got = run.loop(10)
    helper.join(5)
    assert resolved == [True]
    assert got[-1] == Directive("user", "Try the cache.", "identical_call")
    assert run.metric("hitl_decisions", decision="modify") == 1
    assert run.metric("terminations", reason="cycle_detected") == 0


def test_accepted_but_never_decided_terminates(
    receiver: Receiver, make_run: Callable[..., Run]
) -> None:
    receiver.answer = lambda body: (202, {"accepted": True})
    started = time.monotonic()
    assert_terminated(make_run(receiver.url, timeout_s=0.5), "timeout", receiver)
    assert time.monotonic() - started < 0.5 + 1.0 + 1.0  # the loop itself is quick


# --------------------------------------------------------------------------- failure modes


def test_slow_receiver_past_the_deadline_terminates_in_time(
    receiver: Receiver, make_run: Callable[..., Run]
) -> None:
    def slow(body: dict[str, Any]) -> Answer:
        receiver.release.wait(10)
        return 200, {"decision": "continue"}

    receiver.answer = slow
    timeout = 0.8
    run = make_run(receiver.url, timeout_s=timeout)
    run.loop(9)
    started = time.monotonic()
    with pytest.raises(CycleTerminated):
        run.loop(1)
    assert time.monotonic() - started < timeout + 1.0
    receiver.release.set()
    assert run.record()["hitl_decision"] == "timeout"
    assert run.metric("hitl_decisions", decision="timeout") == 1
    assert run.metric("terminations", reason="cycle_detected") == 1
    assert receiver.got_notice.wait(5)


def test_server_error_terminates_after_retries(
    receiver: Receiver, make_run: Callable[..., Run]
) -> None:
    receiver.answer = lambda body: (500, {"error": "oops"})
    run = make_run(receiver.url)
    assert_terminated(run, "error", receiver)
    assert len(receiver.escalations) == run.escalator.max_attempts == 3
    assert len({e["id"] for e in receiver.escalations}) == 1  # retries keep the id


def test_garbage_json_terminates(receiver: Receiver, make_run: Callable[..., Run]) -> None:
    receiver.answer = lambda body: (200, b"<html>not json")
    assert_terminated(make_run(receiver.url), "error", receiver)


def test_unknown_decision_terminates(receiver: Receiver, make_run: Callable[..., Run]) -> None:
    receiver.answer = lambda body: (200, {"decision": "sure, go ahead"})
    assert_terminated(make_run(receiver.url), "error", receiver)


def test_connection_refused_terminates(make_run: Callable[..., Run]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed once we leave: nothing listens
    run = make_run(f"http://127.0.0.1:{port}/hooks/cycleguard")
    started = time.monotonic()
    assert_terminated(run, "error")
    assert time.monotonic() - started < 5.0


def test_wrong_signature_is_refused_and_terminates(
    receiver: Receiver, make_run: Callable[..., Run]
) -> None:
    run = make_run(receiver.url, secret=b"not-the-receivers-secret")
    assert_terminated(run, "error")
    # the escalation was refused, not retried (401 is final); the notice is refused too
    deadline = time.monotonic() + 5
    while receiver.rejected < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert receiver.rejected == 2
    assert receiver.escalations == [] and receiver.notices == []
