"""Observe-only background mode under a burst: do spans get dropped, do loops get missed?

``install(background=True)`` (the default) on a provider of its own, no enforcement point
(nobody calls ``check()``, so only the worker drains), ``--threads`` agent threads together
emitting ``--spans`` spans: per session an agent span, then steps of one model turn and one
tool call; every fourth session loops (the same call each step), the others never repeat.
Prints spans dropped, the queue's peak, looping sessions that got no signal, wall time.

    python benchmarks/background.py [--threads 16] [--spans 112000] [--max-queue N]
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time

from opentelemetry.sdk.trace import TracerProvider
from prometheus_client import CollectorRegistry

import otel_cycleguard
from otel_cycleguard import CycleGuardSpanProcessor, load_config
from otel_cycleguard.guard import Observer
from otel_cycleguard.metrics import CycleGuardMetrics

STEPS = 20  # per session: 20 model turns + 20 tool calls + the agent span = 41 spans


class Signalled(Observer):
    def __init__(self) -> None:
        self.sessions: set[str] = set()

    def signals(self, entry, signals, span_ref) -> None:  # type: ignore[no-untyped-def]
        for s in signals:
            self.sessions.add(s.session)


def agent_thread(tracer, index: int, spans: int) -> list[str]:
    looping = []
    session_no = 0
    made = 0
    while made < spans:
        session = f"t{index}-s{session_no}"
        loops = session_no % 4 == 0
        if loops:
            looping.append(session)
        with tracer.start_as_current_span(
            "invoke_agent worker",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "worker",
                "gen_ai.conversation.id": session,
            },
        ):
            for step in range(STEPS):
                with tracer.start_as_current_span(
                    "chat model",
                    attributes={
                        "gen_ai.operation.name": "chat",
                        "gen_ai.output.messages": json.dumps(
                            [{"role": "assistant", "parts": [{"type": "text", "content": "go"}]}]
                        ),
                    },
                ):
                    pass
                key = 0 if loops else step
                with tracer.start_as_current_span(
                    "execute_tool read_file",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "read_file",
                        "gen_ai.tool.call.arguments": json.dumps({"path": f"src/f{key}.py"}),
                        "gen_ai.tool.call.result": f"contents of file {key} " + "x" * 150,
                    },
                ):
                    pass
        made += 2 * STEPS + 1
        session_no += 1
    return looping


def run(threads: int, spans: int, max_queue: int | None) -> dict[str, float]:
    provider = TracerProvider()
    signalled = Signalled()
    metrics = CycleGuardMetrics(CollectorRegistry())
    config = load_config(environ={})
    if max_queue is None:
        processor = otel_cycleguard.install(
            config,
            tracer_provider=provider,
            observers=[signalled],
            metrics=metrics,
            background=True,
        )
    else:  # the same wiring, with another queue size
        processor = CycleGuardSpanProcessor(
            config=config, observers=[signalled], background=True, max_queue=max_queue
        )
        processor.metrics = metrics
        provider.add_span_processor(processor)
    assert processor is not None
    tracer = provider.get_tracer("burst")
    peak = 0
    done = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, len(processor._queue))
            time.sleep(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    looping: list[str] = []
    lock = threading.Lock()

    def body(i: int) -> None:
        mine = agent_thread(tracer, i, spans // threads)
        with lock:
            looping.extend(mine)

    start = time.perf_counter()
    workers = [threading.Thread(target=body, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    produced = time.perf_counter() - start
    deadline = time.monotonic() + 120
    while processor._queue and time.monotonic() < deadline:  # let the worker catch up
        time.sleep(0.05)
    total = time.perf_counter() - start
    done.set()
    missed = [s for s in looping if s not in signalled.sessions]
    result = {
        "dropped": processor.dropped_spans,
        "peak_queue": peak,
        "looping_sessions": len(looping),
        "looping_without_signal": len(missed),
        "produce_s": round(produced, 1),
        "total_s": round(total, 1),
    }
    processor.shutdown()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--spans", type=int, default=112_000)
    parser.add_argument("--max-queue", type=int, default=None, help="default: install()'s")
    args = parser.parse_args()
    print(json.dumps(run(args.threads, args.spans, args.max_queue)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
