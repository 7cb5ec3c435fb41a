"""OpenAI Agents SDK: the input filter delivers directives, the tool guardrail stops the run.

Driven offline by a scripted ``Model`` subclass (it sees every model input), traced by
OpenInference's ``OpenAIAgentsInstrumentor`` into the guarded provider.
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("agents")
pytest.importorskip("openinference.instrumentation.openai_agents")

from agents import Agent, ModelResponse, RunConfig, Runner, Usage, function_tool
from agents.exceptions import ToolInputGuardrailTripwireTriggered
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

from otel_cycleguard import CycleTerminated
from otel_cycleguard.escalate.directives import CycleTerminated as _Terminated
from otel_cycleguard.escalate.directives import Directive
from otel_cycleguard.escalate.hitl import HumanDecision
from otel_cycleguard.integrations.generic import current_session
from otel_cycleguard.integrations.openai_agents import (
    cycleguard_run_config,
    guard_tools,
    run_guarded_sync,
    terminated_from,
)

from ._rig import (
    INSTRUCTION,
    LOOP_ARGS,
    MARK,
    TERM_AT,
    Human,
    Rig,
    assert_progress_saved,
    assert_terminated_in_time,
)

pytestmark = pytest.mark.frameworks

MAX_TURNS = 40  # the SDK's default of 10 would stop the loop before the guard's second TERM
FINAL = "I could not find it by repeating myself; here is what I know."


@pytest.fixture
def rig(make_rig, monkeypatch) -> Iterator[Any]:
    """``rig(human)``: a guarded provider with OpenInference instrumenting the SDK into it."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # never try to reach the vendor
    monkeypatch.delenv("OPENAI_AGENTS_DISABLE_TRACING", raising=False)
    instrumentor = OpenAIAgentsInstrumentor()
    made: list[Rig] = []

    def make(human: Human | None = None) -> Rig:
        assert not made, "one instrumented provider per test"
        made.append(make_rig(human))
        instrumentor.instrument(tracer_provider=made[0].provider)
        return made[0]

    yield make
    if made:
        instrumentor.uninstrument()


def _text(item: Any) -> str:
    return str(item.get("content", "")) if isinstance(item, dict) else ""


def _has_mark(items: list[Any]) -> bool:
    return any(MARK in _text(i) for i in items)


