"""Sustained OTLP/HTTP protobuf throughput of ``cycleguard serve``, and its ratio to the
in-process processor, measured in the same run.

Run: ``python benchmarks/service.py [--clients 4] [--seconds 8] [--protocol http|grpc]`` (about
30 s). ``--protocol grpc`` sends the same requests with a gRPC stub to the OTLP/gRPC port
(``RESOURCE_EXHAUSTED`` honoured as the exporters do); the targets are OTLP/HTTP's.

* Workload: looping GenAI agents built with the real OpenTelemetry SDK: per agent trace an
  ``invoke_agent`` span, ``execute_tool`` spans (~200 B arguments and results, a realistic mix
  of repeats, so signals fire and escalations run) and one ``chat`` span every 5 tool calls.
  Each client pre-encodes its own traces with the official OTLP protobuf encoder into
  requests of 512 spans (the ``BatchSpanProcessor`` default batch), gzip-free.
* Service: ``python -m otel_cycleguard.service`` in its own process (state file off, default
  queue), on loopback. Clients: ``--clients`` processes posting with keep-alive as fast as the
  service accepts; a 429 is honoured (sleep ``Retry-After``), as the OTLP exporters do.
* Figure: spans that went through detection per second (``cycleguard_service_spans_processed``)
  over the measuring window after a 2 s warm-up: sustained, not burst into the queue.
* Reference: ``CycleGuardSpanProcessor.on_end`` (guard + metrics + escalation, as
  ``install()`` wires it) over the same kind of SDK spans in this process.

Targets: >= 50,000 spans/s on tool-call spans only (issue 18), >= 20,000 spans/s on agent
traces (the earlier target). Prints PASS or MISS.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.request

BATCH = 512


def build_spans(seed: int, traces: int, tools_per_trace: int, noise: int = 0):
    from opentelemetry import trace
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

    class Collect(SpanProcessor):
        def __init__(self):
            self.spans = []

        def on_end(self, span):
            self.spans.append(span)

    rng = random.Random(seed)
    collect = Collect()
    provider = TracerProvider()
    provider.add_span_processor(collect)
    tracer = provider.get_tracer("bench")
    for t in range(traces):
        agent = tracer.start_span(
            "invoke_agent coder",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": f"coder-{t % 8}",
            },
        )
        ctx = trace.set_span_in_context(agent)
        for i in range(tools_per_trace):
            repeat = rng.random() < 0.5
            n = 0 if repeat else rng.randrange(10_000)
            tool = rng.choice(("read_file", "grep", "edit", "exec"))
            span = tracer.start_span(
                f"execute_tool {tool}",
                context=ctx,
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": tool,
                    "gen_ai.tool.call.arguments": json.dumps(
                        {
                            "path": f"src/module_{n % 37}/file_{n}.py",
                            "pattern": "def handle_" + "x" * 60,
                        }
                    ),
                    "gen_ai.tool.call.result": f"result {n} " + "y" * 150,
                },
            )
            span.end()
            for j in range(noise):  # the rest of an instrumented agent's trace: HTTP, DB spans
                other = tracer.start_span(
                    "GET /api/items",
                    context=ctx,
                    attributes={
                        "http.request.method": "GET",
                        "url.full": f"https://api.example.com/items/{n}?page={j}",
                        "http.response.status_code": 200,
                        "server.address": "api.example.com",
                        "network.protocol.version": "1.1",
                    },
                )
                other.end()
            if i % 5 == 4:
                chat = tracer.start_span(
                    "chat gpt",
                    context=ctx,
                    attributes={
                        "gen_ai.operation.name": "chat",
                        "gen_ai.output.messages": json.dumps(
                            [
                                {
                                    "role": "assistant",
                                    "parts": [
                                        {"type": "text", "content": f"Let me check file {n} again."}
                                    ],
                                }
                            ]
                        ),
                        "gen_ai.usage.input_tokens": 1200,
                        "gen_ai.usage.output_tokens": 40,
                    },
                )
                chat.end()
        agent.end()
    return collect.spans


def client(port: int, seed: int, seconds: float, out, noise: int, protocol: str = "http") -> None:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    spans = build_spans(seed, traces=60, tools_per_trace=160 // (1 + noise), noise=noise)
    requests = [encode_spans(spans[i : i + BATCH]) for i in range(0, len(spans), BATCH)]
    sizes = [len(spans[i : i + BATCH]) for i in range(0, len(spans), BATCH)]
    out.put(("ready", seed))
    if protocol == "grpc":
        grpc_client(port, requests, sizes, seconds, out)
        return
    bodies = [request.SerializeToString() for request in requests]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    end = time.monotonic() + seconds
    sent = throttled = 0
    k = 0
    while time.monotonic() < end:
        j = k % len(bodies)
        conn.request(
            "POST", "/v1/traces", body=bodies[j], headers={"Content-Type": "application/x-protobuf"}
        )
        resp = conn.getresponse()
        resp.read()
        if resp.status == 200:
            sent += sizes[j]
            k += 1
        elif resp.status in (429, 503):
            throttled += 1
            time.sleep(float(resp.getheader("Retry-After") or 1))
        else:
            raise SystemExit(f"unexpected HTTP {resp.status}")
    out.put(("done", sent, throttled))


def grpc_client(port: int, requests: list, sizes: list[int], seconds: float, out) -> None:
    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = trace_service_pb2_grpc.TraceServiceStub(channel)
    end = time.monotonic() + seconds
    sent = throttled = k = 0
    while time.monotonic() < end:
        j = k % len(requests)
        try:
            stub.Export(requests[j], timeout=30)
        except grpc.RpcError as exc:
            if exc.code() not in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE):
                raise SystemExit(f"unexpected gRPC status {exc.code()}") from exc
            throttled += 1
            time.sleep(1.0)
            continue
        sent += sizes[j]
        k += 1
    channel.close()
    out.put(("done", sent, throttled))


def processed(port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith("cycleguard_service_spans_processed "):
                return float(line.split()[1])
    raise RuntimeError("metric missing")


def in_process_rate(progress_dir: str, noise: int) -> float:
    from prometheus_client import CollectorRegistry

    from otel_cycleguard import CycleGuard, CycleGuardSpanProcessor, load_config
    from otel_cycleguard.escalate.engine import EscalationEngine
    from otel_cycleguard.escalate.progress import DirectoryProgressStore
    from otel_cycleguard.metrics import CycleGuardMetrics
    from otel_cycleguard.metrics_observer import MetricsObserver

    spans = build_spans(999, traces=60, tools_per_trace=160 // (1 + noise), noise=noise)
    best = 0.0
    for _ in range(3):
        config = load_config(environ={})
        guard = CycleGuard(config)
        metrics = CycleGuardMetrics(CollectorRegistry())
        guard.observers.append(MetricsObserver(metrics, guard))
        engine = EscalationEngine(
            guard, store=DirectoryProgressStore(progress_dir), metrics=metrics
        )
        guard.observers.append(engine)
        processor = CycleGuardSpanProcessor(guard)
        start = time.perf_counter()
        for span in spans:
            processor.on_end(span)
        best = max(best, len(spans) / (time.perf_counter() - start))
        engine.shutdown()
    return best


#: name: (plain spans per tool call, target spans/s)
MIXES = {
    "tool-only": (0, 50_000),  # worst case: every span is a tool call or a model turn
    "agent-trace": (3, 20_000),  # three other spans (HTTP/DB) per tool call, as agents emit
}


def _listening_port(line: str, receiver: str) -> int:
    """The port of ``receiver`` in the service's ``listening otlp_http=h:p otlp_grpc=h:p`` line."""
    return int(line.split(f"{receiver}=")[1].split()[0].rsplit(":", 1)[1])


