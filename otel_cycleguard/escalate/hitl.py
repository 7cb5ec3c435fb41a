"""Asking a human: the escalator protocol and its webhook, callable and console forms.

Every escalator is fail-closed: whatever goes wrong (no answer in time, a broken receiver, a
bad answer) yields a ``timeout`` or ``error`` decision, which the protocol treats as terminate.
Nothing here ever returns ``continue`` on failure. ``ask`` blocks; the protocol calls it on a
background worker, never on the span-processing thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import queue
import socket
import ssl
import sys
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TextIO, runtime_checkable

from otel_cycleguard.detect.signals import Signal
from otel_cycleguard.escalate.decisions import Decision, HumanDecision
from otel_cycleguard.escalate.progress import TerminationRecord, evidence_dicts

if TYPE_CHECKING:  # httpx is imported when a WebhookEscalator is built, not with this module
    import httpx

__all__ = [
    "CHOICES",
    "CallableEscalator",
    "ConsoleEscalator",
    "Decision",
    "EscalationRequest",
    "Escalator",
    "HumanDecision",
    "PendingDecisions",
    "WebhookEscalator",
    "sign",
    "verify_signature",
]

_log = logging.getLogger(__name__)

CHOICES: tuple[str, ...] = ("continue", "terminate", "modify")

ESCALATION_TYPE = "cycleguard.escalation"
TERMINATION_TYPE = "cycleguard.termination"
TIMESTAMP_HEADER = "X-Cycleguard-Timestamp"
SIGNATURE_HEADER = "X-Cycleguard-Signature"

_MAX_RESPONSE_BYTES = 64 * 1024


def _error(detail: str) -> HumanDecision:
    return HumanDecision(Decision.ERROR, None, detail)


def _timeout(detail: str) -> HumanDecision:
    return HumanDecision(Decision.TIMEOUT, None, detail)


def _parse_choice(decision: Any, message: Any) -> HumanDecision:
    """Validate an answer from outside (JSON, a callable, a resolver); invalid → error."""
    if not isinstance(decision, str) or decision not in CHOICES:
        return _error(f"unknown decision {decision!r}")
    if message is not None and not isinstance(message, str):
        return _error(f"message must be a string, got {type(message).__name__}")
    if decision == "modify" and not (message and message.strip()):
        return _error("'modify' without an instruction message")
    return HumanDecision(Decision(decision), message)


@dataclass(frozen=True)
class EscalationRequest:
    """What a human is shown: hashes and names, never raw content unless opted in.

    ``deadline`` is absolute unix time, so a receiver can show a countdown. ``raw_preview``
    holds short redacted previews and is sent only by escalators told ``include_raw``.
    """

    session: str
    dimension: str
    streak: int
    threshold: int
    explanation: str
    deadline: float
    agent: str | None = None
    unit: tuple[str, ...] = ()
    evidence: tuple[dict[str, Any], ...] = ()
    choices: tuple[str, ...] = CHOICES
    rule: str = ""
    raw_preview: dict[str, Any] | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @classmethod
    def from_signal(
        cls,
        signal: Signal,
        *,
        timeout_s: float,
        now: float | None = None,
        raw_preview: dict[str, Any] | None = None,
    ) -> EscalationRequest:
        """The request for a TERM signal, due ``timeout_s`` from ``now``."""
        return cls(
            session=signal.session,
            agent=signal.agent,
            dimension=signal.dimension.value,
            rule=signal.rule,
            streak=signal.streak,
            threshold=signal.threshold,
            unit=tuple(signal.unit),
            evidence=tuple(evidence_dicts(signal.evidence)),
            explanation=signal.explanation,
            deadline=(time.time() if now is None else now) + timeout_s,
            raw_preview=raw_preview,
        )

    def to_payload(self, *, include_raw: bool = False) -> dict[str, Any]:
        """The documented webhook body; ``raw`` appears only when opted in and present."""
        payload: dict[str, Any] = {
            "type": ESCALATION_TYPE,
            "id": self.id,
            "session": self.session,
            "agent": self.agent,
            "dimension": self.dimension,
            "rule": self.rule or self.dimension,
            "streak": self.streak,
            "threshold": self.threshold,
            "unit": list(self.unit),
            "evidence": [dict(e) for e in self.evidence],
            "explanation": self.explanation,
            "choices": list(self.choices),
            "deadline": self.deadline,
        }
        if include_raw and self.raw_preview is not None:
            payload["raw"] = self.raw_preview
        return payload


@runtime_checkable
class Escalator(Protocol):
    """Asks a human and blocks for at most ``deadline_s`` seconds; never raises."""

    def ask(self, request: EscalationRequest, deadline_s: float) -> HumanDecision: ...


# --------------------------------------------------------------------------- signatures


def sign(secret: str | bytes, timestamp: str | int, body: bytes) -> str:
    """The signature header value: ``sha256=`` + hex HMAC-SHA256 of ``"{timestamp}.{body}"``."""
    key = secret.encode() if isinstance(secret, str) else secret
    mac = hmac.new(key, f"{timestamp}.".encode() + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify_signature(
    secret: str | bytes,
    timestamp: str | int | None,
    body: bytes,
    signature_header: str | None,
    *,
    tolerance_s: float = 300,
    now: float | None = None,
) -> bool:
    """Receiver side: is this request ours and fresh? Constant-time, replay-bounded."""
    if timestamp is None or signature_header is None:
        return False
    try:
        ts = int(timestamp)
    except (TypeError, ValueError):
        return False
    current = time.time() if now is None else now
    if abs(current - ts) > tolerance_s:
        return False
    expected = sign(secret, str(timestamp).strip(), body)
    return hmac.compare_digest(expected.encode(), signature_header.strip().encode())


# --------------------------------------------------------------------------- 202 decisions


class PendingDecisions:
    """Decisions that arrive later, after a receiver answered ``202 Accepted``.

    The escalator registers a request id before posting (so a very fast resolver is not
    lost), waits with the remaining deadline, and discards the id afterwards: a late answer
    is refused rather than kept forever. Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._slots: dict[str, tuple[threading.Event, list[HumanDecision]]] = {}

    def register(self, request_id: str) -> None:
        """Open a slot for ``request_id``; resolving an unregistered id is refused."""
        with self._lock:
            self._slots.setdefault(request_id, (threading.Event(), []))

    def resolve(
        self, request_id: str, decision: str | Decision, message: str | None = None
    ) -> bool:
        """Deliver a human's choice. False if the id is unknown, expired or already decided.

        Raises ``ValueError`` for an invalid decision (not one of the three choices, or
        ``modify`` without a message) so an HTTP endpoint can answer 400.
        """
        value = decision.value if isinstance(decision, Decision) else decision
        parsed = _parse_choice(value, message)
        if parsed.failed:
            raise ValueError(parsed.detail)
        parsed = HumanDecision(parsed.decision, parsed.message, "resolved via PendingDecisions")
        with self._lock:
            slot = self._slots.get(request_id)
            if slot is None or slot[0].is_set():
                return False
            slot[1].append(parsed)
            slot[0].set()
        return True

    def wait(self, request_id: str, timeout_s: float) -> HumanDecision | None:
        """The decision for ``request_id`` if it arrives within ``timeout_s``, else None."""
        with self._lock:
            slot = self._slots.get(request_id)
        if slot is None or not slot[0].wait(max(0.0, timeout_s)):
            return None
        return slot[1][0]

    def discard(self, request_id: str) -> None:
        """Forget ``request_id``; later resolutions are refused."""
        with self._lock:
            self._slots.pop(request_id, None)

    def pending(self) -> list[str]:
        """Ids still waiting for a decision (for a decision endpoint's listing)."""
        with self._lock:
            return [rid for rid, (event, _) in self._slots.items() if not event.is_set()]


