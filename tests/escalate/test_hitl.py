"""Escalators against a real local HTTP(S) receiver, a Python callable and a fake console."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import queue
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

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
    CallableEscalator,
    ConsoleEscalator,
    Decision,
    EscalationRequest,
    Escalator,
    HumanDecision,
    PendingDecisions,
    TerminationReason,
    TerminationRecord,
    WebhookEscalator,
    sign,
    verify_signature,
)

README = Path(__file__).resolve().parents[2] / "README.md"
SECRET = b"s3cret-for-tests"

# --------------------------------------------------------------------------- README snippet
# Copied verbatim from the README (its imports are this module's: hashlib, hmac, time):
# a receiver needs nothing from our package to check us.


def verify_cycleguard(secret: bytes, headers: Any, body: bytes, tolerance_s: int = 300) -> bool:
    """True if cycleguard signed this exact body with `secret` in the last `tolerance_s` s."""
    ts = headers.get("X-Cycleguard-Timestamp", "")
    sig = headers.get("X-Cycleguard-Signature", "")
    if not ts.isdigit() or abs(time.time() - int(ts)) > tolerance_s:
        return False
    mac = hmac.new(secret, ts.encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(sig.encode(), f"sha256={mac}".encode())


# --------------------------------------------------------------------------- receiver

Reply = tuple[int, Any]


@dataclass
class Received:
    """One request as the receiver saw it."""

    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.body)


@dataclass
class Receiver:
    """Scripted webhook receiver: replies are taken in order, the last one repeats."""

    url: str = ""
    secret: bytes | None = None
    replies: list[Reply | Callable[[Received], Reply]] = field(default_factory=list)
    requests: list[Received] = field(default_factory=list)
    got_request: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reply_to(self, received: Received) -> Reply:
        with self.lock:
            self.requests.append(received)
            index = min(len(self.requests), len(self.replies)) - 1
            reply = self.replies[index] if self.replies else (200, {"decision": "continue"})
        self.got_request.set()
        if self.secret is not None and not verify_cycleguard(
            self.secret, received.headers, received.body
        ):
            return 403, {"error": "bad signature"}
        return reply(received) if callable(reply) else reply


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        receiver: Receiver = self.server.receiver  # type: ignore[attr-defined]
        status, payload = receiver.reply_to(Received(self.path, dict(self.headers), body))
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status in (301, 302, 307, 308):
            self.send_header("Location", "/elsewhere")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _serve(receiver: Receiver, tls: ssl.SSLContext | None = None) -> Iterator[Receiver]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.receiver = receiver  # type: ignore[attr-defined]
    scheme = "http"
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    receiver.url = f"{scheme}://127.0.0.1:{server.server_address[1]}/hooks/cycleguard"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(name="receiver")
def fixture_receiver() -> Iterator[Receiver]:
    yield from _serve(Receiver())


@pytest.fixture(name="request_")
def fixture_request() -> EscalationRequest:
    return EscalationRequest.from_signal(_signal(), timeout_s=60.0, raw_preview={"args": "ls"})


def _signal() -> Signal:
    return Signal(
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
        explanation="read -> edit repeated 5 laps",
        evidence=(
            CallDigest("read", "a" * 16, "b" * 16),
            CallDigest("edit", "c" * 16, "d" * 16, error=True),
        ),
        unit=("read", "edit"),
        agent="coder",
    )


def _webhook(url: str, **kwargs: Any) -> WebhookEscalator:
    kwargs.setdefault("backoff_s", 0.01)
    return WebhookEscalator(url, **kwargs)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --------------------------------------------------------------------------- webhook


@pytest.mark.slow
class TestWebhookAnswers:
    """A synchronous 200 answer is the decision; anything malformed fails closed."""

    def test_continue_answer_is_returned(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        receiver.replies = [(200, {"decision": "continue"})]
        decision = _webhook(receiver.url).ask(request_, 5)
        assert decision.decision is Decision.CONTINUE
        assert receiver.requests[0].path == "/hooks/cycleguard"

    def test_terminate_answer_is_returned(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        receiver.replies = [(200, {"decision": "terminate", "message": "enough"})]
        decision = _webhook(receiver.url).ask(request_, 5)
        assert (decision.decision, decision.message) == (Decision.TERMINATE, "enough")

    def test_modify_answer_carries_the_instruction(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        receiver.replies = [(200, {"decision": "modify", "message": "use grep instead"})]
        decision = _webhook(receiver.url).ask(request_, 5)
        assert (decision.decision, decision.message) == (Decision.MODIFY, "use grep instead")

    def test_modify_without_message_is_an_error(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        receiver.replies = [(200, {"decision": "modify", "message": "  "})]
        assert _webhook(receiver.url).ask(request_, 5).decision is Decision.ERROR

    def test_garbage_json_is_an_error(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        receiver.replies = [(200, b"{not json")]
        assert _webhook(receiver.url).ask(request_, 5).decision is Decision.ERROR

    @pytest.mark.parametrize(
        "payload", [{"decision": "pending"}, {"decision": "timeout"}, ["continue"], {}]
    )
    def test_unknown_decision_is_an_error(
        self, receiver: Receiver, request_: EscalationRequest, payload: Any
    ) -> None:
        receiver.replies = [(200, payload)]
        assert _webhook(receiver.url).ask(request_, 5).decision is Decision.ERROR

    def test_client_error_fails_closed_without_retrying(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        receiver.replies = [(400, {"error": "bad"}), (200, {"decision": "continue"})]
        assert _webhook(receiver.url).ask(request_, 5).decision is Decision.ERROR
        assert len(receiver.requests) == 1

    def test_redirect_is_not_followed(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        receiver.replies = [(307, {}), (200, {"decision": "continue"})]
        assert _webhook(receiver.url).ask(request_, 5).decision is Decision.ERROR
        assert len(receiver.requests) == 1


@pytest.mark.slow
class TestWebhookBody:
    """The documented JSON body and headers reach the receiver as specified."""

    def test_body_has_exactly_the_documented_fields(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        _webhook(receiver.url).ask(request_, 5)
        body = receiver.requests[0].json
        assert set(body) == {
            "type", "id", "session", "agent", "dimension", "rule", "streak", "threshold",
            "unit", "evidence", "explanation", "choices", "deadline",
        }  # fmt: skip
        assert body["type"] == "cycleguard.escalation"
        assert body["id"] == request_.id
        assert (body["session"], body["agent"], body["dimension"]) == (
            "sess-1",
            "coder",
            "tool_pattern",
        )
        assert (body["streak"], body["threshold"], body["unit"]) == (5, 5, ["read", "edit"])
        assert body["choices"] == ["continue", "terminate", "modify"]
        assert body["evidence"][1] == {
            "tool": "edit",
            "args_hash": "c" * 16,
            "result_hash": "d" * 16,
            "error": True,
        }
        assert body["deadline"] == pytest.approx(time.time() + 60, abs=10)

    def test_raw_preview_is_sent_only_when_opted_in(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        _webhook(receiver.url).ask(request_, 5)
        _webhook(receiver.url, include_raw=True).ask(request_, 5)
        assert "raw" not in receiver.requests[0].json
        assert receiver.requests[1].json["raw"] == {"args": "ls"}

    def test_headers_are_json_and_timestamped(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        _webhook(receiver.url).ask(request_, 5)
        headers = receiver.requests[0].headers
        assert headers["Content-Type"] == "application/json"
        assert abs(int(headers["X-Cycleguard-Timestamp"]) - time.time()) < 60
        assert "X-Cycleguard-Signature" not in headers


@pytest.mark.slow
class TestWebhookSignature:
    """Receivers can check the HMAC with a ten-line function and reject impostors."""

    def test_signed_request_passes_the_readme_check(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        receiver.secret = SECRET
        decision = _webhook(receiver.url, secret=SECRET).ask(request_, 5)
        assert decision.decision is Decision.CONTINUE
        received = receiver.requests[0]
        assert received.headers["X-Cycleguard-Signature"].startswith("sha256=")
        assert verify_signature(
            SECRET,
            received.headers["X-Cycleguard-Timestamp"],
            received.body,
            received.headers["X-Cycleguard-Signature"],
        )

    def test_wrong_secret_is_rejected_and_fails_closed(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        receiver.secret = SECRET
        decision = _webhook(receiver.url, secret=b"not-the-secret").ask(request_, 5)
        assert decision.decision is Decision.ERROR
        assert "403" in decision.detail

    def test_missing_signature_is_rejected(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        receiver.secret = SECRET
        assert _webhook(receiver.url).ask(request_, 5).decision is Decision.ERROR


@pytest.mark.slow
class TestWebhookDeferredDecision:
    """202 Accepted: the decision arrives later through PendingDecisions."""

    def test_decision_resolved_from_another_thread_is_returned(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        receiver.replies = [(202, {})]
        escalator = _webhook(receiver.url)

        def human() -> None:
            assert receiver.got_request.wait(5)
            time.sleep(0.1)  # let the 202 reach the escalator first
            assert escalator.pending.resolve(request_.id, "modify", "stop re-reading")

        helper = threading.Thread(target=human)
        helper.start()
        decision = escalator.ask(request_, 5)
        helper.join()
        assert (decision.decision, decision.message) == (Decision.MODIFY, "stop re-reading")

    def test_resolution_before_the_202_reply_is_not_lost(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        pending = PendingDecisions()

        def resolve_then_accept(received: Received) -> Reply:
            assert pending.resolve(received.json["id"], "terminate")
            return 202, {}

        receiver.replies = [resolve_then_accept]
        decision = _webhook(receiver.url, pending=pending).ask(request_, 5)
        assert decision.decision is Decision.TERMINATE

    def test_no_resolution_times_out_within_the_deadline(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        receiver.replies = [(202, {})]
        escalator = _webhook(receiver.url)
        started = time.monotonic()
        decision = escalator.ask(request_, 1.0)
        assert decision.decision is Decision.TIMEOUT
        assert time.monotonic() - started < 1.0 + 1
        assert not escalator.pending.resolve(request_.id, "continue")  # too late: refused


@pytest.mark.slow
class TestWebhookFailures:
    """Slow, failing or absent receivers end in timeout or error, never continue."""

    def test_slow_receiver_times_out_within_deadline_plus_one_second(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        def slow(_: Received) -> Reply:
            receiver.release.wait(30)
            return 200, {"decision": "continue"}

        receiver.replies = [slow]
        started = time.monotonic()
        decision = _webhook(receiver.url).ask(request_, 1.0)
        assert decision.decision is Decision.TIMEOUT
        assert time.monotonic() - started < 1.0 + 1

    def test_server_error_then_success_is_retried(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        receiver.replies = [(500, {}), (503, {}), (200, {"decision": "continue"})]
        decision = _webhook(receiver.url, max_attempts=3).ask(request_, 5)
        assert decision.decision is Decision.CONTINUE
        assert len(receiver.requests) == 3
        assert len({r.json["id"] for r in receiver.requests}) == 1  # receivers can dedupe

    def test_persistent_server_error_is_an_error_after_max_attempts(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        receiver.replies = [(500, {})]
        decision = _webhook(receiver.url, max_attempts=3).ask(request_, 5)
        assert decision.decision is Decision.ERROR
        assert len(receiver.requests) == 3

    def test_retries_stop_at_the_deadline(
        self, receiver: Receiver, request_: EscalationRequest
    ) -> None:
        receiver.replies = [(502, {})]
        escalator = _webhook(receiver.url, max_attempts=1000, backoff_s=0.2)
        started = time.monotonic()
        decision = escalator.ask(request_, 1.0)
        assert decision.failed
        assert time.monotonic() - started < 1.0 + 1

    def test_connection_refused_fails_closed(self, request_: EscalationRequest) -> None:
        url = f"http://127.0.0.1:{_closed_port()}/hook"
        started = time.monotonic()
        decision = _webhook(url).ask(request_, 2.0)
        assert decision.decision in (Decision.ERROR, Decision.TIMEOUT)
        assert time.monotonic() - started < 2.0 + 1


@pytest.mark.slow
class TestTerminationNotice:
    """The termination notice is signed, leaves the checkpoint out, and never raises."""

    def test_notice_is_posted_signed_without_checkpoint(self, receiver: Receiver) -> None:
        receiver.secret = SECRET
        receiver.replies = [(204, b"")]
        record = TerminationRecord(
            session="sess-1",
            reason=TerminationReason.CYCLE_DETECTED,
            counters={"tool_pattern": 5},
            checkpoint={"secret_draft": "raw user data"},
        )
        assert _webhook(receiver.url, secret=SECRET).notify_termination(record, ref="r1")
        body = receiver.requests[0].json
        assert body["type"] == "cycleguard.termination"
        assert (body["session"], body["reason"], body["ref"]) == (
            "sess-1",
            "cycle_detected",
            "r1",
        )
        assert body["user_message"] == TerminationReason.CYCLE_DETECTED.user_message
        assert "checkpoint" not in body

    def test_unreachable_receiver_returns_false(self) -> None:
        record = TerminationRecord(session="s", reason="budget_exceeded")
        url = f"http://127.0.0.1:{_closed_port()}/hook"
        assert _webhook(url).notify_termination(record, deadline_s=1.0) is False


# --------------------------------------------------------------------------- TLS


@dataclass
class Certificate:
    cert: Path
    key: Path


@pytest.fixture(name="certificate", scope="module")
def fixture_certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2",
            "-subj", "/CN=cycleguard-test", "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return Certificate(cert, key)


@pytest.fixture(name="tls_receiver")
def fixture_tls_receiver(certificate: Certificate) -> Iterator[Receiver]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate.cert, certificate.key)
    yield from _serve(Receiver(), tls=context)


@pytest.mark.slow
class TestWebhookTls:
    """Certificates are verified by default; a private CA is trusted via ssl_context."""

    def test_untrusted_certificate_is_an_error_by_default(
        self, tls_receiver: Receiver, request_: EscalationRequest
    ) -> None:
        decision = _webhook(tls_receiver.url).ask(request_, 5)
        assert decision.decision is Decision.ERROR
        assert "TLS" in decision.detail
        assert tls_receiver.requests == []

    def test_ssl_context_trusting_the_ca_succeeds(
        self,
        tls_receiver: Receiver,
        certificate: Certificate,
        request_: EscalationRequest,
    ) -> None:
        trusting = ssl.create_default_context(cafile=str(certificate.cert))
        decision = _webhook(tls_receiver.url, ssl_context=trusting).ask(request_, 5)
        assert decision.decision is Decision.CONTINUE
        assert len(tls_receiver.requests) == 1

    def test_verify_tls_false_connects_warns_and_is_documented(
        self,
        tls_receiver: Receiver,
        request_: EscalationRequest,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """The switch exists, so the README must not claim verification is always on."""
        decision = _webhook(tls_receiver.url, verify_tls=False).ask(request_, 5)
        assert decision.decision is Decision.CONTINUE
        assert "TLS verification is OFF" in caplog.text
        readme = README.read_text(encoding="utf-8")
        assert "always on" not in readme
        assert "`verify_tls=False`" in readme


# --------------------------------------------------------------------------- signatures


class TestVerifySignature:
    """The receiver-side helper accepts our signature and nothing else."""

    def test_accepts_a_fresh_signature(self) -> None:
        body = b'{"a":1}'
        assert verify_signature(SECRET, "1000", body, sign(SECRET, 1000, body), now=1010)

    def test_str_secret_signs_like_its_utf8_bytes(self) -> None:
        assert sign("s3cret-for-tests", 1, b"x") == sign(SECRET, 1, b"x")

    def test_rejects_tampered_body(self) -> None:
        assert not verify_signature(SECRET, "1000", b"{}", sign(SECRET, 1000, b"[]"), now=1000)

    def test_rejects_wrong_secret(self) -> None:
        assert not verify_signature(SECRET, "1000", b"{}", sign(b"x", 1000, b"{}"), now=1000)

    def test_rejects_stale_timestamp(self) -> None:
        signature = sign(SECRET, 1000, b"{}")
        assert not verify_signature(SECRET, "1000", b"{}", signature, now=1000 + 301)

    @pytest.mark.parametrize(
        ("timestamp", "header"), [(None, "sha256=00"), ("1000", None), ("soon", "sha256=00")]
    )
    def test_rejects_missing_or_malformed_headers(
        self, timestamp: str | None, header: str | None
    ) -> None:
        assert not verify_signature(SECRET, timestamp, b"{}", header, now=1000)

    def test_agrees_with_the_readme_snippet(self) -> None:
        body, ts = b'{"type":"cycleguard.escalation"}', str(int(time.time()))
        headers = {"X-Cycleguard-Timestamp": ts, "X-Cycleguard-Signature": sign(SECRET, ts, body)}
        assert verify_cycleguard(SECRET, headers, body)
        assert not verify_cycleguard(b"other", headers, body)


# --------------------------------------------------------------------------- records


class TestRecords:
    """Requests, decisions and pending slots keep their invariants."""

    def test_request_from_signal_keeps_hashes_not_content(self) -> None:
        request = EscalationRequest.from_signal(_signal(), timeout_s=60, now=1000.0)
        assert request.deadline == 1060.0
        assert request.unit == ("read", "edit")
        assert request.evidence[0] == {
            "tool": "read",
            "args_hash": "a" * 16,
            "result_hash": "b" * 16,
            "error": False,
        }
        assert len(request.id) == 32 and int(request.id, 16) >= 0

    def test_every_request_has_its_own_id(self) -> None:
        first = EscalationRequest.from_signal(_signal(), timeout_s=1)
        second = EscalationRequest.from_signal(_signal(), timeout_s=1)
        assert first.id != second.id

    def test_modify_decision_requires_a_message(self) -> None:
        with pytest.raises(ValueError, match="modify"):
            HumanDecision(Decision.MODIFY, "")

    @pytest.mark.parametrize(
        ("decision", "terminates"),
        [("continue", False), ("terminate", True), ("timeout", True), ("error", True)],
    )
    def test_failures_and_terminate_stop_the_run(self, decision: str, terminates: bool) -> None:
        assert HumanDecision(Decision(decision)).terminates is terminates

    def test_pending_refuses_unknown_and_repeated_resolutions(self) -> None:
        pending = PendingDecisions()
        assert not pending.resolve("nope", "continue")
        pending.register("id1")
        assert pending.pending() == ["id1"]
        assert pending.resolve("id1", "continue")
        assert not pending.resolve("id1", "terminate")
        assert pending.wait("id1", 0).decision is Decision.CONTINUE  # type: ignore[union-attr]

    @pytest.mark.parametrize(("decision", "message"), [("maybe", None), ("modify", None)])
    def test_pending_rejects_invalid_decisions(self, decision: str, message: str | None) -> None:
        pending = PendingDecisions()
        pending.register("id1")
        with pytest.raises(ValueError):
            pending.resolve("id1", decision, message)

    def test_escalators_satisfy_the_protocol(self) -> None:
        for escalator in (
            WebhookEscalator("http://127.0.0.1:1/"),
            CallableEscalator(lambda r: "continue"),
            ConsoleEscalator(input_fn=lambda: "c", output=io.StringIO()),
        ):
            assert isinstance(escalator, Escalator)

    @pytest.mark.parametrize("url", ["ftp://host/x", "localhost:8080", "http:///nohost"])
    def test_webhook_rejects_non_http_urls(self, url: str) -> None:
        with pytest.raises(ValueError):
            WebhookEscalator(url)


# --------------------------------------------------------------------------- callable


class TestCallableEscalator:
    """A user function decides; its failures and slowness fail closed."""

    def test_returned_decision_is_passed_through(self, request_: EscalationRequest) -> None:
        escalator = CallableEscalator(lambda r: HumanDecision(Decision.MODIFY, f"fix {r.session}"))
        decision = escalator.ask(request_, 5)
        assert (decision.decision, decision.message) == (Decision.MODIFY, "fix sess-1")

    def test_plain_choice_string_is_accepted(self, request_: EscalationRequest) -> None:
        assert CallableEscalator(lambda r: "terminate").ask(request_, 5).decision is (
            Decision.TERMINATE
        )

    def test_exception_is_an_error(self, request_: EscalationRequest) -> None:
        def broken(_: EscalationRequest) -> str:
            raise RuntimeError("pager down")

        decision = CallableEscalator(broken).ask(request_, 5)
        assert decision.decision is Decision.ERROR
        assert "pager down" in decision.detail

    @pytest.mark.parametrize("value", [None, 1, {"decision": "continue"}, "modify", "yes"])
    def test_wrong_return_is_an_error(self, request_: EscalationRequest, value: Any) -> None:
        assert CallableEscalator(lambda r: value).ask(request_, 5).decision is Decision.ERROR

    def test_slow_function_times_out_within_deadline_plus_one_second(
        self, request_: EscalationRequest
    ) -> None:
        release = threading.Event()
        escalator = CallableEscalator(lambda r: "continue" if release.wait(30) else "terminate")
        started = time.monotonic()
        try:
            decision = escalator.ask(request_, 0.5)
        finally:
            release.set()
        assert decision.decision is Decision.TIMEOUT
        assert time.monotonic() - started < 0.5 + 1


# --------------------------------------------------------------------------- console


class _Output(io.StringIO):
    """Captured console output that signals each time a question is shown."""

    def __init__(self) -> None:
        super().__init__()
        self.questions = threading.Semaphore(0)

    def write(self, text: str) -> int:
        if "=== cycleguard" in text:
            self.questions.release()
        return super().write(text)


def _scripted(*lines: str) -> Callable[[], str]:
    answers = iter(lines)

    def read() -> str:
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    return read


class TestConsoleEscalator:
    """The terminal prompt shows the evidence and reads c / t / m within the deadline."""

    @pytest.mark.parametrize(
        ("answer", "expected"),
        [("c", Decision.CONTINUE), ("Terminate", Decision.TERMINATE), (" t ", Decision.TERMINATE)],
    )
    def test_answer_is_the_decision(
        self, request_: EscalationRequest, answer: str, expected: Decision
    ) -> None:
        output = _Output()
        decision = ConsoleEscalator(_scripted(answer), output).ask(request_, 5)
        assert decision.decision is expected

    def test_prompt_shows_the_evidence(self, request_: EscalationRequest) -> None:
        output = _Output()
        ConsoleEscalator(_scripted("c"), output).ask(request_, 5)
        shown = output.getvalue()
        for expected in ("sess-1", "tool_pattern", "read -> edit", "edit", "(error)", "[c]ontinue"):
            assert expected in shown

    def test_modify_asks_for_the_instruction(self, request_: EscalationRequest) -> None:
        output = _Output()
        decision = ConsoleEscalator(_scripted("m", "try the cache"), output).ask(request_, 5)
        assert (decision.decision, decision.message) == (Decision.MODIFY, "try the cache")
        assert "instruction" in output.getvalue()

    def test_unclear_answer_is_asked_again(self, request_: EscalationRequest) -> None:
        output = _Output()
        decision = ConsoleEscalator(_scripted("maybe", "t"), output).ask(request_, 5)
        assert decision.decision is Decision.TERMINATE
        assert "please answer" in output.getvalue()

    def test_end_of_input_is_an_error(self, request_: EscalationRequest) -> None:
        decision = ConsoleEscalator(_scripted(), _Output()).ask(request_, 5)
        assert decision.decision is Decision.ERROR

    def test_silence_times_out_within_deadline_plus_one_second(
        self, request_: EscalationRequest
    ) -> None:
        lines: queue.Queue[str] = queue.Queue()
        output = _Output()
        started = time.monotonic()
        decision = ConsoleEscalator(lines.get, output).ask(request_, 0.5)
        assert decision.decision is Decision.TIMEOUT
        assert time.monotonic() - started < 0.5 + 1
        assert "terminating" in output.getvalue()
        lines.put("c")  # unblock the reader thread

    def test_late_line_answers_the_next_question_not_a_second_reader(
        self, request_: EscalationRequest
    ) -> None:
        lines: queue.Queue[str] = queue.Queue()
        calls: list[int] = []

        def read() -> str:
            calls.append(1)
            return lines.get()

        output = _Output()
        escalator = ConsoleEscalator(read, output)
        assert escalator.ask(request_, 0.2).decision is Decision.TIMEOUT
        assert output.questions.acquire(timeout=5)

        def type_when_asked() -> None:
            assert output.questions.acquire(timeout=5)
            lines.put("t")

        typist = threading.Thread(target=type_when_asked)
        typist.start()
        decision = escalator.ask(request_, 5)
        typist.join()
        assert decision.decision is Decision.TERMINATE
        assert len(calls) == 1  # the pending read was reused, not duplicated
