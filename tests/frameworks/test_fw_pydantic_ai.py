"""pydantic-ai, offline with ``FunctionModel``, instrumented by pydantic-ai itself (OTel GenAI).

The agent gets ``capabilities=[Instrumentation(settings=InstrumentationSettings(
tracer_provider=tp))]`` (``Agent(instrument=True)`` raises ``TypeError`` in 2.68), so its
spans go to this test's provider only: no global state to clean up. Tool spans are
``execute_tool grep`` with ``gen_ai.operation.name=execute_tool``, ``gen_ai.tool.name``,
``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments`` (JSON) and ``gen_ai.tool.call.result``.
"""

from __future__ import annotations

import json

import pytest
from _frameworks_support import (
    DISTINCT_ARGS,
    LOOP_ARGS,
    Guarded,
    assert_loop_detected,
    assert_no_identical_call,
    grep_files,
)

pytest.importorskip(
    "pydantic_ai",
    reason="pydantic-ai-slim is not installed: pip install -r requirements/frameworks.txt",
)

from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

pytestmark = pytest.mark.frameworks


def run_agent(guarded: Guarded, script: list[dict[str, str]], conversation_id: str) -> list:
    """Run an agent whose scripted model calls ``grep`` with each of ``script``, then answers.

    Returns the tool results the model saw, in order.
    """
    seen: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [
            part.content
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        seen[:] = returns
        step = len(returns)
        if step < len(script):
            return ModelResponse(
                parts=[ToolCallPart("grep", dict(script[step]), tool_call_id=f"call_{step + 1}")]
            )
        return ModelResponse(parts=[TextPart(f"done after {step} searches")])

    agent = Agent(
        FunctionModel(model),
        name="searcher",
        capabilities=[
            Instrumentation(settings=InstrumentationSettings(tracer_provider=guarded.provider))
        ],
    )

    @agent.tool_plain
    def grep(pattern: str, path: str) -> str:
        """Search files under ``path`` for lines containing ``pattern``."""
        return grep_files(pattern, path)

    result = agent.run_sync("Where is the port configured?", conversation_id=conversation_id)
    assert result.output == f"done after {len(script)} searches"
    assert result.conversation_id == conversation_id
    return seen


def tool_spans(guarded: Guarded) -> list:
    return [
        s
        for s in guarded.spans()
        if (s.attributes or {}).get("gen_ai.operation.name") == "execute_tool"
    ]


def test_identical_grep_loop_is_detected_at_the_third_and_fifth_call(guarded: Guarded) -> None:
    """Six identical ``grep`` calls: WARN at step 2, TERM at step 4, on those tool spans."""
    seen = run_agent(guarded, LOOP_ARGS, conversation_id="conv-pydantic-loop")
    assert seen == [grep_files(**LOOP_ARGS[0])] * 6

    spans = tool_spans(guarded)
    assert [s.name for s in spans] == ["execute_tool grep"] * 6
    first = spans[0].attributes
    assert first["gen_ai.tool.name"] == "grep"
    assert first["gen_ai.tool.call.id"] == "call_1"
    assert json.loads(first["gen_ai.tool.call.arguments"]) == LOOP_ARGS[0]
    assert first["gen_ai.conversation.id"] == "conv-pydantic-loop"

    # Session: OTel GenAI `gen_ai.conversation.id` (pydantic-ai puts it on the invoke_agent,
    # chat and execute_tool spans; here the id passed to run_sync).
    assert_loop_detected(guarded, spans, session="conv-pydantic-loop")
    # Its model spans name the same six calls: each was covered by its tool span, none counted
    # twice (tool_calls_seen == 6 above).
    assert guarded.processor.derived.covered == 6
    assert guarded.processor.derived.emitted == 0


def test_six_different_searches_are_not_a_loop(guarded: Guarded) -> None:
    """Six ``grep`` calls with different queries finding different lines: no identical_call."""
    seen = run_agent(guarded, DISTINCT_ARGS, conversation_id="conv-pydantic-distinct")
    assert seen == [grep_files(**args) for args in DISTINCT_ARGS]
    spans = tool_spans(guarded)
    assert [json.loads(s.attributes["gen_ai.tool.call.arguments"]) for s in spans] == DISTINCT_ARGS
    assert_no_identical_call(guarded, spans, session="conv-pydantic-distinct")
