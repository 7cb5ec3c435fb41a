"""LangGraph ``create_react_agent``, offline with a scripted chat model, instrumented by OpenInference.

The model is a small ``BaseChatModel`` whose ``bind_tools`` returns itself
(``GenericFakeChatModel`` has no ``bind_tools``). Each test instruments
``LangChainInstrumentor`` with its own provider and uninstruments in teardown.

Tool spans are named after the tool: ``grep`` with ``openinference.span.kind=TOOL``,
``tool.name``, ``input.value`` (JSON for a two-argument tool) and ``output.value`` = the whole
serialised ``ToolMessage`` (``{"type": "tool", "data": {"content": ..., "tool_call_id": ...}}``);
all attributes are set at span end. The per-call ``tool_call_id`` in that result used to make
every call look different (fixed in ``conventions.py``: the result is the message content).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import Any

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
    "langgraph.prebuilt",
    reason="langgraph is not installed: pip install -r requirements/frameworks.txt",
)
pytest.importorskip(
    "openinference.instrumentation.langchain",
    reason="openinference-instrumentation-langchain is not installed: "
    "pip install -r requirements/frameworks.txt",
)

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent
from openinference.instrumentation.langchain import LangChainInstrumentor
from pydantic import Field

pytestmark = pytest.mark.frameworks


@pytest.fixture
def instrumented(guarded: Guarded) -> Iterator[Guarded]:
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=guarded.provider)
    try:
        yield guarded
    finally:
        instrumentor.uninstrument()


class ScriptedChatModel(BaseChatModel):
    """Calls ``grep`` with each of ``script`` in turn (one call per turn), then answers."""

    script: list[dict[str, str]]
    results: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.results = [m.content for m in messages if isinstance(m, ToolMessage)]
        step = len(self.results)
        if step < len(self.script):
            message = AIMessage(
                content="",
                tool_calls=[
                    {
                        "name": "grep",
                        "args": dict(self.script[step]),
                        "id": f"call_{step + 1}",
                        "type": "tool_call",
                    }
                ],
            )
        else:
            message = AIMessage(content=f"done after {step} searches")
        return ChatResult(generations=[ChatGeneration(message=message)])


@tool
def grep(pattern: str, path: str) -> str:
    """Search files under ``path`` for lines containing ``pattern``."""
    return grep_files(pattern, path)


def run_agent(script: list[dict[str, str]], thread_id: str) -> list[str]:
    model = ScriptedChatModel(script=script)
    with warnings.catch_warnings():  # create_react_agent is deprecated in langgraph 1.x
        warnings.simplefilter("ignore")
        agent = create_react_agent(model, [grep])
    out = agent.invoke(
        {"messages": [("user", "Where is the port configured?")]},
        config={"recursion_limit": 4 * len(script) + 5, "configurable": {"thread_id": thread_id}},
    )
    assert out["messages"][-1].content == f"done after {len(script)} searches"
    return model.results


def tool_spans(guarded: Guarded) -> list:
    return [
        s for s in guarded.spans() if (s.attributes or {}).get("openinference.span.kind") == "TOOL"
    ]


def test_identical_grep_loop_is_detected_at_the_third_and_fifth_call(
    instrumented: Guarded,
) -> None:
    """Six identical ``grep`` calls: WARN at step 2, TERM at step 4, on those tool spans."""
    seen = run_agent(LOOP_ARGS, thread_id="lg-thread-loop")
    assert seen == [grep_files(**LOOP_ARGS[0])] * 6

    spans = tool_spans(instrumented)
    assert [s.name for s in spans] == ["grep"] * 6
    first = spans[0].attributes
    assert first["tool.name"] == "grep"
    assert json.loads(first["input.value"]) == LOOP_ARGS[0]
    output = json.loads(first["output.value"])
    assert output["type"] == "tool"
    assert output["data"]["content"] == grep_files(**LOOP_ARGS[0])
    assert output["data"]["tool_call_id"] == "call_1"  # differs per call: not the result
    assert first["session.id"] == "lg-thread-loop"

    # Session: OpenInference `session.id`, which the LangChain instrumentation fills from
    # LangGraph's `configurable.thread_id` (set at span end; read by the processor in on_end).
    assert_loop_detected(instrumented, spans, session="lg-thread-loop")
    # Its model spans name the same six calls: each was covered by its tool span, none counted
    # twice (tool_calls_seen == 6 above).
    assert instrumented.processor.derived.covered == 6
    assert instrumented.processor.derived.emitted == 0


def test_six_different_searches_are_not_a_loop(instrumented: Guarded) -> None:
    """Six ``grep`` calls with different queries finding different lines: no identical_call."""
    seen = run_agent(DISTINCT_ARGS, thread_id="lg-thread-distinct")
    assert seen == [grep_files(**args) for args in DISTINCT_ARGS]
    spans = tool_spans(instrumented)
    assert [json.loads(s.attributes["input.value"]) for s in spans] == DISTINCT_ARGS
    assert_no_identical_call(instrumented, spans, session="lg-thread-distinct")
