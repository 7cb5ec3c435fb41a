"""Every span family ``on_end`` acts on still passes its fast filter; everything else is skipped.

``on_end`` rules spans out with four literal key tests and one name test before any
classification. These tests hold that filter to what ``conventions.classify`` recognises, in
both detection modes, with the marker set at start, at the end, or on a non-SDK span.
"""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.trace import SpanContext, TraceFlags

from otel_cycleguard import CycleGuard, CycleGuardSpanProcessor, load_config
from otel_cycleguard.guard import Observer
from otel_cycleguard.otel.processor import _MARKER_KEYS

OUTPUT = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "hi"}]}])

# (family, span name, attributes, what the guard must hear: "tool", "model" or None)
FAMILIES = [
    (
        "genai tool",
        "execute_tool grep",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "grep"},
        "tool",
    ),
    (
        "genai model",
        "chat gpt-4o",
        {"gen_ai.operation.name": "chat", "gen_ai.output.messages": OUTPUT},
        "model",
    ),
    (
        "openinference tool",
        "grep",
        {"openinference.span.kind": "TOOL", "tool.name": "grep", "input.value": "{}"},
        "tool",
    ),
    (
        "openinference model",
        "ChatOpenAI",
        {"openinference.span.kind": "LLM", "output.value": "hi"},
        "model",
    ),
    (
        "openinference handoff is not a tool",
        "handoff_to_billing",
        {"openinference.span.kind": "TOOL"},
        None,
    ),
    (
        "traceloop tool",
        "grep.tool",
        {"traceloop.span.kind": "tool", "traceloop.entity.name": "grep"},
        "tool",
    ),
    (
        "openllmetry model",
        "openai.chat",
        {"llm.request.type": "chat", "gen_ai.completion.0.content": "hi"},
        "model",
    ),
    (
        "pydantic-ai legacy tool",
        "running tool",
        {"gen_ai.tool.name": "grep", "tool_arguments": "{}", "tool_response": "x"},
        "tool",
    ),
    ("plain span", "process request", {"http.route": "/items", "retry": False}, None),
    ("span with no attributes", "work", {}, None),
]
IDS = [family for family, *_ in FAMILIES]


class Heard(Observer):
    """Records what reached the guard: tool calls, model turns and ended sessions."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def tool_call(self, entry, call):
        self.events.append(("tool", entry.key))

    def model_turn(self, entry, turn):
        self.events.append(("model", entry.key))

    def session_ended(self, entry):
        self.events.append(("ended", entry.key))


def _stack(
    background: bool, flush_interval_s: float = 0.05
) -> tuple[TracerProvider, CycleGuardSpanProcessor, Heard]:
    heard = Heard()
    guard = CycleGuard(load_config(environ={}), observers=[heard])
    processor = CycleGuardSpanProcessor(
        guard, background=background, flush_interval_s=flush_interval_s
    )
    provider = TracerProvider()
    provider.add_span_processor(processor)
    return provider, processor, heard


@pytest.fixture(name="mode", params=[False, True], ids=["inline", "background"])
def fixture_mode(request):
    return request.param


@pytest.mark.parametrize(("family", "name", "attrs", "expected"), FAMILIES, ids=IDS)
def test_each_family_is_heard_with_markers_set_at_start(mode, family, name, attrs, expected):
    """A span carrying its convention's marker from the start reaches the guard as before."""
    provider, processor, heard = _stack(mode)
    provider.get_tracer("t").start_span(name, attributes=attrs).end()
    processor.force_flush()
    assert [kind for kind, _ in heard.events] == ([expected] if expected else [])
    assert processor.open_spans() == 0
    processor.shutdown()


@pytest.mark.parametrize(("family", "name", "attrs", "expected"), FAMILIES, ids=IDS)
def test_each_family_is_heard_with_markers_set_only_at_the_end(mode, family, name, attrs, expected):
    """Markers several instrumentations set only just before ``end()`` are still read."""
    provider, processor, heard = _stack(mode)
    span = provider.get_tracer("t").start_span(name)
    span.set_attributes(attrs)
    span.end()
    processor.force_flush()
    assert [kind for kind, _ in heard.events] == ([expected] if expected else [])
    processor.shutdown()


