"""A scripted model behind a real HTTP server on loopback: OpenAI chat completions and
Anthropic messages, so the real clients and their real instrumentations run offline.

``FakeLLM(script)`` serves ``POST /v1/chat/completions`` (OpenAI) and ``POST /v1/messages``
(Anthropic). ``script(request_json, turn_index)`` returns either a list of tool calls
``[(name, arguments_dict), ...]`` (the model asks for them) or a string (the final answer).
Every request body is kept in ``requests``, so tests assert on what the agent really sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = list[tuple[str, dict[str, Any]]] | str
Script = Callable[[dict[str, Any], int], Reply]


class FakeLLM:
    """The server; use as a context manager. ``openai_url`` / ``anthropic_url`` for clients."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reply(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            turn = len(self.requests)
            self.requests.append(body)
        answer = self.script(body, turn)
        if path.endswith("/chat/completions"):
            return _openai_reply(answer, turn, body.get("model", "gpt-test"))
        return _anthropic_reply(answer, turn, body.get("model", "claude-test"))


def _openai_reply(answer: Reply, turn: int, model: str) -> dict[str, Any]:
    if isinstance(answer, str):
        message: dict[str, Any] = {"role": "assistant", "content": answer}
        finish = "stop"
    else:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{turn}_{index}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
                for index, (name, arguments) in enumerate(answer)
            ],
        }
        finish = "tool_calls"
    return {
        "id": f"chatcmpl-{turn}",
        "object": "chat.completion",
        "created": 1_700_000_000 + turn,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": 20 + turn, "completion_tokens": 7, "total_tokens": 27 + turn},
    }


def _anthropic_reply(answer: Reply, turn: int, model: str) -> dict[str, Any]:
    if isinstance(answer, str):
        content: list[dict[str, Any]] = [{"type": "text", "text": answer}]
        stop = "end_turn"
    else:
        content = [
            {"type": "tool_use", "id": f"toolu_{turn}_{index}", "name": name, "input": arguments}
            for index, (name, arguments) in enumerate(answer)
        ]
        stop = "tool_use"
    return {
        "id": f"msg_{turn}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 20 + turn, "output_tokens": 7},
    }


def _handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            try:
                payload = json.dumps(fake.reply(self.path, body)).encode()
                status = 200
            except Exception as exc:  # a broken script shows up as an API error
                payload = json.dumps({"error": {"message": repr(exc), "type": "fake"}}).encode()
                status = 500
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    return Handler
