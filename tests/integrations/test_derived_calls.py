"""The derivation stage on its own: each convention's shapes, pairing, dedup, bounds, no raising.

The shapes of OpenInference, openai-v2 and OpenLLMetry 0.6x are checked against the real
packages in ``test_model_clients``; the shapes here are those no installed package writes any
more (OpenLLMetry's indexed ``gen_ai.prompt.N`` / ``gen_ai.completion.N``, the per-message span
events) and the edge cases.
"""

from __future__ import annotations

import json
from typing import Any

from otel_cycleguard.derive import DerivedCalls
from otel_cycleguard.detect.records import ToolCall
from otel_cycleguard.model_messages import (
    MAX_CALLS,
    has_content,
    requested_calls,
    returned_results,
)


def genai(inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(inputs),
        "gen_ai.output.messages": json.dumps(outputs),
    }


def ask(*calls: tuple[str | None, str, dict[str, Any]]) -> dict[str, Any]:
    parts = [{"type": "tool_call", "id": i, "name": n, "arguments": a} for i, n, a in calls]
    return {"role": "assistant", "parts": parts}


def answer(*results: tuple[str | None, str], error: bool = False) -> dict[str, Any]:
    parts = [
        {
            "type": "tool_call_response",
            "id": i,
            "response": r,
            **({"is_error": True} if error else {}),
        }
        for i, r in results
    ]
    return {"role": "tool", "parts": parts}


USER = {"role": "user", "parts": [{"type": "text", "content": "go"}]}


def test_a_call_is_known_with_its_result_one_turn_later() -> None:
    derived = DerivedCalls()
    first = genai([USER], [ask(("c1", "grep", {"q": "x"}))])
    assert derived.model_span("s", first) == []  # asked, result not known yet
    second = genai([USER, ask(("c1", "grep", {"q": "x"})), answer(("c1", "hit"))], [ask()])
    (call,) = derived.model_span("s", second, span_id="b" * 16)
    assert (call.tool, call.arguments, call.result, call.error) == (
        "grep",
        {"q": "x"},
        "hit",
        False,
    )
    assert call.span_id == "b" * 16
    # The history of later turns is not read again: only results after the last assistant message.
    third = genai([USER, ask(("c1", "grep", {"q": "x"})), answer(("c1", "hit"))], [ask()])
    assert derived.model_span("s", third) == []


def test_results_match_by_id_else_by_order_and_errors_are_kept() -> None:
    derived = DerivedCalls()
    derived.model_span("s", genai([USER], [ask(("a", "read", {"p": 1}), ("b", "read", {"p": 2}))]))
    history = [USER, ask(("a", "read", {"p": 1}), ("b", "read", {"p": 2}))]
    calls = derived.model_span("s", genai([*history, answer(("b", "two"), ("a", "one"))], []))
    assert [(c.arguments, c.result) for c in calls] == [({"p": 1}, "one"), ({"p": 2}, "two")]

    derived.model_span("t", genai([USER], [ask((None, "run", {})), ask((None, "run", {"x": 1}))]))
    history = [USER, ask((None, "run", {}), (None, "run", {"x": 1}))]
    calls = derived.model_span(
        "t", genai([*history, answer((None, "A"), (None, "B"), error=True)], [])
    )
    assert [(c.arguments, c.result, c.error) for c in calls] == [
        ({}, "A", True),
        ({"x": 1}, "B", True),
    ]


def test_a_call_without_a_result_is_not_invented() -> None:
    derived = DerivedCalls()
    derived.model_span("s", genai([USER], [ask(("c1", "grep", {}))]))
    # The agent started over instead of running the tool: no result, no call.
    assert derived.model_span("s", genai([USER, {"role": "assistant", "parts": []}], [])) == []