@pytest.mark.parametrize(("family", "name", "attrs", "expected"), FAMILIES, ids=IDS)
def test_a_non_sdk_span_is_read_through_the_public_api(mode, family, name, attrs, expected):
    """A ReadableSpan built by hand (plain dict attributes, no SDK internals) takes the slow path."""
    _, processor, heard = _stack(mode)
    context = SpanContext(0xABC, 0xDEF, is_remote=False, trace_flags=TraceFlags(1))
    processor.on_end(ReadableSpan(name=name, context=context, attributes=dict(attrs)))
    processor.force_flush()
    assert [kind for kind, _ in heard.events] == ([expected] if expected else [])
    processor.shutdown()


@pytest.mark.parametrize(
    "agent_attrs",
    [
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"},
        {"openinference.span.kind": "AGENT"},
        {"traceloop.span.kind": "workflow", "traceloop.entity.name": "a"},
        {"traceloop.span.kind": "agent", "traceloop.entity.name": "a"},
    ],
    ids=["genai", "openinference", "traceloop workflow", "traceloop agent"],
)
def test_a_root_agent_span_ends_its_session(mode, agent_attrs):
    """The end of the agent span that opened a session ends that session, in every convention."""
    provider, processor, heard = _stack(mode)
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("agent", attributes=agent_attrs):
        tracer.start_span(
            "execute_tool grep",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "grep"},
        ).end()
        with tracer.start_as_current_span("process request", attributes={"k": 1}):
            assert processor.open_spans() == 2  # a plain descendant inherits the session
    processor.force_flush()
    kinds = [kind for kind, _ in heard.events]
    assert kinds == ["tool", "ended"]
    assert heard.events[0][1] == heard.events[1][1]
    assert processor.open_spans() == 0
    processor.shutdown()


@pytest.mark.parametrize("name", ["agent run", "invoke_agent coder"])
def test_an_agent_span_known_by_its_name_alone_ends_its_session(mode, name):
    """pydantic-ai's legacy ``agent run`` (and a bare ``invoke_agent``) carry no marker
    attribute, so the fast filter lets them pass; the state on_start kept still ends the run,
    after the session's queued tool spans."""
    provider, processor, heard = _stack(mode)
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span(name, attributes={"agent_name": "coder"}):
        tracer.start_span(
            "running tool", attributes={"tool_arguments": "{}", "gen_ai.tool.name": "grep"}
        ).end()
    processor.force_flush()
    assert [kind for kind, _ in heard.events] == ["tool", "ended"]
    assert heard.events[0][1] == heard.events[1][1]
    assert processor.open_spans() == 0
    processor.shutdown()


def test_the_plugins_own_spans_are_not_heard(mode):
    """``cycleguard.*`` spans (the annotator's) never reach the guard."""
    provider, processor, heard = _stack(mode)
    provider.get_tracer("t").start_span("cycleguard.signal", attributes={"k": "v"}).end()
    processor.force_flush()
    assert heard.events == []
    processor.shutdown()


@pytest.mark.parametrize("key", sorted(_MARKER_KEYS))
def test_every_marker_key_passes_the_fast_filter(key):
    """The literal key tests in ``on_end`` are exactly ``_MARKER_KEYS``: each one lets a span in."""
    _, processor, _ = _stack(background=True, flush_interval_s=3600)  # the worker stays idle
    span = ReadableSpan(name="x", context=SpanContext(1, 2, False), attributes={key: "?"})
    processor.on_end(span)
    assert len(processor._queue) == 1
    processor.shutdown()


def test_a_tracked_plain_span_is_forgotten_when_it_ends(mode):
    """A plain span inside an agent is tracked from its start and released at its end."""
    provider, processor, _ = _stack(mode)
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span(
        "invoke_agent a", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        tracer.start_span("process request").end()
        assert processor.open_spans() == 1
    assert processor.open_spans() == 0
    processor.shutdown()


def test_a_plain_root_span_keeps_no_state_unless_it_names_a_session(mode):
    """on_start's fast filter: a root span with no marker, no agent name and no session id
    passes nothing on; one that names a session passes it to its tool spans."""
    provider, processor, heard = _stack(mode)
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("handle request", attributes={"http.route": "/"}):
        assert processor.open_spans() == 0
    with tracer.start_as_current_span("handle request", attributes={"session.id": "s-1"}):
        assert processor.open_spans() == 1
        tracer.start_span(
            "execute_tool grep",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "grep"},
        ).end()
    processor.force_flush()
    assert heard.events == [("tool", "s-1")]
    processor.shutdown()
