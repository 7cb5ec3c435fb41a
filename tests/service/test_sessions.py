"""The service's session resolver reports the end of a run when its root agent span arrives."""

from __future__ import annotations

from otel_cycleguard.conventions import SpanRole
from otel_cycleguard.service.sessions import SessionResolver
from otel_cycleguard.spans import SpanData

TRACE = "0af7651916cd43dd8448eb211c80319c"


def _tool(span_id: str) -> SpanData:
    return SpanData(
        trace_id=TRACE,
        span_id=span_id,
        parent_span_id="a" * 16,
        name="execute_tool grep",
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "grep"},
    )


ROOT = SpanData(
    trace_id=TRACE,
    span_id="a" * 16,
    name="invoke_agent bot",
    attributes={
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "bot",
        "gen_ai.conversation.id": "conv-7",
    },
)


def test_root_agent_span_yields_the_end_of_its_session_after_the_tool_calls() -> None:
    resolved = list(SessionResolver().resolve([_tool("1" * 16), _tool("2" * 16), ROOT]))
    assert [r.role for r in resolved] == [SpanRole.TOOL, SpanRole.TOOL, SpanRole.AGENT]
    assert {r.session for r in resolved} == {"conv-7"}
    assert resolved[-1].agent == "bot"


def test_nested_agent_span_is_not_the_end_of_the_run() -> None:
    nested = SpanData(
        trace_id=TRACE,
        span_id="b" * 16,
        parent_span_id="a" * 16,
        name="invoke_agent helper",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"},
    )
    resolved = list(SessionResolver().resolve([nested, ROOT]))
    assert [(r.role, r.span.span_id) for r in resolved] == [(SpanRole.AGENT, "a" * 16)]
