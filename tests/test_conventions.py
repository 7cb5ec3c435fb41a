"""Span name + attributes → ToolCall / ModelTurn for the four conventions the guard reads."""

from __future__ import annotations

import json

import pytest

from otel_cycleguard import conventions
from otel_cycleguard.conventions import SpanRole

GENAI_TOOL = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "grep",
    "gen_ai.tool.call.arguments": '{"pattern": "TODO"}',
    "gen_ai.tool.call.result": "3 matches",
}
OI_TOOL = {
    "openinference.span.kind": "TOOL",
    "tool.name": "search",
    "tool.parameters": '{"type": "object", "properties": {"q": {"type": "string"}}}',
    "input.value": '{"q": "weather"}',
    "output.value": "sunny",
}
TL_TOOL = {
    "traceloop.span.kind": "tool",
    "traceloop.entity.name": "fetch_page",
    "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"url": "https://x.test"}}),
    "traceloop.entity.output": "<html/>",
}
LEGACY_TOOL = {
    "gen_ai.tool.name": "read_file",
    "tool_arguments": '{"path": "a.py"}',
    "tool_response": "print(1)",
}


class TestToolSpansOfEachConvention:
    """Each convention's tool span is classified TOOL and yields tool, arguments and result."""

    @pytest.mark.parametrize(
        ("name", "attrs", "tool", "arguments", "result"),
        [
            ("execute_tool grep", GENAI_TOOL, "grep", '{"pattern": "TODO"}', "3 matches"),
            ("search", OI_TOOL, "search", '{"q": "weather"}', "sunny"),
            ("fetch_page.tool", TL_TOOL, "fetch_page", {"url": "https://x.test"}, "<html/>"),
            ("running tool", LEGACY_TOOL, "read_file", '{"path": "a.py"}', "print(1)"),
        ],
        ids=["genai", "openinference", "openllmetry", "pydantic-ai-legacy"],
    )
    def test_tool_span_becomes_a_tool_call(self, name, attrs, tool, arguments, result):
        """The tool name, the call's arguments and its result come from the convention's keys."""
        assert conventions.classify(name, attrs) == SpanRole.TOOL
        call = conventions.tool_call_from(name, attrs, start_ns=1_000_000_000, end_ns=2 * 10**9)
        assert (call.tool, call.arguments, call.result, call.error) == (
            tool,
            arguments,
            result,
            False,
        )
        assert (call.start_s, call.end_s) == (1.0, 2.0)

    def test_openinference_parameters_schema_is_not_the_call(self):
        """`tool.parameters` is the tool's JSON schema; the call's arguments are `input.value`."""
        call = conventions.tool_call_from("search", {**OI_TOOL, "input.value": None})
        assert call.arguments is None

    def test_genai_arguments_may_be_a_dict(self):
        """Opt-in `gen_ai.tool.call.arguments` may be structured rather than a JSON string."""
        attrs = {**GENAI_TOOL, "gen_ai.tool.call.arguments": {"pattern": "TODO"}}
        assert conventions.tool_call_from("execute_tool", attrs).arguments == {"pattern": "TODO"}

    def test_traceloop_positional_args_are_kept(self):
        """Traceloop's `{"args": [...], "kwargs": {...}}` keeps positional args beside kwargs."""
        attrs = {**TL_TOOL, "traceloop.entity.input": json.dumps({"args": [1], "kwargs": {"a": 2}})}
        assert conventions.tool_call_from("t", attrs).arguments == {"args": [1], "a": 2}

    def test_tool_name_falls_back_to_the_span_name(self):
        """Without a tool-name attribute, `execute_tool <name>` names the tool."""
        attrs = {"gen_ai.operation.name": "execute_tool"}
        assert conventions.tool_call_from("execute_tool ls", attrs).tool == "ls"

    def test_state_fingerprint_is_read_from_the_configured_attribute(self):
        """The agent's own state hash travels on the span under the configured attribute."""
        attrs = {**GENAI_TOOL, "my.state": 42}
        call = conventions.tool_call_from("x", attrs, state_attribute="my.state", span_id="ab")
        assert (call.state_fingerprint, call.span_id) == ("42", "ab")

    @pytest.mark.parametrize(
        ("key", "value", "expected"),
        [
            ("gen_ai.tool.read_only", True, True),
            ("cycleguard.tool.read_only", False, False),
            ("cycleguard.tool.dimension", "perceive", True),
            ("tool.read_only", "yes", None),
        ],
    )
    def test_read_only_hint(self, key, value, expected):
        """A boolean read-only flag on the span is passed on; non-booleans are ignored."""
        assert conventions.tool_call_from("x", {**GENAI_TOOL, key: value}).read_only is expected


