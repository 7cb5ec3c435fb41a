"""The same spans through the live processor, the offline replay and the service ingestor.

All three hand ``(span, scope)`` pairs to one pipeline (``otel_cycleguard/pipeline.py``), so for
the same run they must find the same sessions, the same records (tool spans, calls derived
from model spans, model turns) and the same signals. The run is made on the real SDK with the
processor attached; its exported spans, through the real OTLP encoder, are then replayed and
ingested. Compared up to each session's first TERM: from there on each path escalates as its
job demands (the replay simulates the human, the live guard here has no escalation).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_cycleguard import CycleGuard, CycleGuardSpanProcessor
from otel_cycleguard.analyze import Replayer
from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.guard import Observer

pytest.importorskip("otel_cycleguard.service.convert")

from otel_cycleguard.service.convert import from_request
from otel_cycleguard.service.ingest import Ingestor
from otel_cycleguard.service.sessions import SessionResolver

OP = "gen_ai.operation.name"


class Seen(Observer):
    """Per session: each record (kind, tool) and each signal (dimension, level, step)."""

    def __init__(self) -> None:
        self.records: dict[str, list[tuple[str, str | None]]] = {}
        self.signal_list: dict[str, list[tuple[str, str, int]]] = {}
        self.subagent: dict[str, bool] = {}
        self._stopped: set[str] = set()

    def tool_call(self, entry, call):
        if entry.key not in self._stopped:
            self.records.setdefault(entry.key, []).append(("tool", call.tool))
        self.subagent[entry.key] = entry.subagent

    def model_turn(self, entry, turn):
        if entry.key not in self._stopped:
            self.records.setdefault(entry.key, []).append(("model", None))

    def signals(self, entry, signals, span_ref):
        if entry.key in self._stopped:
            return
        for s in signals:
            self.signal_list.setdefault(entry.key, []).append(
                (s.dimension.value, s.level.value, s.step)
            )
            if s.level.value == "term":
                self._stopped.add(entry.key)

    def summary(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "signals": self.signal_list,
            "subagent": self.subagent,
        }


def _tool(tracer, name: str, arguments: dict[str, Any], result: str, **extra: Any) -> None:
    attrs = {
        OP: "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.arguments": json.dumps(arguments),
        "gen_ai.tool.call.result": result,
        **extra,
    }
    tracer.start_span(f"execute_tool {name}", attributes=attrs).end()


def _agent(tracer, name: str, **extra: Any):
    attrs = {OP: "invoke_agent", "gen_ai.agent.name": name, **extra}
    return tracer.start_as_current_span(f"invoke_agent {name}", attributes=attrs)


def _chat(tracer, inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]) -> None:
    attrs = {
        OP: "chat",
        "gen_ai.request.model": "scripted",
        "gen_ai.input.messages": json.dumps(inputs),
        "gen_ai.output.messages": json.dumps(outputs),
    }
    tracer.start_span("chat scripted", attributes=attrs).end()


def _ask(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    part = {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}
    return {"role": "assistant", "parts": [part]}


def _answer(call_id: str, result: str) -> dict[str, Any]:
    part = {"type": "tool_call_response", "id": call_id, "response": result}
    return {"role": "tool", "parts": [part]}


# The service sees a delegated child agent's spans before the tool span that delegated to it,
# so it gives the child its own session when its spans name one (service/sessions.py).
WORKER = {"gen_ai.conversation.id": "conv-worker"}
USER = {"role": "user", "parts": [{"type": "text", "content": "go"}]}


def run_agents(tracer) -> None:
    """Three runs: a repeated tool span, a sub-agent, and calls only a model span tells of."""
    with _agent(tracer, "looper", **{"gen_ai.conversation.id": "conv-loop"}):
        for _ in range(12):
            _tool(tracer, "search", {"q": "same"}, "no results")
    with _agent(tracer, "lead"):
        _tool(tracer, "plan", {"goal": "x"}, "ok")
        attrs = {OP: "execute_tool", "gen_ai.tool.name": "delegate_task"}
        with (
            tracer.start_as_current_span("execute_tool delegate_task", attributes=attrs),
            _agent(tracer, "worker", **WORKER),
        ):
            for i in range(4):
                _tool(tracer, "read", {"path": f"f{i}"}, f"content {i}", **WORKER)
        _tool(tracer, "write", {"path": "out"}, "written")
    with _agent(tracer, "plain-client", **{"gen_ai.conversation.id": "conv-derived"}):
        history: list[dict[str, Any]] = [USER]
        for turn in range(10):
            asked = _ask(f"c{turn}", "fetch", {"url": "https://example.com"})
            _chat(tracer, history, [asked])
            history = [*history, asked, _answer(f"c{turn}", "same page")]
        _chat(tracer, history, [{"role": "assistant", "parts": []}])


@pytest.fixture(name="config")
def fixture_config() -> CycleGuardConfig:
    return CycleGuardConfig(delegating_tools=["delegate_task"])


def test_processor_replay_and_service_find_the_same_sessions_records_and_signals(config):
    live = Seen()
    guard = CycleGuard(config, observers=[live])
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(CycleGuardSpanProcessor(guard))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    run_agents(provider.get_tracer("agent"))
    provider.shutdown()
    spans = from_request(encode_spans(exporter.get_finished_spans())).spans
    assert len(spans) == len(exporter.get_finished_spans())

    offline = Seen()
    replayer = Replayer(config)
    replayer.guard.observers.append(offline)
    replayer.add_all(spans)
    replayer.finish()

    service = Seen()
    service_guard = CycleGuard(config, observers=[service])
    ingestor = Ingestor(service_guard, SessionResolver(config.delegating_tools))
    ingestor.process(spans)  # one request, as one OTLP export would bring them

    expected = live.summary()
    trace_keyed = set(expected["records"]) - {"conv-loop", "conv-derived", "conv-worker"}
    assert len(trace_keyed) == 1, expected["records"]  # the lead, keyed by its trace id
    assert expected["subagent"]["conv-worker"] is True
    assert ("tool", "fetch") in expected["records"]["conv-derived"]  # derived from model spans
    assert expected["signals"]["conv-loop"], "the repeated search must signal"
    assert expected["signals"]["conv-derived"], "the derived repeated fetch must signal"
    assert offline.summary() == expected
    assert service.summary() == expected