# --------------------------------------------------------------------------- webhook


class _Deadline(Exception):
    """The deadline passed during an HTTP attempt."""


class _AttemptTimeout(TimeoutError):
    """One attempt used up ``timeout_s`` before the deadline: retried like a connection error."""


def _tls_failure(exc: BaseException) -> ssl.SSLError | None:
    """The TLS error behind an httpx exception (certificate problems do not heal by retrying)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ssl.SSLError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _shutdown(streams: list[Any]) -> None:
    """Shut the attempt's sockets down: wakes a blocked read at once (``close`` would not)."""
    for stream in reversed(streams):  # the TLS stream first: wrapping detached the plain one
        with contextlib.suppress(Exception):
            sock = stream.get_extra_info("socket")
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)


class WebhookEscalator:
    """Posts the request as signed JSON and takes the decision from the answer.

    * ``200`` with ``{"decision": "continue"|"terminate"|"modify", "message": ...}``: that
      decision (``modify`` needs a non-empty message).
    * ``202``: the decision comes later via ``self.pending.resolve(id, decision, message)``.
    * connection errors, ``408``, ``429`` and ``5xx``: retried with exponential backoff, up to
      ``max_attempts``, and only while the deadline allows.
    * anything else (other statuses, redirects, bad JSON, unknown decisions, TLS failures):
      ``error``; the deadline passing: ``timeout``.

    ``timeout_s`` caps one attempt (default: the remaining deadline, since a receiver may hold
    the request open until a human answers); ``connect_timeout_s`` caps connecting. Retried
    requests keep the same ``id`` so receivers can deduplicate. TLS is verified by default;
    pass ``ssl_context`` to trust a private CA rather than turning verification off.

    Requests go through an ``httpx.Client`` (no redirects followed, no proxy or ``.netrc``
    from the environment, a fresh connection per attempt); ``transport=`` replaces its
    transport (``httpx.MockTransport`` in tests that need no socket). Each attempt runs on a
    daemon thread with httpx's per-phase timeouts bounded by the time left, and the caller
    waits no longer than the deadline: at the deadline the attempt's socket is shut down (a
    receiver that trickles bytes cannot hold it open) and the answer is ``timeout``.
    """

    def __init__(
        self,
        url: str,
        secret: str | bytes | None = None,
        timeout_s: float | None = None,
        max_attempts: int = 3,
        include_raw: bool = False,
        verify_tls: bool = True,
        ssl_context: ssl.SSLContext | None = None,
        pending: PendingDecisions | None = None,
        *,
        connect_timeout_s: float = 5.0,
        backoff_s: float = 0.5,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        import httpx  # here, not at import: the package root and the core stay light

        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"webhook url must be http(s)://host/...: {url!r}")
        if max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        if timeout_s is not None and timeout_s <= 0:
            raise ValueError("timeout_s must be > 0")
        if connect_timeout_s <= 0 or backoff_s < 0:
            raise ValueError("connect_timeout_s must be > 0 and backoff_s >= 0")
        self.url = url
        self._https = parts.scheme == "https"
        self._secret = secret
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.include_raw = include_raw
        self.pending = pending if pending is not None else PendingDecisions()
        self._extra_headers = dict(headers or {})
        self._ssl_context: ssl.SSLContext | None = None
        if self._https:
            if ssl_context is not None:
                self._ssl_context = ssl_context
            elif verify_tls:
                self._ssl_context = ssl.create_default_context()
            else:
                _log.warning("cycleguard webhook %s: TLS verification is OFF", url)
                ctx = ssl.create_default_context()
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
                self._ssl_context = ctx
        if transport is None:
            # No keep-alive: every attempt connects afresh (so the deadline watchdog always
            # holds its socket), as the retry contract assumes.
            transport = httpx.HTTPTransport(
                verify=self._ssl_context if self._ssl_context is not None else False,
                limits=httpx.Limits(max_keepalive_connections=0),
            )
        self._client = httpx.Client(transport=transport, follow_redirects=False, trust_env=False)
        self._httpx = httpx

    def close(self) -> None:
        """Release the HTTP client (and its transport)."""
        self._client.close()

    def __repr__(self) -> str:
        signed = "signed" if self._secret else "unsigned"
        return f"WebhookEscalator({self.url!r}, {signed}, max_attempts={self.max_attempts})"

    # -- public

    def ask(self, request: EscalationRequest, deadline_s: float) -> HumanDecision:
        """POST the request and wait for the decision, never past ``deadline_s``."""
        try:
            return self._ask(request, time.monotonic() + deadline_s)
        except Exception as exc:  # fail-closed, whatever happened
            _log.exception("cycleguard webhook escalation %s failed unexpectedly", request.id)
            return _error(f"unexpected {type(exc).__name__}: {exc}")

    def notify_termination(
        self, record: TerminationRecord, *, ref: str | None = None, deadline_s: float = 10.0
    ) -> bool:
        """Best effort: tell the receiver a run was terminated. True on a 2xx; never raises.

        The checkpoint is not sent (it is the agent's own payload and may hold raw content).
        """
        payload: dict[str, Any] = {"type": TERMINATION_TYPE}
        payload.update(record.to_dict())
        payload.pop("checkpoint", None)
        payload["ref"] = ref
        try:
            outcome = self._post(self._encode(payload), time.monotonic() + deadline_s)
        except Exception:
            _log.exception("cycleguard termination notice for %s failed", record.session)
            return False
        if isinstance(outcome, HumanDecision):
            _log.warning("cycleguard termination notice not delivered: %s", outcome.detail)
            return False
        return 200 <= outcome[0] < 300

    # -- internals

    def _ask(self, request: EscalationRequest, end: float) -> HumanDecision:
        body = self._encode(request.to_payload(include_raw=self.include_raw))
        self.pending.register(request.id)
        try:
            outcome = self._post(body, end)
            if isinstance(outcome, HumanDecision):
                return outcome
            status, data = outcome
            if status == 202:
                decision = self.pending.wait(request.id, end - time.monotonic())
                if decision is None:
                    return _timeout("202 accepted but no decision arrived before the deadline")
                return decision
            if status != 200:
                return _error(f"webhook answered HTTP {status}")
            return self._decision_from_body(data)
        finally:
            self.pending.discard(request.id)

    @staticmethod
    def _decision_from_body(data: bytes) -> HumanDecision:
        try:
            answer = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return _error("webhook answer is not valid JSON")
        if not isinstance(answer, dict):
            return _error("webhook answer is not a JSON object")
        decision = _parse_choice(answer.get("decision"), answer.get("message"))
        if decision.failed:
            return decision
        return HumanDecision(decision.decision, decision.message, "webhook")

    @staticmethod
    def _encode(payload: Mapping[str, Any]) -> bytes:
        return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")

    def _headers(self, body: bytes) -> dict[str, str]:
        timestamp = str(int(time.time()))
        headers = {
            **self._extra_headers,
            "Content-Type": "application/json",
            "User-Agent": "otel-cycleguard",
            TIMESTAMP_HEADER: timestamp,
        }
        if self._secret:
            headers[SIGNATURE_HEADER] = sign(self._secret, timestamp, body)
        return headers

    def _post(self, body: bytes, end: float) -> tuple[int, bytes] | HumanDecision:
        """POST with bounded retries; a (status, body) answer, or a failure decision."""
        last = "no attempt made"
        for attempt in range(self.max_attempts):
            if attempt:
                pause = self.backoff_s * (2 ** (attempt - 1))
                if time.monotonic() + pause >= end:
                    return _timeout(f"deadline leaves no time to retry after: {last}")
                time.sleep(pause)
            if time.monotonic() >= end:
                return _timeout(f"deadline passed ({last})")
            try:
                status, data = self._attempt(body, end)
            except _Deadline:
                return _timeout(f"no answer before the deadline (attempt {attempt + 1})")
            except (OSError, self._httpx.TransportError) as exc:
                tls = _tls_failure(exc)
                if tls is not None:  # certificate problems do not heal by retrying
                    return _error(f"TLS failure: {tls}")
                last = f"{type(exc).__name__}: {exc}"
                _log.warning("cycleguard webhook attempt %d failed: %s", attempt + 1, last)
                continue
            if status in (408, 429) or 500 <= status < 600:
                last = f"HTTP {status}"
                _log.warning("cycleguard webhook attempt %d answered %s", attempt + 1, last)
                continue
            return status, data
        return _error(f"giving up after {self.max_attempts} attempts: {last}")

    def _attempt(self, body: bytes, end: float) -> tuple[int, bytes]:
        """One request, on a daemon thread; the caller never waits past the deadline.

        httpx's timeouts (connect, write, pool: the time left; read: ``timeout_s`` too) bound
        each phase; at the deadline (or ``timeout_s``) the attempt's socket is shut down, so a
        trickling receiver cannot keep the thread reading either."""
        now = time.monotonic()
        remaining = end - now
        if remaining <= 0:
            raise _Deadline
        httpx = self._httpx
        read = remaining if self.timeout_s is None else min(remaining, self.timeout_s)
        timeout = httpx.Timeout(
            connect=min(self.connect_timeout_s, remaining),
            read=read,
            write=remaining,
            pool=remaining,
        )
        streams: list[Any] = []  # the attempt's network streams, for the watchdog
        abandoned = threading.Event()  # the caller stopped waiting: cut whatever connects late

        def trace(event: str, info: Mapping[str, Any]) -> None:
            if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
                stream = info.get("return_value")
                if stream is not None:
                    streams.append(stream)
                    if abandoned.is_set():
                        _shutdown(streams)

        box: queue.Queue[tuple[int, bytes, BaseException | None]] = queue.Queue(maxsize=1)
        headers = self._headers(body)

        def run() -> None:
            try:
                with self._client.stream(
                    "POST",
                    self.url,
                    content=body,
                    headers=headers,
                    timeout=timeout,
                    extensions={"trace": trace},
                ) as response:
                    data = bytearray()
                    for chunk in response.iter_bytes():
                        data += chunk
                        if len(data) > _MAX_RESPONSE_BYTES:
                            break
                    box.put((response.status_code, bytes(data), None))
            except BaseException as exc:
                box.put((0, b"", exc))

        threading.Thread(target=run, name="cycleguard-webhook", daemon=True).start()
        wait = remaining if self.timeout_s is None else min(remaining, self.timeout_s)
        try:
            status, data, exc = box.get(timeout=wait)
        except queue.Empty:
            abandoned.set()
            _shutdown(streams)  # wakes the thread's blocked read at once
            if wait >= remaining or time.monotonic() >= end:
                raise _Deadline from None
            raise _AttemptTimeout(f"no answer within timeout_s={self.timeout_s}") from None
        if exc is not None:
            if time.monotonic() >= end and not _tls_failure(exc):
                raise _Deadline from exc
            raise exc
        if len(data) > _MAX_RESPONSE_BYTES:
            return status, b""  # oversized: never a valid decision
        return status, data


