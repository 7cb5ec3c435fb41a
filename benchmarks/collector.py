"""Throughput from agents through the real OpenTelemetry Collector to 1, 2 and 3
``cycleguard serve`` instances, routed by conversation.

Run: ``python benchmarks/collector.py [--clients 2] [--seconds 8] [--instances 1,2,3]``
(about a minute; builds the Collector first if it is not cached: scripts/build-collector.sh).

* Collector: the binary from collector/manifest.yaml running
  ``collector-config/fleet-static-conversation.yaml`` as shipped (batch 512 / 1 s, the
  load-balancing exporter routing on ``gen_ai.conversation.id``, gzip, retry and sending
  queue), only addresses rewritten, the static list cut to the first N instances. The
  config's "tempo" exporter goes to a sink here that counts bytes without decoding them.
* Workload: agent traces built with the real OpenTelemetry SDK, every span carrying its
  conversation id (128 conversations per client, one trace per turn): tool calls with
  ~200 B arguments/results, half of them repeats (signals fire), a model turn every five
  calls and three HTTP spans per tool call (the ``agent-trace`` mix of benchmarks/service.py),
  pre-encoded into OTLP protobuf requests of 512 spans.
* Clients: ``--clients`` processes sending those requests over OTLP/gRPC to the Collector as
  fast as it accepts them (a refusal is honoured with a short sleep).
* Figure: spans that went through detection per second, summed over the instances
  (``cycleguard_service_spans_processed``), over the window after a 3 s warm-up: what the
  fleet sustains, not what the Collector buffered. With it: the spans/s the Collector
  accepted, and the CPU each part used in the window (cores busy), so the figures can be
  turned into a sizing for other machines. ``direct`` = the same clients straight to one
  instance's OTLP/gRPC port, without the Collector.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.service.collector import (  # noqa: E402  (the repository's Collector helpers)
    CollectorProcess,
    collector_version,
    free_port,
    load_config,
    rewrite,
)

BATCH = 512
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
CONFIG = "fleet-static-conversation.yaml"


def build_requests(seed: int, conversations: int = 128, turns: int = 2) -> list[tuple[bytes, int]]:
    """Pre-encoded OTLP requests (body, spans) of agent traces, every span with its
    conversation id (what a baggage span processor does)."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

    class Collect(SpanProcessor):
        def __init__(self) -> None:
            self.spans: list[Any] = []

        def on_end(self, span: Any) -> None:
            self.spans.append(span)

    rng = random.Random(seed)
    collect = Collect()
    provider = TracerProvider()
    provider.add_span_processor(collect)
    tracer = provider.get_tracer("bench")
    for _turn in range(turns):
        for c in range(conversations):
            conv = {"gen_ai.conversation.id": f"bench-{seed}-{c}"}
            root = tracer.start_span(
                "invoke_agent coder",
                attributes={
                    **conv,
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": f"coder-{c % 8}",
                },
            )
            ctx = trace.set_span_in_context(root)
            for i in range(10):
                n = 0 if rng.random() < 0.5 else rng.randrange(10_000)
                tool = rng.choice(("read_file", "grep", "edit", "exec"))
                tracer.start_span(
                    f"execute_tool {tool}",
                    context=ctx,
                    attributes={
                        **conv,
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": tool,
                        "gen_ai.tool.call.arguments": json.dumps(
                            {"path": f"src/m_{n % 37}/f_{n}.py", "pattern": "def h_" + "x" * 60}
                        ),
                        "gen_ai.tool.call.result": f"result {n} " + "y" * 150,
                    },
                ).end()
                for j in range(3):
                    tracer.start_span(
                        "GET /api/items",
                        context=ctx,
                        attributes={
                            **conv,
                            "http.request.method": "GET",
                            "url.full": f"https://api.example.com/items/{n}?page={j}",
                            "http.response.status_code": 200,
                        },
                    ).end()
                if i % 5 == 4:
                    message = [
                        {
                            "role": "assistant",
                            "parts": [{"type": "text", "content": f"Checking {n} again."}],
                        }
                    ]
                    tracer.start_span(
                        "chat gpt",
                        context=ctx,
                        attributes={
                            **conv,
                            "gen_ai.operation.name": "chat",
                            "gen_ai.output.messages": json.dumps(message),
                        },
                    ).end()
            root.end()
    spans = collect.spans
    return [
        (encode_spans(spans[i : i + BATCH]).SerializeToString(), len(spans[i : i + BATCH]))
        for i in range(0, len(spans), BATCH)
    ]


def client(address: str, seed: int, seconds: float, out: Any) -> None:
    import grpc

    requests = build_requests(seed)
    out.put(("ready", seed))
    channel = grpc.insecure_channel(address, options=[("grpc.max_send_message_length", 64 << 20)])
    export = channel.unary_unary(EXPORT, request_serializer=None, response_deserializer=None)
    end = time.monotonic() + seconds
    sent = refused = k = 0
    while time.monotonic() < end:
        body, n = requests[k % len(requests)]
        try:
            export(body, timeout=30)
            sent += n
            k += 1
        except grpc.RpcError as exc:
            if exc.code() not in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE):
                raise
            refused += 1
            time.sleep(0.2)
    channel.close()
    out.put(("done", sent, refused))


