"""Bodies nested thousands deep get the documented 400; attributes nested deep are cut.

Raw sockets against a real ``cycleguard serve``: 100,000 ``[`` used to end in
``RecursionError`` and a dropped connection (no answer at all), as did an attribute nested
400 deep; and a decision body of 64 KiB of ``[`` did the same on the decision endpoint.
"""

from __future__ import annotations

import json
import socket

import pytest

from otel_cycleguard.service.convert import from_json
from tests.service.conftest import wait_for


def raw_post(port: int, path: str, body: bytes, ctype: str = "application/json") -> bytes:
    """The response's status line (b"" when the server closed without answering)."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {ctype}\r\n"
            f"Authorization: Bearer dt\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n".encode()
            + body
        )
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except (ConnectionResetError, TimeoutError):
            pass
    return data.split(b"\r\n", 1)[0]


def nested_attribute(depth: int) -> str:
    """An OTLP/JSON AnyValue ``depth`` maps and arrays deep (built as text: json.dumps
    itself would recurse too deep)."""
    head, tail = [], []
    for i in range(depth):
        if i % 2:
            head.append('{"arrayValue":{"values":[')
            tail.append("]}}")
        else:
            head.append('{"kvlistValue":{"values":[{"key":"k","value":')
            tail.append("}]}}")
    return "".join(head) + '{"stringValue":"x"}' + "".join(reversed(tail))


def document(value: str, conversation: str = "deep") -> bytes:
    span = {
        "traceId": "0" * 31 + "1",
        "spanId": "0" * 15 + "1",
        "name": "execute_tool read",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.conversation.id", "value": {"stringValue": conversation}},
            {"key": "gen_ai.tool.call.arguments", "value": "@VALUE@"},
        ],
    }
    text = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    return text.replace('"@VALUE@"', value).encode()


def _depth(value) -> int:
    depth = 0
    while isinstance(value, dict | tuple) and value:
        value = value["k"] if isinstance(value, dict) else value[0]
        depth += 1
    return depth


def test_an_attribute_nested_deeper_than_the_limit_is_cut_at_it():
    from otel_cycleguard.analyze.otlp import MAX_VALUE_DEPTH

    (span,) = from_json(document(nested_attribute(250))).spans
    cut = span.attributes["gen_ai.tool.call.arguments"]
    assert _depth(cut) == MAX_VALUE_DEPTH and "'x'" not in repr(cut)  # what is deeper: left out
    (span,) = from_json(document(nested_attribute(MAX_VALUE_DEPTH))).spans
    kept = span.attributes["gen_ai.tool.call.arguments"]
    assert _depth(kept) == MAX_VALUE_DEPTH and "'x'" in repr(kept)


@pytest.mark.slow
def test_deep_bodies_get_400_and_deep_attributes_are_cut(services, tmp_path):
    svc = services(
        "--state-file",
        "",
        "--decision-token",
        "dt",
        env={"CYCLEGUARD_ESCALATION__PROGRESS_DIR": str(tmp_path / "p")},
    ).start()
    port = svc.http_port
    assert raw_post(port, "/v1/traces", b"[" * 100_000) == b"HTTP/1.1 400 Bad Request"
    assert raw_post(port, "/v1/traces", b'{"a":' * 50_000) == b"HTTP/1.1 400 Bad Request"
    # An attribute 400 deep (1,400 JSON levels): past the parser's depth limit, a 400 too.
    assert raw_post(port, "/v1/traces", document(nested_attribute(400))) == (
        b"HTTP/1.1 400 Bad Request"
    )
    assert raw_post(port, "/v1/decisions/x", b"[" * 60_000) == b"HTTP/1.1 400 Bad Request"
    # 250 deep parses (875 JSON levels): accepted, the span is detected, the value cut.
    assert raw_post(port, "/v1/traces", document(nested_attribute(250))) == b"HTTP/1.1 200 OK"
    wait_for(lambda: svc.metric("cycleguard_tool_calls_total") == 1)
    assert svc.metric("cycleguard_service_spans_skipped_total") == 0
    assert svc.stop() == 0