def test_real_tool_spans_cover_their_calls() -> None:
    derived = DerivedCalls()
    derived.model_span(
        "s",
        genai([USER], [ask(("c1", "grep", {"q": 1}), ("c2", "grep", {"q": 2}), ("c3", "ls", {}))]),
    )
    # by id; by name and arguments (a JSON string against a dict); by name alone
    derived.tool_span("s", {"gen_ai.tool.call.id": "c1"}, ToolCall("grep", {"q": 1}))
    derived.tool_span("s", {}, ToolCall("grep", '{"q": 2}'))
    derived.tool_span("s", {}, ToolCall("ls", "a python repr, not JSON"))
    history = [USER, ask(("c1", "grep", {"q": 1}), ("c2", "grep", {"q": 2}), ("c3", "ls", {}))]
    results = answer(("c1", "r1"), ("c2", "r2"), ("c3", "r3"))
    assert derived.model_span("s", genai([*history, results], [])) == []
    assert (derived.covered, derived.emitted) == (3, 0)


def test_a_real_call_covers_at_most_one_derived_call() -> None:
    derived = DerivedCalls()
    derived.model_span("s", genai([USER], [ask(("c1", "grep", {}), ("c2", "grep", {}))]))
    derived.tool_span("s", {}, ToolCall("grep", {}))  # one real span for two requested calls
    history = [USER, ask(("c1", "grep", {}), ("c2", "grep", {}))]
    calls = derived.model_span("s", genai([*history, answer(("c1", "x"), ("c2", "y"))], []))
    assert [c.result for c in calls] == ["y"]


def test_openllmetry_indexed_shape() -> None:
    first = {
        "llm.request.type": "chat",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "go",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.tool_calls.0.id": "call_1",
        "gen_ai.completion.0.tool_calls.0.name": "get_weather",
        "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Paris"}',
    }
    assert [(c.id, c.name) for c in requested_calls(first)] == [("call_1", "get_weather")]
    second = {
        "llm.request.type": "chat",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.1.role": "assistant",
        "gen_ai.prompt.2.role": "tool",
        "gen_ai.prompt.2.tool_call_id": "call_1",
        "gen_ai.prompt.2.content": "12C",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "done",
    }
    assert [(r.id, r.content) for r in returned_results(second)] == [("call_1", "12C")]
    derived = DerivedCalls()
    derived.model_span("s", first)
    (call,) = derived.model_span("s", second)
    assert (call.tool, call.arguments, call.result) == ("get_weather", '{"city": "Paris"}', "12C")


def test_per_message_span_events() -> None:
    choice = (
        "gen_ai.choice",
        {"tool_calls": json.dumps([{"id": "t1", "function": {"name": "ls", "arguments": "{}"}}])},
    )
    assert [(c.id, c.name) for c in requested_calls({}, [choice])] == [("t1", "ls")]
    events = [
        ("gen_ai.user.message", {"content": "go"}),
        ("gen_ai.assistant.message", {"tool_calls": "[]"}),
        ("gen_ai.tool.message", {"id": "t1", "content": "a b"}),
    ]
    assert [(r.id, r.content) for r in returned_results({}, events)] == [("t1", "a b")]
    assert has_content({}, events) and not has_content({"gen_ai.operation.name": "chat"})


def test_openinference_history_whose_first_messages_were_dropped() -> None:
    """The SDK's attribute limit drops the oldest keys: indices no longer start at 0."""
    attrs = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.7.message.role": "assistant",
        "llm.input_messages.8.message.role": "tool",
        "llm.input_messages.8.message.tool_call_id": "x",
        "llm.input_messages.8.message.content": "r",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "y",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "grep",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": "{}",
    }
    assert [(r.id, r.content) for r in returned_results(attrs)] == [("x", "r")]
    assert [(c.id, c.name) for c in requested_calls(attrs)] == [("y", "grep")]
    del attrs["llm.output_messages.0.message.role"]
    assert has_content(attrs)


def test_bounded_and_never_raises() -> None:
    many = [(f"c{i}", "grep", {"i": i}) for i in range(MAX_CALLS * 3)]
    assert len(requested_calls(genai([USER], [ask(*many)]))) == MAX_CALLS
    derived = DerivedCalls(max_sessions=3)
    for session in "abcdef":
        derived.model_span(session, genai([USER], [ask(("c", "grep", {}))]))
    assert len(derived) == 3
    for garbage in (
        {"gen_ai.output.messages": "not json", "gen_ai.input.messages": "[1, null, {}]"},
        {"gen_ai.output.messages": json.dumps([{"parts": [{"type": "tool_call", "name": 5}]}])},
        {"llm.output_messages.x.message.role": "assistant", "llm.input_messages.0.message.role": 3},
        {"gen_ai.completion.0.tool_calls.0.name": ["list"], "gen_ai.prompt.0.role": None},
    ):
        derived.model_span("g", garbage, [("gen_ai.choice", {"message": "{bad"})])
        requested_calls(garbage)
        returned_results(garbage)