class ScriptedModel(Model):
    """The same grep call every turn until ``stop(input)`` says answer."""

    def __init__(self, stop: Any = None, max_calls: int = 40) -> None:
        self.inputs: list[list[Any]] = []
        self.sessions: list[str | None] = []
        self.stop = stop or (lambda items: False)
        self.max_calls = max_calls
        self.calls = 0

    async def get_response(self, system_instructions, input, *args: Any, **kwargs: Any):
        items = [{"role": "user", "content": input}] if isinstance(input, str) else input
        self.inputs.append(copy.deepcopy(items))
        self.sessions.append(current_session())
        if self.stop(items) or self.calls >= self.max_calls:
            text = ResponseOutputText(type="output_text", text=FINAL, annotations=[])
            output: list[Any] = [
                ResponseOutputMessage(
                    id="msg-final",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[text],
                )
            ]
        else:
            self.calls += 1
            output = [
                ResponseFunctionToolCall(
                    type="function_call",
                    name="grep",
                    arguments=json.dumps(LOOP_ARGS),
                    call_id=f"call-{self.calls}",
                    id=f"fc-{self.calls}",
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any):  # pragma: no cover - not used
        raise NotImplementedError


def _agent(rig: Rig, model: Model) -> Agent:
    @function_tool
    def grep(pattern: str, path: str) -> str:
        """Search files under ``path`` for ``pattern``."""
        return rig.grep(pattern, path)

    return guard_tools(Agent(name="coder", model=model, tools=[grep]))


def _session(model: ScriptedModel) -> str:
    sessions = {s for s in model.sessions if s is not None}
    assert len(sessions) == 1, sessions
    return sessions.pop()


def test_corrective_message_is_appended_to_the_next_model_input(rig):
    rig = rig()
    model = ScriptedModel(max_calls=TERM_AT + 2)
    result = Runner.run_sync(
        _agent(rig, model), "Find where the port is configured.", run_config=cycleguard_run_config()
    )
    assert result.final_output == FINAL
    inputs = model.inputs
    assert [_has_mark(i) for i in inputs] == [False] * TERM_AT + [True] + [False] * 2
    before, healed, after = inputs[TERM_AT - 1], inputs[TERM_AT], inputs[TERM_AT + 1]
    assert healed[: len(before)] == before  # earlier items unchanged
    assert healed[-2]["type"] == "function_call_output"  # after the 5th call's result
    assert healed[-2]["call_id"] == f"call-{TERM_AT}"
    injected = healed[-1]
    assert set(injected) == {"role", "content"}
    assert injected["role"] == "system"
    assert injected["content"].startswith(MARK) and "loop" in injected["content"]
    # That call only: the next input has the same history without it.
    assert after[: len(healed) - 1] == healed[:-1]
    assert not _has_mark(after)
    assert rig.counters(_session(model))["tool_calls"] == TERM_AT + 2


def test_a_run_that_heeds_the_message_finishes(rig):
    rig = rig()
    model = ScriptedModel(stop=lambda items: _has_mark(items[-1:]))
    result = run_guarded_sync(_agent(rig, model), "Find where the port is configured.")
    assert result.final_output == FINAL
    assert len(rig.tool_calls) == TERM_AT
    assert rig.human.requests == []
    assert rig.engine.terminations == []


def test_a_run_that_keeps_looping_is_terminated_when_the_human_is_silent(rig):
    rig = rig(Human())
    model = ScriptedModel()
    agent = _agent(rig, model)
    # The plain Runner: the filter's CycleTerminated propagates as it is.
    with pytest.raises(CycleTerminated) as caught:
        Runner.run_sync(
            agent,
            "Find where the port is configured.",
            run_config=cycleguard_run_config(),
            max_turns=MAX_TURNS,
        )
    raised_at = time.time()
    assert caught.type is _Terminated
    lag = assert_terminated_in_time(rig, raised_at)
    print(f"openai-agents: terminated {lag:+.3f} s after the deadline")
    assert len(rig.tool_calls) == 2 * TERM_AT
    assert sum(_has_mark(i[-1:]) for i in model.inputs) == 1
    assert_progress_saved(rig, caught.value, _session(model))


def test_a_human_modify_instruction_arrives_as_a_user_item(rig):
    rig = rig(Human(HumanDecision("modify", message=INSTRUCTION)))
    model = ScriptedModel(stop=lambda items: INSTRUCTION in _text(items[-1]))
    result = run_guarded_sync(
        _agent(rig, model), "Find where the port is configured.", max_turns=MAX_TURNS
    )
    assert result.final_output == FINAL
    assert len(rig.human.requests) == 1
    assert len(rig.tool_calls) == 2 * TERM_AT
    last, before = model.inputs[-1], model.inputs[-2]
    assert last[: len(before)] == before
    assert last[-2]["type"] == "function_call_output"
    assert last[-1] == {"role": "user", "content": INSTRUCTION}
    assert rig.engine.terminations == []


class _TerminatingModel(Model):
    """Terminates the run while 'answering' (as a HITL timeout would), then calls a tool."""

    def __init__(self, rig: Rig) -> None:
        self.rig = rig

    async def get_response(self, *args: Any, **kwargs: Any):
        session = current_session()
        assert session is not None
        self.rig.engine.mailboxes.terminate(
            session, _Terminated(session, "cycle_detected", "stopped by test", None)
        )
        call = ResponseFunctionToolCall(
            type="function_call", name="grep", arguments=json.dumps(LOOP_ARGS), call_id="c1"
        )
        return ModelResponse(output=[call], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any):  # pragma: no cover
        raise NotImplementedError


def test_the_tool_guardrail_stops_a_tool_after_termination(rig):
    rig = rig()
    agent = _agent(rig, _TerminatingModel(rig))
    # The SDK reports a guardrail halt as its own tripwire exception ...
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as caught:
        Runner.run_sync(agent, "go", run_config=RunConfig())
    stopped = terminated_from(caught.value)
    assert isinstance(stopped, CycleTerminated) and stopped.user_message == "stopped by test"
    assert rig.tool_calls == []
    # ... which run_guarded_sync unwraps for the caller.
    with pytest.raises(CycleTerminated):
        run_guarded_sync(_agent(rig, _TerminatingModel(rig)), "go")
    assert rig.tool_calls == []


def test_composes_with_an_existing_filter_and_pins_a_session(rig):
    rig = rig()
    rig.engine.mailboxes.post("pinned", Directive("system", f"{MARK} pinned", "identical_call"))
    seen: list[int] = []

    def mine(data):
        seen.append(len(data.model_data.input))
        return data.model_data

    model = ScriptedModel(max_calls=0)
    config = cycleguard_run_config(RunConfig(call_model_input_filter=mine), session="pinned")
    result = Runner.run_sync(_agent(rig, model), "go", run_config=config)
    assert result.final_output == FINAL
    assert seen == [1]
    assert model.inputs[0][-1] == {"role": "system", "content": f"{MARK} pinned"}
    assert os.environ.get("OPENAI_API_KEY") is None