def run_service(
    clients: int, seconds: float, noise: int, env: dict, protocol: str = "http"
) -> tuple[float, int, int]:
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "otel_cycleguard.service",
            "--http-port",
            "0",
            "--grpc-port",
            "0" if protocol == "grpc" else "off",
            "--state-file",
            "",
            "--log-level",
            "ERROR",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = server.stdout.readline()
        port = _listening_port(line, "otlp_http")
        target = _listening_port(line, "otlp_grpc") if protocol == "grpc" else port
        ctx = mp.get_context("fork")
        out = ctx.Queue()
        procs = [
            ctx.Process(target=client, args=(target, seed, seconds + 2.0, out, noise, protocol))
            for seed in range(clients)
        ]
        for p in procs:
            p.start()
        for _ in procs:
            assert out.get(timeout=120)[0] == "ready"
        time.sleep(2.0)  # warm-up: connections open, queue filling, caches hot
        t0, n0 = time.monotonic(), processed(port)
        time.sleep(seconds - 0.5)
        t1, n1 = time.monotonic(), processed(port)
        results = [out.get(timeout=60) for _ in procs]
        for p in procs:
            p.join()
    finally:
        server.terminate()
        server.wait(60)
    return (n1 - n0) / (t1 - t0), sum(r[1] for r in results), sum(r[2] for r in results)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--protocol", choices=("http", "grpc"), default="http")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="cg-bench-")
    env = {**os.environ, "CYCLEGUARD_ESCALATION__PROGRESS_DIR": os.path.join(tmp, "progress")}
    import logging

    logging.getLogger("otel_cycleguard").setLevel(logging.ERROR)
    print(
        f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}; "
        f"{args.clients} client processes, "
        f"{'OTLP/gRPC' if args.protocol == 'grpc' else 'OTLP/HTTP protobuf'}, {BATCH} spans/request"
    )
    for name, (noise, target) in MIXES.items():
        rate, sent, throttled = run_service(args.clients, args.seconds, noise, env, args.protocol)
        inproc = in_process_rate(os.path.join(tmp, f"inproc-{name}"), noise)
        verdict = "PASS" if rate >= target else "MISS"
        print(
            f"[{name}] service sustained {rate:,.0f} spans/s | in-process on_end "
            f"{inproc:,.0f} spans/s | ratio {rate / inproc:.2f} | accepted {sent:,}, "
            f"throttled requests {throttled} | target >= {target:,}: {verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
