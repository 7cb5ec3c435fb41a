"""The webhook client without sockets: ``httpx.MockTransport`` injected through ``transport=``.

The real-server tests (``test_hitl.py``, ``test_webhook_e2e.py``) stay; these pin the README's
webhook contract (connection errors, 408/429 and 5xx retried inside the deadline, anything else
terminates) in milliseconds, and one trickling real server shows no attempt outlives the
deadline.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from otel_cycleguard.detect.signals import (
    BreakStrategy,
    CallDigest,
    CycleClass,
    Dimension,
    Level,
    Signal,
)
from otel_cycleguard.escalate import (
    Decision,
    EscalationRequest,
    TerminationReason,
    TerminationRecord,
    WebhookEscalator,
    verify_signature,
)

URL = "http://hitl.test/hook"
SECRET = b"s3cret"

Handler = Callable[[httpx.Request], httpx.Response]


@pytest.fixture(name="request_")
def fixture_request() -> EscalationRequest:
    signal = Signal(
        dimension=Dimension.TOOL_PATTERN,
        level=Level.TERM,
        session="sess-1",
        streak=5,
        threshold=5,
        profile="general",
        tool="read",
        category="exploration",
        step=12,
        model_turn_index=None,
        cycle_class=CycleClass.TOOL_CYCLE,
        break_strategy=BreakStrategy.CHANGE_ARGUMENTS_OR_TOOL,
        explanation="read repeated 5 times",
        evidence=(CallDigest("read", "a" * 16, "b" * 16),),
        unit=("read",),
        agent="coder",
    )
    return EscalationRequest.from_signal(signal, timeout_s=60.0)


class Script:
    """Answers requests from a list (the last entry repeats); records what was sent."""

    def __init__(self, *replies: int | tuple[int, object] | Handler | Exception) -> None:
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):
            return reply(request)
        status, body = reply if isinstance(reply, tuple) else (reply, {})
        return httpx.Response(status, json=body)

    def escalator(self, **kwargs: object) -> WebhookEscalator:
        kwargs.setdefault("backoff_s", 0.0)
        return WebhookEscalator(URL, transport=httpx.MockTransport(self), **kwargs)  # type: ignore[arg-type]


CONTINUE = (200, {"decision": "continue"})


def test_answer_is_the_decision_and_the_request_is_signed(request_: EscalationRequest) -> None:
    script = Script((200, {"decision": "modify", "message": "try grep"}))
    decision = script.escalator(secret=SECRET).ask(request_, 5)
    assert decision.decision is Decision.MODIFY and decision.message == "try grep"
    (sent,) = script.requests
    assert sent.method == "POST" and str(sent.url) == URL
    assert sent.headers["content-type"] == "application/json"
    assert verify_signature(
        SECRET,
        sent.headers["x-cycleguard-timestamp"],
        sent.content,
        sent.headers["x-cycleguard-signature"],
    )
    assert json.loads(sent.content)["id"] == request_.id


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
def test_retryable_statuses_are_retried_with_the_same_id(
    request_: EscalationRequest, status: int
) -> None:
    script = Script(status, CONTINUE)
    assert script.escalator(max_attempts=3).ask(request_, 5).decision is Decision.CONTINUE
    assert len(script.requests) == 2
    assert len({json.loads(r.content)["id"] for r in script.requests}) == 1


def test_connection_errors_are_retried_then_fail_closed(request_: EscalationRequest) -> None:
    script = Script(httpx.ConnectError("refused"), CONTINUE)
    assert script.escalator(max_attempts=3).ask(request_, 5).decision is Decision.CONTINUE
    script = Script(httpx.ConnectError("refused"))
    decision = script.escalator(max_attempts=3).ask(request_, 5)
    assert decision.decision is Decision.ERROR and "3 attempts" in decision.detail
    assert len(script.requests) == 3


@pytest.mark.parametrize("status", [400, 401, 403, 404, 301, 307, 204])
def test_anything_else_terminates_without_a_retry(request_: EscalationRequest, status: int) -> None:
    script = Script(status, CONTINUE)
    assert script.escalator().ask(request_, 5).decision is Decision.ERROR
    assert len(script.requests) == 1


def test_a_tls_failure_is_not_retried(request_: EscalationRequest) -> None:
    def tls_failure(_: httpx.Request) -> httpx.Response:
        try:
            raise ssl.SSLCertVerificationError("certificate verify failed")
        except ssl.SSLError as exc:
            raise httpx.ConnectError("TLS handshake failed") from exc

    script = Script(tls_failure)
    decision = script.escalator(max_attempts=3).ask(request_, 5)
    assert decision.decision is Decision.ERROR and "TLS" in decision.detail
    assert len(script.requests) == 1


@pytest.mark.parametrize(
    "reply",
    [
        (200, {"decision": "maybe"}),
        (200, {"decision": "modify"}),
        (200, ["continue"]),
        lambda _: httpx.Response(200, content=b"not json"),
        lambda _: httpx.Response(200, content=b'{"decision":"continue"}' + b" " * 70_000),
    ],
)
def test_bad_answers_fail_closed(request_: EscalationRequest, reply: object) -> None:
    assert Script(reply).escalator().ask(request_, 5).decision is Decision.ERROR  # type: ignore[arg-type]


def test_202_then_resolved_elsewhere(request_: EscalationRequest) -> None:
    escalator = Script((202, {})).escalator()

    def resolve() -> None:
        while not escalator.pending.resolve(request_.id, "terminate"):
            time.sleep(0.01)

    threading.Thread(target=resolve, daemon=True).start()
    assert escalator.ask(request_, 5).decision is Decision.TERMINATE


def test_a_hanging_transport_times_out_at_the_deadline(request_: EscalationRequest) -> None:
    release = threading.Event()

    def hang(_: httpx.Request) -> httpx.Response:
        release.wait(30)
        return httpx.Response(200, json={"decision": "continue"})

    started = time.monotonic()
    try:
        decision = Script(hang).escalator().ask(request_, 0.5)
    finally:
        release.set()
    assert decision.decision is Decision.TIMEOUT
    assert time.monotonic() - started < 0.5 + 0.5


def test_timeout_s_caps_one_attempt_and_the_next_one_answers(
    request_: EscalationRequest,
) -> None:
    release = threading.Event()

    def hang(_: httpx.Request) -> httpx.Response:
        release.wait(30)
        return httpx.Response(200, json={"decision": "terminate"})

    script = Script(hang, CONTINUE)
    try:
        decision = script.escalator(timeout_s=0.2).ask(request_, 5)
    finally:
        release.set()
    assert decision.decision is Decision.CONTINUE
    assert len(script.requests) == 2


def test_retries_stop_at_the_deadline(request_: EscalationRequest) -> None:
    script = Script(503)
    started = time.monotonic()
    decision = script.escalator(max_attempts=1000, backoff_s=0.05).ask(request_, 0.5)
    assert decision.failed
    assert time.monotonic() - started < 0.5 + 0.5
    assert 1 < len(script.requests) < 1000


def test_termination_notice_without_a_socket() -> None:
    script = Script((200, {}))
    record = TerminationRecord(
        session="sess-1",
        reason=TerminationReason.CYCLE_DETECTED,
        explanation="looping",
        checkpoint={"secret": "x"},
    )
    assert script.escalator().notify_termination(record, ref="r1")
    body = json.loads(script.requests[0].content)
    assert body["type"] == "cycleguard.termination" and "checkpoint" not in body
    assert not Script(404).escalator().notify_termination(record)


# ------------------------------------------------------------------ a trickling real server


@pytest.fixture(name="trickler")
def fixture_trickler() -> Iterator[tuple[str, threading.Event]]:
    """Answers 200 headers at once, then one body byte every 50 ms, for as long as it can."""
    server = socket.create_server(("127.0.0.1", 0))
    closed = threading.Event()  # set when a send fails: the client cut the connection

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            try:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n{")
                for _ in range(2000):
                    time.sleep(0.05)
                    conn.sendall(b" ")
            except OSError:
                closed.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/hook", closed
    finally:
        server.close()


def test_a_trickling_receiver_cannot_hold_an_attempt_past_the_deadline(
    request_: EscalationRequest, trickler: tuple[str, threading.Event]
) -> None:
    """Every read gets a byte within the read timeout, so only the deadline can end it."""
    url, closed = trickler
    started = time.monotonic()
    decision = WebhookEscalator(url, max_attempts=1).ask(request_, 1.0)
    assert decision.decision is Decision.TIMEOUT
    assert time.monotonic() - started < 1.0 + 0.5
    assert closed.wait(2.0)  # the socket was shut down: the attempt ended with the deadline