class RawSink:
    """The config's tracing backend: an OTLP/gRPC endpoint that only counts bytes."""

    def __init__(self) -> None:
        import grpc

        self.bytes = 0

        def export(body: bytes, context: Any) -> bytes:
            self.bytes += len(body)
            return b""  # an empty ExportTraceServiceResponse

        handler = grpc.method_handlers_generic_handler(
            "opentelemetry.proto.collector.trace.v1.TraceService",
            {
                "Export": grpc.unary_unary_rpc_method_handler(
                    export, request_deserializer=None, response_serializer=None
                )
            },
        )
        self.server = grpc.server(ThreadPoolExecutor(max_workers=4))
        self.server.add_generic_rpc_handlers((handler,))
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_instance(env: dict[str, str]) -> tuple[subprocess.Popen[str], int, int]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "otel_cycleguard.service",
            "--http-port",
            "0",
            "--grpc-port",
            "0",
            "--state-file",
            "",
            "--log-level",
            "ERROR",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    ports = {
        part.split("=")[0]: int(part.rsplit(":", 1)[1])
        for part in proc.stdout.readline().split()
        if part.startswith("otlp_")
    }
    return proc, ports["otlp_http"], ports["otlp_grpc"]


def processed(http_port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=10) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith("cycleguard_service_spans_processed "):
                return float(line.split()[1])
    raise RuntimeError("metric missing")


def run(binary: Path | None, n: int, clients: int, seconds: float, env: dict, tmp: Path) -> dict:
    """One measurement: ``n`` instances behind the Collector (``binary``), or direct."""
    instances = [start_instance(env) for _ in range(max(n, 1))]
    collector = sink = None
    try:
        if binary is not None:
            sink = RawSink()
            port = free_port()
            config = load_config(CONFIG)
            static = config["exporters"]["loadbalancing/cycleguard"]["resolver"]["static"]
            static["hostnames"] = static["hostnames"][:n]
            addresses = {
                "0.0.0.0:4317": f"127.0.0.1:{port}",
                "0.0.0.0:4318": f"127.0.0.1:{free_port()}",
                "tempo:4317": f"127.0.0.1:{sink.port}",
                **{
                    f"cycleguard-{i}:14317": f"127.0.0.1:{g}"
                    for i, (_, _, g) in enumerate(instances)
                },
            }
            collector = CollectorProcess(binary, rewrite(config, addresses), tmp).start()
            target = f"127.0.0.1:{port}"
        else:
            target = f"127.0.0.1:{instances[0][2]}"
        ctx = mp.get_context("fork")
        out = ctx.Queue()
        procs = [
            ctx.Process(target=client, args=(target, seed, seconds + 3.0, out))
            for seed in range(clients)
        ]
        for p in procs:
            p.start()
        for _ in procs:
            assert out.get(timeout=300)[0] == "ready"
        time.sleep(3.0)  # warm-up: connections open, queues filling, caches hot
        pids = [p.pid for p, _, _ in instances] + ([collector.proc.pid] if collector else [])
        t0, n0 = time.monotonic(), sum(processed(h) for _, h, _ in instances)
        c0 = [cpu_seconds(pid) for pid in pids]
        a0 = collector.metric("otelcol_receiver_accepted_spans_total") if collector else 0.0
        time.sleep(seconds - 0.5)
        t1, n1 = time.monotonic(), sum(processed(h) for _, h, _ in instances)
        c1 = [cpu_seconds(pid) for pid in pids]
        a1 = collector.metric("otelcol_receiver_accepted_spans_total") if collector else 0.0
        results = [out.get(timeout=120) for _ in procs]
        for p in procs:
            p.join()
    finally:
        if collector is not None:
            collector.kill()
        if sink is not None:
            sink.server.stop(0)
        for proc, _, _ in instances:
            proc.terminate()
            proc.wait(60)
    dt = t1 - t0
    busy = [(b - a) / dt for a, b in zip(c0, c1, strict=True)]
    return {
        "rate": (n1 - n0) / dt,
        "accepted": (a1 - a0) / dt,
        "instance_cores": busy[: max(n, 1)],
        "collector_cores": busy[-1] if collector else 0.0,
        "refused": sum(r[2] for r in results),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--instances", default="1,2,3")
    parser.add_argument("--no-direct", action="store_true", help="skip the direct reference")
    args = parser.parse_args()
    from tests.service.collector import BUILD_SCRIPT

    build = subprocess.run(["bash", str(BUILD_SCRIPT)], capture_output=True, text=True)
    if build.returncode != 0:
        print(build.stderr, file=sys.stderr)
        return 2
    binary = Path(build.stdout.split()[-1])
    tmp = Path(tempfile.mkdtemp(prefix="cg-collector-bench-"))
    env = {**os.environ, "CYCLEGUARD_ESCALATION__PROGRESS_DIR": str(tmp / "progress")}
    print(
        f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, Python "
        f"{sys.version.split()[0]}; Collector {collector_version()} ({CONFIG}); "
        f"{args.clients} client processes, OTLP/gRPC, {BATCH} spans/request"
    )
    runs: list[tuple[str, Path | None, int]] = []
    if not args.no_direct:
        runs.append(("direct, 1 instance", None, 1))
    runs += [(f"Collector -> {n}", binary, n) for n in map(int, args.instances.split(","))]
    for label, path, n in runs:
        r = run(path, n, args.clients, args.seconds, env, tmp)
        cores = " + ".join(f"{c:.2f}" for c in r["instance_cores"])
        print(
            f"[{label}] sustained {r['rate']:,.0f} spans/s through detection "
            f"({r['rate'] / n:,.0f} per instance) | Collector accepted {r['accepted']:,.0f} "
            f"spans/s | CPU cores busy: instances {cores}, Collector "
            f"{r['collector_cores']:.2f} | refused requests {r['refused']}",
            flush=True,
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
