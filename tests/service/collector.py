"""A real OpenTelemetry Collector (built from collector/manifest.yaml) for the service tests.

* ``collector_binary()`` runs ``scripts/build-collector.sh`` (a no-op once the binary is
  cached outside the work tree) and skips, naming what is missing, where no Go toolchain can
  build it: never a silent pass.
* ``rewrite()`` points a shipped ``collector-config/`` file at this machine: every address is
  replaced by a free loopback one (an address it has no replacement for fails the test), and
  nothing else changes.
* ``CollectorProcess`` runs the binary on such a config, with its own telemetry (the
  ``otelcol_*`` metrics) on a free port so runs never clash on the default 8888.
* ``TraceSink`` is the "tracing backend" (Tempo in the configs): a real OTLP/gRPC
  ``TraceService`` that keeps what it receives.
"""

from __future__ import annotations

import copy
import functools
import queue
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = ROOT / "collector-config"
BUILD_SCRIPT = ROOT / "scripts" / "build-collector.sh"
MANIFEST = ROOT / "collector" / "manifest.yaml"
TOKEN = "collector-token"


def collector_version() -> str:
    """The Collector release the manifest pins (``dist.version``)."""
    return str(yaml.safe_load(MANIFEST.read_text())["dist"]["version"])


def collector_binary() -> Path:
    """The cached Collector binary, built first if needed; skips when it cannot be built."""
    proc = subprocess.run(["bash", str(BUILD_SCRIPT)], capture_output=True, text=True, timeout=1800)
    if proc.returncode == 3:
        pytest.skip(
            "no OpenTelemetry Collector: Go is not installed and no binary is cached "
            f"({proc.stderr.strip()}); install Go >= 1.25 and run scripts/build-collector.sh"
        )
    if proc.returncode != 0:
        pytest.fail(f"scripts/build-collector.sh failed:\n{proc.stderr[-4000:]}")
    return Path(proc.stdout.strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def load_config(name: str) -> dict[str, Any]:
    return yaml.safe_load((CONFIG_DIR / name).read_text())


def rewrite(config: dict[str, Any], addresses: dict[str, str]) -> dict[str, Any]:
    """A copy of ``config`` with every ``host:port`` in ``addresses`` replaced (also inside
    URLs). Any value of an ``endpoint``/``hostnames``/``hostname`` key left pointing
    elsewhere than loopback fails: a new address in a shipped config must be mapped here."""
    out = copy.deepcopy(config)

    def walk(node: Any, key: str = "") -> Any:
        if isinstance(node, dict):
            return {k: walk(v, k) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, key) for v in node]
        if isinstance(node, str):
            for old, new in addresses.items():
                if node == old or node.endswith("//" + old):
                    node = node.replace(old, new)
            if key in ("endpoint", "hostnames", "hostname"):
                host = node.split("//")[-1].rsplit(":", 1)[0]
                assert host in ("127.0.0.1", "localhost"), f"unmapped address {node!r}"
        return node

    return walk(out)


class TraceSink:
    """A minimal OTLP/gRPC trace backend: counts spans and keeps their names."""

    def __init__(self) -> None:
        import grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

        sink = self
        self.spans = 0
        self.names: list[str] = []
        self._lock = threading.Lock()

        class Service(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request: Any, context: Any) -> Any:
                with sink._lock:
                    for rs in request.resource_spans:
                        for ss in rs.scope_spans:
                            sink.spans += len(ss.spans)
                            sink.names.extend(s.name for s in ss.spans)
                return trace_service_pb2.ExportTraceServiceResponse()

        self.server = grpc.server(ThreadPoolExecutor(max_workers=4))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Service(), self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def close(self) -> None:
        self.server.stop(0)