# --------------------------------------------------------------------------- callable


def _run_with_deadline(
    fn: Callable[[], Any], deadline_s: float, name: str
) -> tuple[bool, Any, BaseException | None]:
    """Run ``fn`` on a daemon thread: (finished, result, exception). A late fn is abandoned."""
    box: queue.Queue[tuple[Any, BaseException | None]] = queue.Queue(maxsize=1)

    def run() -> None:
        try:
            box.put((fn(), None))
        except BaseException as exc:
            box.put((None, exc))

    threading.Thread(target=run, name=name, daemon=True).start()
    try:
        result, exc = box.get(timeout=max(0.0, deadline_s))
    except queue.Empty:
        return False, None, None
    return True, result, exc


class CallableEscalator:
    """Asks a Python function: ``fn(request)`` returns a :class:`HumanDecision` or a choice.

    A plain string ``"continue"`` / ``"terminate"`` is accepted; ``modify`` needs a
    HumanDecision with a message. Exceptions and other return values become ``error``; a
    function still running at the deadline becomes ``timeout`` (it cannot be killed, so its
    thread is abandoned and its late answer ignored).
    """

    def __init__(self, fn: Callable[[EscalationRequest], HumanDecision | str]) -> None:
        if not callable(fn):
            raise ValueError("CallableEscalator needs a callable")
        self.fn = fn

    def __repr__(self) -> str:
        return f"CallableEscalator({getattr(self.fn, '__qualname__', self.fn)!r})"

    def ask(self, request: EscalationRequest, deadline_s: float) -> HumanDecision:
        """Call the function on a worker thread and wait at most ``deadline_s``."""
        finished, result, exc = _run_with_deadline(
            lambda: self.fn(request), deadline_s, f"cycleguard-hitl-{request.id[:8]}"
        )
        if not finished:
            return _timeout(f"escalation callable did not return within {deadline_s:g} s")
        if exc is not None:
            _log.warning("cycleguard escalation callable raised %r", exc)
            return _error(f"escalation callable raised {type(exc).__name__}: {exc}")
        if isinstance(result, HumanDecision):
            return result
        if isinstance(result, Decision):
            result = result.value
        if isinstance(result, str):
            return _parse_choice(result, None)
        return _error(f"escalation callable returned {type(result).__name__}, not a decision")


