"""The replay's ordering and scoping of one buffered trace (``pipeline.order_trace``, in the
core): parents first whatever the input order, by start time, every span once."""

from __future__ import annotations

from otel_cycleguard.pipeline import order_trace
from otel_cycleguard.spans import SpanData

TRACE = "a" * 32
AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "coder"}
TOOL = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "grep"}
CHAT = {"gen_ai.operation.name": "chat"}


def span(
    span_id: str, parent: str | None, attrs: dict, start: int = 0, name: str = "s"
) -> SpanData:
    return SpanData(
        TRACE,
        span_id.ljust(16, "0"),
        name,
        parent and parent.ljust(16, "0"),
        start,
        start + 1,
        attrs,
    )


def order(*spans: SpanData) -> list[tuple[str, str, str, bool]]:
    return [
        (role, item.span_id.rstrip("0"), scope.session, scope.ends_session)
        for role, item, scope in order_trace(list(spans), TRACE, frozenset())
    ]


def test_a_child_listed_before_its_parent_still_inherits_the_parents_session():
    root = span("1", None, {**AGENT, "gen_ai.conversation.id": "conv-9"}, start=1)
    tool = span("2", "1", TOOL, start=2)
    assert order(tool, root) == [("tool", "2", "conv-9", False)]


def test_a_root_agent_without_a_session_id_is_keyed_by_its_trace():
    root = span("1", None, AGENT, start=1)
    chat = span("2", "1", CHAT, start=2)
    assert order(root, chat) == [("model", "2", TRACE, False)]


def test_tool_and_model_spans_come_by_start_then_input_order():
    spans = [
        span("3", None, TOOL, start=5),
        span("4", None, CHAT, start=2),
        span("5", None, TOOL, start=5),
    ]
    assert [s for _, s, _, _ in order(*spans)] == ["4", "3", "5"]


def test_start_times_past_64_bits_are_ordered_as_integers():
    spans = [span("3", None, TOOL, start=2**100), span("4", None, TOOL, start=2**64 + 1)]
    assert [s for _, s, _, _ in order(*spans)] == ["4", "3"]


def test_a_parent_link_cycle_ends_the_walk_and_each_span_comes_once():
    first = span("1", "2", {**TOOL, "session.id": "s"}, start=1)
    second = span("2", "1", CHAT, start=2)
    assert order(first, second) == [("tool", "1", "s", False), ("model", "2", "s", False)]


def test_a_parent_outside_the_trace_leaves_the_span_a_root():
    assert order(span("1", "ff", TOOL)) == [("tool", "1", TRACE, False)]


def test_spans_sharing_an_id_share_its_resolution():
    tool = span("1", None, TOOL, start=1)
    chat_same_id = span("1", None, CHAT, start=2)
    assert [role for role, *_ in order(tool, chat_same_id)] == ["tool", "tool"]


def test_a_cycle_walk_stops_one_step_past_the_distinct_ids_however_many_spans_share_them():
    """The walk up a parent-link cycle stops after (distinct ids + 1) steps, and where it stops
    decides which span of the cycle is resolved first: here the agent, so its tool inherits
    the agent's name. A second span with the tool's id must not lengthen the walk."""
    agent = span(
        "1", "2", {"gen_ai.operation.name": "invoke_agent"}, start=1, name="invoke_agent foo"
    )
    tool = span("2", "1", {**TOOL, "session.id": "c"}, start=2)
    again = span("2", "1", {**TOOL, "session.id": "c"}, start=3)
    scopes = order_trace([agent, tool, again], TRACE, frozenset())
    assert [(role, scope.session, scope.agent) for role, _, scope in scopes] == [
        ("tool", "c", "foo"),
        ("tool", "c", "foo"),
    ]
