"""The README's webhook-signature snippet works on a real signed request from the escalator.

Receivers copy that block into their own service, so it is executed here as written (it must
need nothing from our package) and checked against a request captured by a local HTTP server.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from otel_cycleguard.escalate import Decision, EscalationRequest, WebhookEscalator, sign

README = Path(__file__).resolve().parent.parent / "README.md"
HEADING = "Verifying webhook signatures"
SECRET = b"whsec-readme-test"


def readme_block(heading: str) -> str:
    """The first ```python block after the Markdown heading containing ``heading``."""
    assert README.is_file(), f"{README} is missing"
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"^#+ [^\n]*{re.escape(heading)}[^\n]*$", text, re.MULTILINE)
    assert match, f"README has no heading containing {heading!r}"
    rest = text[match.end() :]
    next_heading = re.search(r"^#+ ", rest, re.MULTILINE)
    section = rest[: next_heading.start()] if next_heading else rest
    block = re.search(r"^```python\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert block, f"no ```python block under the {heading!r} heading"
    return block.group(1)


@pytest.fixture(name="verify", scope="module")
def fixture_verify() -> Callable[..., bool]:
    namespace: dict[str, Any] = {"__name__": "readme_snippet"}
    exec(compile(readme_block(HEADING), str(README), "exec"), namespace)
    verify = namespace.get("verify_cycleguard")
    assert callable(verify), "the README block must define verify_cycleguard"
    return verify


class _Capture(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.captured.append((self.headers, body))  # type: ignore[attr-defined]
        data = json.dumps({"decision": "continue"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(name="signed", scope="module")
def fixture_signed() -> Iterator[tuple[Message, bytes]]:
    """A real escalation POST, as the receiver's HTTP server saw it (headers and raw body)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    server.captured = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/hook"
        request = EscalationRequest(
            session="sess-readme",
            dimension="identical_call",
            streak=5,
            threshold=5,
            explanation="grep repeated 5 times — ünïcode too",
            deadline=time.time() + 30,
        )
        decision = WebhookEscalator(url, secret=SECRET.decode()).ask(request, 10.0)
        assert decision.decision is Decision.CONTINUE
        [(headers, body)] = server.captured  # type: ignore[attr-defined]
        yield headers, body
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_readme_snippet_accepts_a_real_signed_request(
    verify: Callable[..., bool], signed: tuple[Message, bytes]
) -> None:
    headers, body = signed
    assert json.loads(body)["session"] == "sess-readme"
    assert verify(SECRET, headers, body) is True
    assert verify(SECRET, dict(headers.items()), body) is True  # a plain dict works as well


def test_readme_snippet_rejects_a_tampered_body(
    verify: Callable[..., bool], signed: tuple[Message, bytes]
) -> None:
    headers, body = signed
    tampered = body.replace(b'"streak":5', b'"streak":1')
    assert tampered != body
    assert verify(SECRET, headers, tampered) is False
    assert verify(SECRET, headers, body + b" ") is False


def test_readme_snippet_rejects_another_secret(
    verify: Callable[..., bool], signed: tuple[Message, bytes]
) -> None:
    headers, body = signed
    assert verify(b"someone-else", headers, body) is False


def test_readme_snippet_rejects_a_stale_timestamp(
    verify: Callable[..., bool], signed: tuple[Message, bytes]
) -> None:
    _, body = signed
    stale = str(int(time.time()) - 301)
    replayed = {
        "X-Cycleguard-Timestamp": stale,
        "X-Cycleguard-Signature": sign(SECRET, stale, body),
    }
    assert verify(SECRET, replayed, body) is False  # correctly signed, but too old
    recent = str(int(time.time()) - 200)
    fresh = {"X-Cycleguard-Timestamp": recent, "X-Cycleguard-Signature": sign(SECRET, recent, body)}
    assert verify(SECRET, fresh, body) is True  # the tolerance is what rejects, not the re-sign


def test_readme_snippet_rejects_missing_or_malformed_headers(
    verify: Callable[..., bool], signed: tuple[Message, bytes]
) -> None:
    headers, body = signed
    sig = headers["X-Cycleguard-Signature"]
    assert verify(SECRET, {}, body) is False
    assert verify(SECRET, {"X-Cycleguard-Signature": sig}, body) is False
    bad_ts = {"X-Cycleguard-Timestamp": "1e9", "X-Cycleguard-Signature": sig}
    assert verify(SECRET, bad_ts, body) is False
