"""OpenAI Agents SDK, offline with a scripted ``Model``, instrumented by OpenInference.

No network: the agent's model is a ``Model`` subclass (no OpenAI client is ever built),
``OPENAI_API_KEY`` is removed from the environment, and ``OpenAIAgentsInstrumentor``
(exclusive by default) displaces the SDK's own trace exporter while instrumented, so no
trace goes to the vendor either. Tracing itself must stay on: ``set_tracing_disabled(True)``
or ``OPENAI_AGENTS_DISABLE_TRACING=1`` would remove every OTel span too.

Each test instruments with its own provider and uninstruments in teardown (which puts the
displaced SDK processors back). Tool spans are named after the tool: ``grep`` with
``openinference.span.kind=TOOL``, ``tool.name``, ``input.value`` (JSON arguments),
``output.value`` (the result); no call id, no LLM span for a custom model.
"""

from __future__ import annotations

import json
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
    "agents", reason="openai-agents is not installed: pip install -r requirements/frameworks.txt"
)
pytest.importorskip(
    "openinference.instrumentation.openai_agents",
    reason="openinference-instrumentation-openai-agents is not installed: "
    "pip install -r requirements/frameworks.txt",
)

import agents
from agents import Agent, ModelResponse, Runner, Usage, function_tool
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from openinference.instrumentation import using_session
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

pytestmark = pytest.mark.frameworks


@pytest.fixture
def instrumented(guarded: Guarded, monkeypatch: pytest.MonkeyPatch) -> Iterator[Guarded]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_AGENTS_DISABLE_TRACING", raising=False)
    agents.set_tracing_disabled(False)
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=guarded.provider)
    try:
        yield guarded
    finally:
        instrumentor.uninstrument()


class ScriptedModel(Model):
    """Calls ``grep`` with each of ``script`` in turn (one call per turn), then answers."""

    def __init__(self, script: list[dict[str, str]]) -> None:
        self.script = script
        self.results: list[str] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any):
        items = input if isinstance(input, list) else []
        self.results = [
            item["output"]
            for item in items
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]
        step = len(self.results)
        if step < len(self.script):
            output: list[Any] = [
                ResponseFunctionToolCall(
                    type="function_call",
                    id=f"fc_{step + 1}",
                    call_id=f"call_{step + 1}",
                    name="grep",
                    arguments=json.dumps(self.script[step]),
                    status="completed",
                )
            ]
        else:
            output = [
                ResponseOutputMessage(
                    id="msg_final",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[
                        ResponseOutputText(
                            type="output_text", text=f"done after {step} searches", annotations=[]
                        )
                    ],
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any):  # pragma: no cover - not used
        raise NotImplementedError("the scripted model does not stream")


@function_tool
def grep(pattern: str, path: str) -> str:
    """Search files under ``path`` for lines containing ``pattern``."""
    return grep_files(pattern, path)


def run_agent(script: list[dict[str, str]]) -> list[str]:
    model = ScriptedModel(script)
    agent = Agent(name="searcher", instructions="Find things.", model=model, tools=[grep])
    result = Runner.run_sync(agent, "Where is the port configured?", max_turns=len(script) + 2)
    assert result.final_output == f"done after {len(script)} searches"
    return model.results


def tool_spans(guarded: Guarded) -> list:
    return [
        s for s in guarded.spans() if (s.attributes or {}).get("openinference.span.kind") == "TOOL"
    ]


def test_identical_grep_loop_is_detected_at_the_third_and_fifth_call(
    instrumented: Guarded,
) -> None:
    """Six identical ``grep`` calls: WARN at step 2, TERM at step 4, on those tool spans."""
    with using_session("oai-session-loop"):
        seen = run_agent(LOOP_ARGS)
    assert seen == [grep_files(**LOOP_ARGS[0])] * 6

    spans = tool_spans(instrumented)
    assert [s.name for s in spans] == ["grep"] * 6
    first = spans[0].attributes
    assert first["tool.name"] == "grep"
    assert json.loads(first["input.value"]) == LOOP_ARGS[0]
    assert first["output.value"] == grep_files(**LOOP_ARGS[0])

    # The session key is checked by test_session_key below.
    assert_loop_detected(instrumented, spans, session=None, profile=None)


def test_six_different_searches_are_not_a_loop(instrumented: Guarded) -> None:
    """Six ``grep`` calls with different queries finding different lines: no identical_call."""
    with using_session("oai-session-distinct"):
        seen = run_agent(DISTINCT_ARGS)
    assert seen == [grep_files(**args) for args in DISTINCT_ARGS]
    spans = tool_spans(instrumented)
    assert [json.loads(s.attributes["input.value"]) for s in spans] == DISTINCT_ARGS
    assert_no_identical_call(instrumented, spans, session=None)  # key: test_session_key


@pytest.mark.parametrize("session_id", ["oai-session-key", None], ids=["session.id", "trace-id"])
def test_session_key(instrumented: Guarded, session_id: str | None) -> None:
    """Session: OpenInference ``session.id`` (``using_session``) when set, else the trace id;
    the top-level agent runs under the ``general`` profile."""
    if session_id is None:
        run_agent(LOOP_ARGS)
    else:
        with using_session(session_id):
            run_agent(LOOP_ARGS)
    spans = tool_spans(instrumented)
    expected = session_id or f"{spans[0].context.trace_id:032x}"
    assert_loop_detected(instrumented, spans, session=expected, profile="general")