# --------------------------------------------------------------------------- console

_EOF = object()


class _LineReader:
    """One reader thread for the whole escalator, reading a line only when asked.

    A timed-out question leaves its read pending; the next question reuses that read
    instead of starting a second one, so two threads never compete for stdin, and lines
    typed while nobody asked are dropped before the next question.
    """

    def __init__(self, input_fn: Callable[[], str]) -> None:
        self._input_fn = input_fn
        self._lock = threading.Lock()
        self._demand = threading.Semaphore(0)
        self._lines: queue.Queue[object] = queue.Queue()
        self._outstanding = False
        self._thread: threading.Thread | None = None

    def drain(self) -> None:
        while True:
            try:
                self._lines.get_nowait()
            except queue.Empty:
                return

    def readline(self, timeout_s: float) -> object:
        """A line, ``_EOF``, or None on timeout."""
        with self._lock:
            if not self._outstanding:
                self._outstanding = True
                self._demand.release()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="cycleguard-console", daemon=True
                )
                self._thread.start()
        try:
            return self._lines.get(timeout=max(0.0, timeout_s))
        except queue.Empty:
            return None

    def _run(self) -> None:
        while True:
            self._demand.acquire()
            line: object
            try:
                line = self._input_fn()
            except EOFError:
                line = _EOF
            except Exception as exc:  # a broken input_fn must not hang the question
                _log.warning("cycleguard console input failed: %r", exc)
                line = _EOF
            with self._lock:
                self._outstanding = False
                if line is _EOF:  # the next question starts a fresh reader
                    self._thread = None
            self._lines.put(line)
            if line is _EOF:
                return