def test_the_session_used_least_recently_is_the_one_dropped() -> None:
    """Past ``max_sessions`` the oldest *use* goes, not the oldest session: a session that
    keeps working keeps its pending calls."""
    derived = DerivedCalls(max_sessions=2)
    derived.model_span("a", genai([USER], [ask(("c", "grep", {}))]))
    derived.model_span("b", genai([USER], [ask(("c", "grep", {}))]))
    assert derived.pending("a")  # a use of "a": "b" is now the least recent
    derived.model_span("c", genai([USER], [ask(("c", "grep", {}))]))
    assert len(derived) == 2
    assert derived.pending("a") and derived.pending("c")
    assert not derived.pending("b")


def test_a_side_call_between_two_turns_leaves_the_calls_pending() -> None:
    derived = DerivedCalls()
    derived.model_span("s", genai([USER], [ask(("c1", "grep", {}))]))
    side = genai([{"role": "user", "parts": [{"type": "text", "content": "is this safe?"}]}], [])
    side["gen_ai.output.messages"] = json.dumps(
        [{"role": "assistant", "parts": [{"type": "text", "content": "yes"}]}]
    )
    assert derived.model_span("s", side) == []
    history = [USER, ask(("c1", "grep", {}))]
    (call,) = derived.model_span("s", genai([*history, answer(("c1", "hit"))], []))
    assert call.result == "hit"


def test_arguments_reach_the_detector_as_json_gives_them() -> None:
    """Objects keep their order and a repeated key its last value, as orjson gives them."""
    derived = DerivedCalls()
    output = '[{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "edit", "arguments": {"z": 1, "a": [1, 2.5, null], "z": 3}}]}]'
    derived.model_span("s", {"gen_ai.output.messages": output})
    history = json.loads(output)
    second = genai([USER, *history, answer(("c1", {"ok": True, "big": 2**70}))], [])
    (call,) = derived.model_span("s", second)
    assert call.arguments == {"z": 3, "a": [1, 2.5, None]}
    assert list(call.arguments) == ["z", "a"]
    assert call.result == {"ok": True, "big": 2**70}


def test_an_error_field_marks_a_failed_result_unless_it_is_empty() -> None:
    derived = DerivedCalls()
    failed = []
    for error in (None, False, 0, 0.0, "boom", 1, [], True):
        derived.model_span("s", genai([USER], [ask(("c1", "grep", {}))]))
        part = {"type": "tool_call_response", "id": "c1", "response": "r", "error": error}
        (call,) = derived.model_span(
            "s", genai([USER, ask(("c1", "grep", {})), {"role": "tool", "parts": [part]}], [])
        )
        failed.append(call.error)
    assert failed == [False, False, False, False, True, True, True, True]


def test_messages_nested_past_the_readers_depth_ask_for_nothing() -> None:
    deep = {"x": 1}
    for _ in range(200):
        deep = {"x": deep}
    output = [
        {"role": "assistant", "parts": [{"type": "tool_call", "name": "grep", "arguments": deep}]}
    ]
    assert requested_calls({"gen_ai.output.messages": json.dumps(output)}) == []
    shallow = [
        {"role": "assistant", "parts": [{"type": "tool_call", "name": "grep", "arguments": {}}]}
    ]
    assert len(requested_calls({"gen_ai.output.messages": json.dumps(shallow)})) == 1


def test_the_missing_content_notes_are_one_dict_the_report_can_add_to() -> None:
    derived = DerivedCalls()
    bare = {"gen_ai.operation.name": "chat"}
    for _ in range(3):
        derived.model_span("s", bare)
    notes = derived.notes
    assert list(notes.values()) == [1] and derived.notes is notes
    notes["another hint"] = 2  # the parallel replay merges its workers' notes into it
    assert derived.notes["another hint"] == 2
    assert derived.session_keys() == ["s"]
