"""Offline replay puts every tool call in the session, and profile, the live processor used.

The same trace shapes run on the real SDK with the processor attached; the exported spans
(OTLP JSON, through the real encoder) are then replayed. For each shape the sessions, their
tool calls and whether each is a sub-agent must be the same, or a post-incident analysis would
answer "would our configuration have stopped it?" for a different run than the one that ran.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_cycleguard import CycleGuard, CycleGuardSpanProcessor
from otel_cycleguard.analyze import Replayer
from otel_cycleguard.analyze.formats import document_spans
from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.guard import Observer

GENAI_AGENT = "gen_ai.operation.name"


class Sessions(Observer):
    """Which session (and sub-agent flag) each tool call reached, live."""

    def __init__(self) -> None:
        self.calls: dict[str, list[str]] = {}
        self.subagent: dict[str, bool] = {}

    def tool_call(self, entry, call):
        self.calls.setdefault(entry.key, []).append(call.tool)
        self.subagent[entry.key] = entry.subagent


def agent(tracer, name: str, **extra):
    attrs = {GENAI_AGENT: "invoke_agent", "gen_ai.agent.name": name, **extra}
    return tracer.start_as_current_span(f"invoke_agent {name}", attributes=attrs)


def openinference_agent(tracer, name: str):
    return tracer.start_as_current_span(name, attributes={"openinference.span.kind": "AGENT"})


def tool(tracer, name: str, **extra) -> None:
    attrs = {GENAI_AGENT: "execute_tool", "gen_ai.tool.name": name, **extra}
    tracer.start_span(f"execute_tool {name}", attributes=attrs).end()


def tool_around(tracer, name: str):
    attrs = {GENAI_AGENT: "execute_tool", "gen_ai.tool.name": name}
    return tracer.start_as_current_span(f"execute_tool {name}", attributes=attrs)


def wrapper_then_agent(t):
    with openinference_agent(t, "Agent workflow"), agent(t, "coder"):
        tool(t, "read")
        tool(t, "grep")


def agent_under_delegating_tool(t):
    with agent(t, "lead"):
        tool(t, "plan")
        with tool_around(t, "delegate_task"), agent(t, "worker"):
            tool(t, "grep")
            tool(t, "read")
        tool(t, "write")


def agent_under_an_ordinary_tool(t):
    with agent(t, "lead"):
        with tool_around(t, "ask_researcher"), agent(t, "researcher"):
            tool(t, "web_search")
        tool(t, "write")


def agent_under_a_plain_span_of_an_agent(t):
    with agent(t, "lead"):
        with t.start_as_current_span("step 1"), agent(t, "inner"):
            tool(t, "grep")
        tool(t, "read")


def conversation_ids_repeated_by_the_sub_agent(t):
    with agent(t, "lead", **{"gen_ai.conversation.id": "conv-7"}):
        tool(t, "plan", **{"gen_ai.conversation.id": "conv-7"})
        with tool_around(t, "delegate_task"), agent(t, "worker"):
            tool(t, "grep", **{"gen_ai.conversation.id": "conv-7"})


def tools_without_an_agent(t):
    with t.start_as_current_span("request"):
        tool(t, "grep")
        tool(t, "grep")


SHAPES: list[Callable] = [
    wrapper_then_agent,
    agent_under_delegating_tool,
    agent_under_an_ordinary_tool,
    agent_under_a_plain_span_of_an_agent,
    conversation_ids_repeated_by_the_sub_agent,
    tools_without_an_agent,
]


def live_and_exported(shape: Callable) -> tuple[Sessions, list]:
    heard = Sessions()
    guard = CycleGuard(CycleGuardConfig(), observers=[heard])
    provider = TracerProvider()
    provider.add_span_processor(CycleGuardSpanProcessor(guard))
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    shape(provider.get_tracer("shape"))
    provider.shutdown()
    document = MessageToDict(encode_spans(exporter.get_finished_spans()))
    spans = document_spans(document, lambda _problem: None)
    assert spans is not None
    return heard, list(spans.spans)


@pytest.mark.parametrize("shape", SHAPES, ids=[s.__name__ for s in SHAPES])
def test_replay_finds_the_sessions_the_live_processor_found(shape):
    heard, spans = live_and_exported(shape)
    replayer = Replayer(CycleGuardConfig(), keep_steps=True)
    for span in spans:
        replayer.add(span)
    reports = replayer.finish()
    offline = {r.session: [s.tool for s in r.steps if s.tool is not None] for r in reports}
    offline_subagent = {r.session: r.subagent for r in reports}
    assert offline == heard.calls
    assert offline_subagent == heard.subagent