class ConsoleEscalator:
    """Asks whoever sits at the terminal: ``[c]ontinue / [t]erminate / [m]odify``.

    For local runs. The prompt goes to ``output`` (stderr by default, away from the agent's
    stdout); answers come from ``input_fn`` (``input``; inject another for tests). Unclear
    answers are asked again until the deadline; end of input is an ``error``. Concurrent
    escalations are asked one at a time.
    """

    _ANSWERS: Mapping[str, str] = {
        "c": "continue",
        "continue": "continue",
        "t": "terminate",
        "terminate": "terminate",
        "m": "modify",
        "modify": "modify",
    }

    def __init__(self, input_fn: Callable[[], str] = input, output: TextIO | None = None) -> None:
        self._reader = _LineReader(input_fn)
        self._output = output
        self._turn = threading.Lock()

    @property
    def output(self) -> TextIO:
        # Resolved late so a test or a redirect of sys.stderr after import still applies.
        return self._output if self._output is not None else sys.stderr

    def ask(self, request: EscalationRequest, deadline_s: float) -> HumanDecision:
        """Print the evidence, read the choice, and give up at the deadline."""
        end = time.monotonic() + deadline_s
        if not self._turn.acquire(timeout=max(0.0, deadline_s)):
            return _timeout("another console escalation held the terminal until the deadline")
        try:
            return self._ask(request, end)
        except Exception as exc:
            _log.exception("cycleguard console escalation failed")
            return _error(f"console escalation failed: {type(exc).__name__}: {exc}")
        finally:
            self._turn.release()

    def _ask(self, request: EscalationRequest, end: float) -> HumanDecision:
        self._reader.drain()
        self._write(self._describe(request, end - time.monotonic()))
        while True:
            self._write("[c]ontinue / [t]erminate / [m]odify? ")
            line = self._reader.readline(end - time.monotonic())
            if line is None:
                self._write("\nno answer in time: terminating (fail-closed)\n")
                return _timeout("no console answer before the deadline")
            if line is _EOF:
                return _error("console input closed")
            choice = self._ANSWERS.get(str(line).strip().lower())
            if choice is None:
                self._write(f"please answer c, t or m (got {str(line).strip()!r})\n")
                continue
            if choice != "modify":
                return HumanDecision(Decision(choice), None, "console")
            self._write("instruction for the agent: ")
            text = self._reader.readline(end - time.monotonic())
            if text is None:
                self._write("\nno instruction in time: terminating (fail-closed)\n")
                return _timeout("no console instruction before the deadline")
            if text is _EOF:
                return _error("console input closed")
            if not str(text).strip():
                self._write("an empty instruction cannot modify the run\n")
                continue
            return HumanDecision(Decision.MODIFY, str(text).strip(), "console")

    @staticmethod
    def _describe(request: EscalationRequest, remaining_s: float) -> str:
        lines = [
            "",
            "=== cycleguard: the agent looks stuck ===",
            f"session:   {request.session}"
            + (f"  (agent {request.agent})" if request.agent else ""),
            f"dimension: {request.dimension}  streak {request.streak} / {request.threshold}",
        ]
        if request.unit:
            lines.append(f"repeating: {' -> '.join(request.unit)}")
        if request.explanation:
            lines.append(f"why:       {request.explanation}")
        for item in request.evidence:
            flag = "  (error)" if item.get("error") else ""
            lines.append(
                f"  - {item.get('tool')}  args {str(item.get('args_hash', ''))[:12]}"
                f"  result {str(item.get('result_hash', ''))[:12]}{flag}"
            )
        lines.append(f"answer within {max(0, int(remaining_s))} s, or the run is terminated.")
        return "\n".join(lines) + "\n"

    def _write(self, text: str) -> None:
        try:
            self.output.write(text)
            self.output.flush()
        except (OSError, ValueError):
            pass
