"""background=True: on_end only queues; enforcement points and force_flush see every call first."""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client import CollectorRegistry

import otel_cycleguard
from otel_cycleguard import CycleTerminated, load_config
from otel_cycleguard.escalate import DirectoryProgressStore
from otel_cycleguard.guard import Observer
from otel_cycleguard.metrics import CycleGuardMetrics

SESSION = "bg-session"


@pytest.fixture(name="stack")
def fixture_stack(tmp_path):
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    processor = otel_cycleguard.install(
        load_config(environ={}, escalation={"hitl_timeout_s": 0.2}),
        tracer_provider=provider,
        progress_store=DirectoryProgressStore(tmp_path),
        background=True,
    )
    assert processor is not None and processor.background
    yield provider, exporter, processor
    processor.shutdown()


def _grep(tracer) -> None:
    with tracer.start_as_current_span(
        "execute_tool grep",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "grep",
            "gen_ai.tool.call.arguments": json.dumps({"pattern": "x"}),
            "gen_ai.tool.call.result": "nothing",
        },
    ):
        pass


def _agent(tracer):
    return tracer.start_as_current_span(
        "invoke_agent bot",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": SESSION},
    )


def test_check_sees_the_corrective_message_at_the_same_step_as_synchronous_mode(stack) -> None:
    provider, _, _ = stack
    tracer = provider.get_tracer("t")
    told_at = []
    with _agent(tracer):
        for step in range(7):
            if otel_cycleguard.check(SESSION):
                told_at.append(step)
            _grep(tracer)
    assert told_at == [5]  # TERM on the 5th call (index 4), delivered before the 6th


def test_silent_human_terminates_through_the_queue(stack) -> None:
    provider, _, _ = stack
    tracer = provider.get_tracer("t")
    with pytest.raises(CycleTerminated) as stopped, _agent(tracer):
        for _ in range(30):
            otel_cycleguard.check(SESSION)
            _grep(tracer)
    assert stopped.value.reason == "cycle_detected"


def test_worker_detects_without_any_enforcement_point(stack) -> None:
    provider, exporter, processor = stack
    tracer = provider.get_tracer("t")
    with _agent(tracer):
        for _ in range(5):
            _grep(tracer)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and processor.guard.counters(SESSION).get("tool_calls") != 5:
        time.sleep(0.01)
    assert processor.guard.counters(SESSION)["tool_calls"] == 5
    provider.force_flush()
    names = [span.name for span in exporter.get_finished_spans()]
    assert names.count("cycleguard.signal") == 2


def test_a_full_queue_makes_agent_threads_wait_not_drop() -> None:
    """Eight threads against a 50-span queue: they wait for room; nothing is lost."""
    provider = TracerProvider()
    processor = otel_cycleguard.CycleGuardSpanProcessor(
        config=load_config(environ={}), background=True, max_queue=50
    )
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("t")

    def agent(i: int) -> None:
        with tracer.start_as_current_span(
            "invoke_agent bot",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": f"s{i}"},
        ):
            for _ in range(300):
                _grep(tracer)

    threads = [threading.Thread(target=agent, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    processor.force_flush()
    assert processor.dropped_spans == 0
    assert [processor.guard.counters(f"s{i}")["tool_calls"] for i in range(8)] == [300] * 8
    processor.shutdown()


def test_drops_are_counted_in_a_metric_and_logged_once(caplog) -> None:
    """A stuck worker (an observer blocking detection): after max_wait_s without progress the
    span is dropped, counted in cycleguard_spans_dropped_total and logged, once per minute."""
    stuck = threading.Event()
    release = threading.Event()

    class Blocking(Observer):
        def signals(self, entry, signals, span_ref) -> None:
            stuck.set()
            release.wait(20)

    provider = TracerProvider()
    registry = CollectorRegistry()
    processor = otel_cycleguard.CycleGuardSpanProcessor(
        config=load_config(environ={}), observers=[Blocking()], background=True, max_queue=2
    )
    processor.metrics = CycleGuardMetrics(registry)
    processor.max_wait_s = 0.2
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("t")
    caplog.set_level(logging.WARNING, logger="otel_cycleguard")
    try:
        with _agent(tracer):
            for _ in range(3):  # the third call is a WARN: the worker blocks in the observer
                _grep(tracer)
            assert stuck.wait(10)
            for _ in range(6):  # 2 fill the queue, then 4 wait 0.2 s, find no progress, drop
                _grep(tracer)
    finally:
        release.set()
    dropped = registry.get_sample_value("cycleguard_spans_dropped_total", {"reason": "queue_full"})
    assert processor.dropped_spans >= 3 and dropped == processor.dropped_spans
    lines = [r for r in caplog.records if "dropped a span (queue_full)" in r.getMessage()]
    assert len(lines) == 1
    processor.shutdown()


@pytest.mark.slow
def test_sixteen_agent_threads_112k_spans_default_queue_drops_nothing() -> None:
    """The issue's load (no enforcement point, 16 threads, ~112 000 spans): with the default
    wiring nothing is dropped and every looping session gets its signal."""
    sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
    try:
        import background  # benchmarks/background.py
    finally:
        sys.path.pop(0)
    result = background.run(16, 112_000, None)
    assert result["dropped"] == 0
    assert result["looping_without_signal"] == 0
