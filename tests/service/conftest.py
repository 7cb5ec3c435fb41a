"""Helpers for the service tests: the service as a subprocess, a webhook receiver, an agent."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

HERE = Path(__file__).parent
PY = sys.executable


class ServiceProcess:
    """``python -m otel_cycleguard.service`` on loopback; ports parsed from its banner."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.args = list(args)
        self.env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen[str] | None = None
        self.http_port = self.grpc_port = 0

    def start(self, http_port: int = 0, grpc_port: int = 0) -> ServiceProcess:
        self.proc = subprocess.Popen(
            [
                PY,
                "-m",
                "otel_cycleguard.service",
                "--http-port",
                str(http_port),
                "--grpc-port",
                str(grpc_port),
                *self.args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
        )
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(
            target=lambda: [lines.put(x) for x in self.proc.stdout], daemon=True
        ).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        # Start-up imports the whole service (gRPC, protobuf); on a loaded 2-core machine that
        # has taken over 20 s, so the wait is generous: it bounds a hang, it times nothing.
        try:
            line = lines.get(timeout=90)
        except queue.Empty:
            self.proc.kill()
            raise AssertionError("cycleguard serve printed no 'listening' line in 90 s") from None
        assert "listening" in line, line
        for part in line.split():
            if part.startswith("otlp_http="):
                self.http_port = int(part.rsplit(":", 1)[1])
            if part.startswith("otlp_grpc="):
                self.grpc_port = int(part.rsplit(":", 1)[1])
        self._lines = lines
        return self

    def _drain_stderr(self) -> None:
        self.stderr: list[str] = []
        for line in self.proc.stderr:  # type: ignore[union-attr]
            self.stderr.append(line)

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def stop(self, sig: int = signal.SIGTERM) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=30)

    def restart(self) -> ServiceProcess:
        assert self.stop() == 0
        return self.start(self.http_port, self.grpc_port)

    def get_json(self, path: str, token: str | None = None) -> Any:
        req = urllib.request.Request(self.http + path)
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def metric(self, name: str, **labels: str) -> float:
        return metric_value(self.http, name, **labels)


def metric_value(base: str, name: str, **labels: str) -> float:
    with urllib.request.urlopen(base + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    total = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total


class Webhook:
    """A HITL receiver: records escalation posts; answers 202 (decision comes later) or 200."""

    def __init__(self, answer: int = 202) -> None:
        self.answer = answer
        self.received: queue.Queue[dict[str, Any]] = queue.Queue()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                data = json.loads(body)
                data["_headers"] = dict(self.headers)
                hook.received.put(data)
                if data.get("type") == "cycleguard.escalation" and hook.answer == 200:
                    out = b'{"decision": "continue"}'
                    self.send_response(200)
                else:
                    out = b"{}"
                    self.send_response(202)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"

    def next(self, kind: str = "cycleguard.escalation", timeout: float = 20) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while True:
            item = self.received.get(timeout=max(0.01, end - time.monotonic()))
            if item.get("type") == kind:
                return item

    def close(self) -> None:
        self.server.shutdown()


class Agent:
    """tests/service/agent.py in a subprocess, fed one command per span."""

    def __init__(self, protocol: str, endpoint: str, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [PY, str(HERE / "agent.py"), "--protocol", protocol, "--endpoint", endpoint, *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def send(self, command: Any) -> None:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line.startswith("ok"), line

    def call(self, tool: str = "read_file", path: str = "a.txt", result: str = "same") -> None:
        self.send({"tool": tool, "args": {"path": path}, "result": result})

    def close(self) -> None:
        assert self.proc.stdin
        try:
            self.proc.stdin.write('"end"\n')
            self.proc.stdin.flush()
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except (BrokenPipeError, subprocess.TimeoutExpired):
            self.proc.kill()


def wait_for(predicate: Any, timeout: float = 15.0, interval: float = 0.05) -> Any:
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError("condition not met in time")
        time.sleep(interval)


@pytest.fixture(name="webhook")
def fixture_webhook():
    hook = Webhook()
    yield hook
    hook.close()


@pytest.fixture(name="services")
def fixture_services():
    started: list[ServiceProcess] = []

    def make(*args: str, env: dict[str, str] | None = None) -> ServiceProcess:
        svc = ServiceProcess(*args, env=env)
        started.append(svc)
        return svc

    yield make
    for svc in started:
        if svc.proc is not None and svc.proc.poll() is None:
            svc.proc.kill()
            svc.proc.wait()


@pytest.fixture(name="otelcol", scope="session")
def fixture_otelcol():
    """The real OpenTelemetry Collector binary (built once, cached outside the work tree);
    the test is skipped, saying why, where it can be neither found nor built."""
    from tests.service.collector import collector_binary

    return collector_binary()