class TestHandoffSpans:
    """OpenInference `handoff to …` spans are TOOL spans that are not tool calls."""

    def test_handoff_is_not_a_tool(self):
        """A handoff between agents must not count as a repeated tool call."""
        attrs = {"openinference.span.kind": "TOOL", "tool.name": "transfer_to_billing"}
        assert conventions.classify("handoff to billing", attrs) == SpanRole.OTHER

    def test_a_tool_merely_containing_handoff_is_still_a_tool(self):
        """Only the `handoff` prefix marks a handoff span."""
        attrs = {"openinference.span.kind": "TOOL", "tool.name": "plan_handoff"}
        assert conventions.classify("plan_handoff", attrs) == SpanRole.TOOL


class TestErrors:
    """A tool call is an error by span status ERROR, `error.type` or an `exception` event."""

    def test_status_error(self):
        """Status ERROR marks the call failed."""
        assert conventions.tool_call_from("x", GENAI_TOOL, status_error=True).error is True

    def test_error_type_attribute(self):
        """`error.type` marks the call failed even with status UNSET."""
        attrs = {**GENAI_TOOL, "error.type": "TimeoutError"}
        assert conventions.tool_call_from("x", attrs).error is True

    def test_exception_event(self):
        """An `exception` span event marks the call failed."""
        call = conventions.tool_call_from("x", GENAI_TOOL, event_names=["log", "exception"])
        assert call.error is True

    def test_other_events_are_not_errors(self):
        """Unrelated span events leave the call successful."""
        call = conventions.tool_call_from("x", GENAI_TOOL, event_names=["log", "retry"])
        assert call.error is False


class TestModelSpans:
    """Model spans of each convention yield the output text and token usage."""

    def test_genai_output_messages(self):
        """Text parts of `gen_ai.output.messages` (JSON) are the turn's text."""
        messages = [
            {
                "role": "assistant",
                "parts": [
                    {"type": "text", "content": "Let me check."},
                    {"type": "tool_call", "name": "grep", "arguments": {}},
                ],
            }
        ]
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.output.messages": json.dumps(messages),
            "gen_ai.usage.input_tokens": 120,
            "gen_ai.usage.output_tokens": 7,
        }
        assert conventions.classify("chat gpt-4o", attrs) == SpanRole.MODEL
        turn = conventions.model_turn_from(attrs, span_id="01")
        assert (turn.text, turn.input_tokens, turn.output_tokens, turn.span_id) == (
            "Let me check.",
            120,
            7,
            "01",
        )

    def test_genai_choice_event_with_plain_message(self):
        """A `gen_ai.choice` event's message is the text when no attribute carries it."""
        attrs = {"gen_ai.operation.name": "chat"}
        turn = conventions.model_turn_from(attrs, events=[("gen_ai.choice", {"message": "hi"})])
        assert turn.text == "hi"

    def test_genai_choice_event_with_json_message(self):
        """A `gen_ai.choice` message serialised as JSON yields its content, not the JSON."""
        message = json.dumps({"role": "assistant", "content": "I will retry."})
        turn = conventions.model_turn_from(
            {"gen_ai.operation.name": "chat"}, events=[("gen_ai.choice", {"message": message})]
        )
        assert turn.text == "I will retry."

    def test_openinference_output_messages(self):
        """OpenInference's flattened `llm.output_messages.N.message.content` are joined."""
        attrs = {
            "openinference.span.kind": "LLM",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "first",
            "llm.output_messages.1.message.content": "second",
            "llm.token_count.prompt": 10,
            "llm.token_count.completion": 2,
        }
        assert conventions.classify("ChatOpenAI", attrs) == SpanRole.MODEL
        turn = conventions.model_turn_from(attrs)
        assert (turn.text, turn.input_tokens, turn.output_tokens) == ("first\nsecond", 10, 2)

    def test_openllmetry_completions(self):
        """OpenLLMetry's `gen_ai.completion.N.content` and legacy token keys are read."""
        attrs = {
            "llm.request.type": "chat",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "done",
            "gen_ai.usage.prompt_tokens": 50,
            "gen_ai.usage.completion_tokens": 4,
        }
        assert conventions.classify("openai.chat", attrs) == SpanRole.MODEL
        turn = conventions.model_turn_from(attrs)
        assert (turn.text, turn.input_tokens, turn.output_tokens) == ("done", 50, 4)

    def test_tokens_of_the_wrong_type_count_as_zero(self):
        """Booleans or strings in token attributes are not token counts."""
        attrs = {"gen_ai.usage.input_tokens": True, "gen_ai.usage.output_tokens": "9"}
        turn = conventions.model_turn_from(attrs)
        assert (turn.input_tokens, turn.output_tokens) == (0, 0)

    def test_a_turn_without_text_has_none(self):
        """A model span with no output text gives a turn whose text is None."""
        assert conventions.model_turn_from({"gen_ai.operation.name": "chat"}).text is None