class CollectorProcess:
    """The Collector binary on one (rewritten) config; ready once it says so."""

    READY = "Everything is ready"

    def __init__(self, binary: Path, config: dict[str, Any], workdir: Path) -> None:
        self.binary = binary
        self.config = copy.deepcopy(config)
        self.workdir = workdir
        self.telemetry_port = free_port()
        self.config["service"]["telemetry"] = {
            "metrics": {
                "level": "detailed",
                "readers": [
                    {
                        "pull": {
                            "exporter": {
                                "prometheus": {"host": "127.0.0.1", "port": self.telemetry_port}
                            }
                        }
                    }
                ],
            }
        }
        self.proc: subprocess.Popen[str] | None = None
        self.log: list[str] = []

    def start(self, timeout: float = 30.0) -> CollectorProcess:
        path = self.workdir / f"otelcol-{self.telemetry_port}.yaml"
        path.write_text(yaml.safe_dump(self.config, sort_keys=False))
        self.proc = subprocess.Popen(
            [str(self.binary), "--config", str(path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={"CYCLEGUARD_SERVICE_TOKEN": TOKEN, "PATH": "/usr/bin:/bin"},
        )
        lines: queue.Queue[str] = queue.Queue()

        def drain() -> None:
            assert self.proc and self.proc.stderr
            for line in self.proc.stderr:
                self.log.append(line)
                lines.put(line)

        threading.Thread(target=drain, daemon=True).start()
        end = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                time.sleep(0.2)
                raise AssertionError("Collector exited:\n" + "".join(self.log[-40:]))
            try:
                line = lines.get(timeout=max(0.01, min(0.5, end - time.monotonic())))
            except queue.Empty:
                if time.monotonic() > end:
                    raise AssertionError(
                        "Collector not ready:\n" + "".join(self.log[-40:])
                    ) from None
                continue
            if self.READY in line:
                return self

    def metrics(self) -> dict[str, float]:
        """The Collector's own counters, summed over labels: ``{name: value}``."""
        return scrape_sum(f"http://127.0.0.1:{self.telemetry_port}/metrics")

    def metric(self, name: str, **labels: str) -> float:
        return scrape_sum(f"http://127.0.0.1:{self.telemetry_port}/metrics", name, **labels)

    def stop(self) -> int:
        """SIGTERM: the Collector drains its pipelines (batch flush, queues) and exits."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def scrape_sum(url: str, name: str | None = None, **labels: str) -> Any:
    """Prometheus text at ``url``: one sample family summed over labels, or all of them."""
    with urllib.request.urlopen(url, timeout=10) as resp:
        text = resp.read().decode()
    totals: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if all(sample.labels.get(k) == v for k, v in labels.items()):
                totals[sample.name] = totals.get(sample.name, 0.0) + sample.value
    return totals if name is None else totals.get(name, 0.0)


# -- agents and what the instances saw ----------------------------------------------------

FLEET_AGENT = Path(__file__).parent / "fleet_agent.py"
Signal = tuple[str, str, Any, Any, int]  # dimension, level, step, model turn, streak


class AgentFleet:
    """``processes`` fleet agents sharing ``conversations`` round-robin, each its own process.
    With ``step=True`` each waits before every turn after the first until ``next_turn()``."""

    def __init__(
        self,
        endpoint: str,
        conversations: list[str],
        processes: int = 3,
        protocol: str = "grpc",
        step: bool = False,
    ) -> None:
        import sys

        self.procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    str(FLEET_AGENT),
                    "--protocol",
                    protocol,
                    "--endpoint",
                    endpoint,
                    "--conversations",
                    ",".join(conversations[i::processes]),
                    *(["--step"] if step else []),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(processes)
            if conversations[i::processes]
        ]

    def wait_turn_sent(self) -> None:
        """Until every agent exported its current turn and waits before the next one."""
        for proc in self.procs:
            assert proc.stdout
            line = proc.stdout.readline()
            assert line.startswith("ready"), line

    def next_turn(self) -> None:
        for proc in self.procs:
            assert proc.stdin
            proc.stdin.write("\n")
            proc.stdin.flush()

    def wait(self) -> int:
        """Until every agent is done; the spans they exported."""
        total = 0
        for proc in self.procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0 and out.strip().startswith("done"), err[-2000:]
            total += int(out.split()[-1])
        return total

    def kill(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def run_agents(
    endpoint: str, conversations: list[str], processes: int = 3, protocol: str = "grpc"
) -> int:
    """Fleet agents run to the end; the spans they exported."""
    fleet = AgentFleet(endpoint, conversations, processes, protocol)
    try:
        return fleet.wait()
    finally:
        fleet.kill()


def signals_by_session(svc: Any, token: str | None = TOKEN) -> dict[str, list[Signal]]:
    """Every signal an instance raised, per session, in order."""
    out: dict[str, list[Signal]] = {}
    for s in svc.get_json("/v1/signals", token=token)["signals"]:
        out.setdefault(s["session"], []).append(
            (s["dimension"], s["level"], s["step"], s["model_turn_index"], s["streak"])
        )
    return out


def tool_calls_by_agent(svc: Any) -> dict[str, float]:
    """``cycleguard_tool_calls_total`` per agent (the fleet agents name it after the
    conversation), so it shows which instance a conversation's tool spans reached."""
    with urllib.request.urlopen(svc.http + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "cycleguard_tool_calls_total":
                agent = sample.labels["agent"]
                out[agent] = out.get(agent, 0.0) + sample.value
    return out


def wait_processed(instances: list[Any], spans: int, timeout: float = 30.0) -> None:
    """Until the instances together ran ``spans`` spans through detection (and no more
    arrive): the Collector's batch timeout and retries are over."""
    from tests.service.conftest import wait_for

    def done() -> bool:
        return sum(i.metric("cycleguard_service_spans_processed") for i in instances) >= spans

    wait_for(done, timeout=timeout, interval=0.1)


CONVERSATIONS = [f"c{i:02d}" for i in range(30)]


def start_instance(services: Any, workdir: Path, *args: str) -> Any:
    """One ``cycleguard serve`` with the Collector's token; escalation files in ``workdir``."""
    return services(
        "--token",
        TOKEN,
        *args,
        env={"CYCLEGUARD_ESCALATION__PROGRESS_DIR": str(workdir / "progress")},
    ).start()


@functools.cache
def reference_signals() -> dict[str, list[Signal]]:
    """What ONE instance raises when the fleet agents export straight to it (no Collector):
    the steps every routed run must reproduce. Computed once per test session."""
    import tempfile

    from tests.service.conftest import ServiceProcess

    with tempfile.TemporaryDirectory() as tmp:
        svc = ServiceProcess(
            "--state-file", "", env={"CYCLEGUARD_ESCALATION__PROGRESS_DIR": tmp}
        ).start()
        try:
            spans = run_agents(f"127.0.0.1:{svc.grpc_port}", CONVERSATIONS)
            wait_processed([svc], spans)
            return signals_by_session(svc, token=None)
        finally:
            svc.stop()
