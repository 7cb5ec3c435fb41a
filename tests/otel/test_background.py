"""background=True: on_end only queues; enforcement points and force_flush see every call first."""

from __future__ import annotations

import json
import time

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_cycleguard
from otel_cycleguard import CycleTerminated, load_config
from otel_cycleguard.escalate import DirectoryProgressStore

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


def test_queue_overflow_is_counted_not_raised() -> None:
    provider = TracerProvider()
    processor = otel_cycleguard.CycleGuardSpanProcessor(
        config=load_config(environ={}), background=True, max_queue=1, flush_interval_s=60
    )
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("t")
    with _agent(tracer):
        for _ in range(4):
            _grep(tracer)
    assert processor.dropped_spans == 4  # three more tool spans and the agent span
    processor.shutdown()