class TestSessionHints:
    """The conversation id a span names itself."""

    @pytest.mark.parametrize(
        ("attrs", "expected"),
        [
            ({"gen_ai.conversation.id": "conv-1"}, "conv-1"),
            ({"session.id": "sess-2"}, "sess-2"),
            ({"traceloop.association.properties.session_id": "tl-3"}, "tl-3"),
            ({"traceloop.association.properties.thread_id": 77}, "77"),
            ({"gen_ai.conversation.id": "", "session.id": "sess-5"}, "sess-5"),
            ({"gen_ai.conversation.id": 12}, None),
            ({"traceloop.association.properties.user_id": "u1"}, None),
            ({}, None),
        ],
    )
    def test_session_hint(self, attrs, expected):
        """GenAI, OpenInference and Traceloop session ids are read; empty or odd ones are not."""
        assert conventions.session_hint(attrs) == expected

    @pytest.mark.parametrize(
        "key", ["gen_ai.conversation.id", "traceloop.association.properties.session_id"]
    )
    def test_a_huge_session_id_is_bounded_and_stays_unique(self, key):
        first = "c" * 70_000 + "1"
        second = "c" * 70_000 + "2"
        one, two = conventions.session_hint({key: first}), conventions.session_hint({key: second})
        assert one != two
        assert len(one) <= conventions.MAX_SESSION_ID_LENGTH
        assert one.startswith("c" * 200)
        assert conventions.session_hint({key: first}) == one  # the same id, the same key

    def test_a_session_id_at_the_limit_is_kept_as_it_is(self):
        exact = "x" * conventions.MAX_SESSION_ID_LENGTH
        assert conventions.session_hint({"session.id": exact}) == exact


class TestAgentSpans:
    """Agent spans of each convention, and their names."""

    @pytest.mark.parametrize(
        ("name", "attrs", "expected"),
        [
            ("invoke_agent coder", {"gen_ai.operation.name": "invoke_agent"}, "coder"),
            ("x", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a1"}, "a1"),
            ("Planner", {"openinference.span.kind": "AGENT"}, "Planner"),
            (
                "wf.workflow",
                {"traceloop.span.kind": "workflow", "traceloop.entity.name": "wf"},
                "wf",
            ),
            ("agent run", {"agent_name": "x"}, None),
        ],
    )
    def test_agent_span_and_name(self, name, attrs, expected):
        """The span is an AGENT span and its agent name is found where the convention puts it."""
        assert conventions.classify(name, attrs) == SpanRole.AGENT
        assert conventions.agent_name(name, attrs) == expected

    def test_own_spans_are_recognised(self):
        """The plugin's `cycleguard.*` spans are classified OWN so they are never fed back."""
        assert conventions.classify("cycleguard.signal", {}) == SpanRole.OWN

    def test_delegating_tool(self):
        """`delegate_task` (case-insensitively) runs a child agent; `grep` does not."""
        delegating = frozenset({"delegate_task"})
        attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Delegate_Task"}
        assert conventions.is_delegating_tool("x", attrs, delegating)
        assert not conventions.is_delegating_tool("x", GENAI_TOOL, delegating)


class TestReadingAsPythonReadsIt:
    """The readers run in the compiled core; these hold them to what the same code in Python
    answered for inputs off the usual path."""

    def test_any_mapping_is_read_not_only_a_dict(self):
        from types import MappingProxyType

        attrs = MappingProxyType(dict(GENAI_TOOL, **{"gen_ai.conversation.id": "c-1"}))
        assert conventions.classify("x", attrs) == SpanRole.TOOL
        assert conventions.session_hint(attrs) == "c-1"
        call = conventions.tool_call_from("x", attrs)
        assert (call.tool, call.arguments, call.result) == (
            "grep",
            '{"pattern": "TODO"}',
            "3 matches",
        )

    def test_str_subclasses_compare_by_value(self):
        class Text(str):
            pass

        op = {"gen_ai.operation.name": Text("execute_tool")}
        assert conventions.classify("x", op) == SpanRole.TOOL
        assert conventions.classify(Text("running tool"), {}) == SpanRole.TOOL
        assert conventions.tool_name(Text("execute_tool grep"), {}) == "grep"

    def test_an_operation_of_another_type_is_no_role(self):
        for odd in ((1, 2), {"k": "v"}, 3.5, True, b"chat"):
            assert conventions.classify("span", {"gen_ai.operation.name": odd}) == SpanRole.OTHER

    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (12, 12),
            (12.9, 12),
            (float("inf"), 0),
            (True, 7),  # a bool is no count: the next key's is taken
            (float("nan"), 7),
            ("12", 7),
        ],
    )
    def test_token_counts_of_every_type(self, value, expected):
        attrs = {"gen_ai.usage.input_tokens": value, "gen_ai.usage.prompt_tokens": 7}
        assert conventions.model_turn_from(attrs).input_tokens == expected

    def test_an_int_subclass_count_becomes_an_int(self):
        class Count(int):
            pass

        tokens = conventions.model_turn_from({"llm.token_count.prompt": Count(5)}).input_tokens
        assert tokens == 5 and type(tokens) is int

    def test_a_failed_turn_says_what_failed_as_python_formats_it(self):
        turn = conventions.model_turn_from(
            {"error.type": 429}, status_error=True, status_message="rate limited"
        )
        assert turn.error and turn.error_text == "429: rate limited"
        turn = conventions.model_turn_from({}, status_error=True)
        assert turn.error_text == "None: "

    def test_text_that_is_not_json_is_the_text(self):
        raw = "[not json"
        assert conventions.model_turn_from({"gen_ai.output.messages": raw}).text == raw
        surrogate = "[\ud800"
        assert conventions.model_turn_from({"gen_ai.output.messages": surrogate}).text == surrogate

    def test_text_nested_deeper_than_the_core_reads_is_read_by_python(self):
        deep = "[" * 200 + "]" * 200  # valid JSON, no message: no text, as Python answers
        assert conventions.model_turn_from({"gen_ai.output.messages": deep}).text is None

    def test_a_session_id_of_traceloop_may_be_an_int(self):
        attrs = {"traceloop.association.properties.thread_id": 42}
        assert conventions.session_hint(attrs) == "42"

    def test_times_are_seconds_and_zero_is_unknown(self):
        call = conventions.tool_call_from("x", GENAI_TOOL, start_ns=1_500_000_000, end_ns=0)
        assert (call.start_s, call.end_s) == (1.5, None)


def test_the_core_readers_refuse_a_helper_tuple_of_another_length():
    from otel_cycleguard import _core
    from otel_cycleguard.detect._slotted import fields_of
    from otel_cycleguard.detect.records import ModelTurn, ToolCall
    from otel_cycleguard.model_messages import RequestedCall, ReturnedResult

    calls = (fields_of(ToolCall), fields_of(ModelTurn))
    with pytest.raises(ValueError, match="6 helper functions expected, 5 given"):
        _core.Conventions(ToolCall, calls[0], ModelTurn, calls[1], (print,) * 5)
    messages = (fields_of(RequestedCall), fields_of(ReturnedResult))
    with pytest.raises(ValueError, match="6 readers expected, 7 given"):
        _core.Messages(RequestedCall, messages[0], ReturnedResult, messages[1], (print,) * 7)
