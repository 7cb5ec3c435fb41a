"""LangGraph: the pre-model hook delivers directives for one call, waits, and stops the run.

Driven offline by a scripted ``BaseChatModel`` (it sees every model input) in
``create_react_agent``, traced by OpenInference's ``LangChainInstrumentor`` into the guarded
provider.
"""

from __future__ import annotations

import asyncio
import copy
import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("openinference.instrumentation.langchain")

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from openinference.instrumentation.langchain import LangChainInstrumentor
from pydantic import Field

from otel_cycleguard import CycleTerminated
from otel_cycleguard.escalate.directives import CycleTerminated as _Terminated
from otel_cycleguard.escalate.directives import Directive
from otel_cycleguard.escalate.hitl import HumanDecision
from otel_cycleguard.integrations.langgraph import (
    cycleguard_post_model_hook,
    cycleguard_pre_model_hook,
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

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent

pytestmark = [
    pytest.mark.frameworks,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:.*create_react_agent.*"),
]

FINAL = "I could not find it by repeating myself; here is what I know."
QUESTION = {"messages": [("user", "Find where the port is configured.")]}


def _config(thread: str | None = "t-1") -> dict[str, Any]:
    config: dict[str, Any] = {"recursion_limit": 200}
    if thread is not None:
        config["configurable"] = {"thread_id": thread}
    return config


@pytest.fixture
def rig(make_rig) -> Iterator[Any]:
    """``rig(human)``: a guarded provider with OpenInference instrumenting LangChain into it."""
    instrumentor = LangChainInstrumentor()
    made: list[Rig] = []

    def make(human: Human | None = None) -> Rig:
        assert not made, "one instrumented provider per test"
        made.append(make_rig(human))
        instrumentor.instrument(tracer_provider=made[0].provider)
        return made[0]

    yield make
    if made:
        instrumentor.uninstrument()


def _has_mark(messages: list[BaseMessage]) -> bool:
    return any(MARK in str(m.content) for m in messages)


class ScriptedChat(BaseChatModel):
    """The same grep call every turn until ``stop(messages)`` says answer."""

    inputs: list[list[BaseMessage]] = Field(default_factory=list)
    stop: Any = None
    max_calls: int = 40
    calls: int = 0
    on_call: Any = None

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.inputs.append(copy.deepcopy(list(messages)))
        if self.on_call is not None:
            self.on_call()
        if (self.stop is not None and self.stop(messages)) or self.calls >= self.max_calls:
            message = AIMessage(content=FINAL)
        else:
            self.calls += 1
            message = AIMessage(
                content="",
                tool_calls=[{"name": "grep", "args": dict(LOOP_ARGS), "id": f"call-{self.calls}"}],
            )
        return ChatResult(generations=[ChatGeneration(message=message)])


def _model(**kwargs: Any) -> ScriptedChat:
    return ScriptedChat(**kwargs)


def _agent(rig: Rig, model: ScriptedChat, **hooks: Any) -> Any:
    @tool
    def grep(pattern: str, path: str) -> str:
        """Search files under ``path`` for ``pattern``."""
        return rig.grep(pattern, path)

    hooks.setdefault("pre_model_hook", cycleguard_pre_model_hook())
    return create_react_agent(model, [grep], **hooks)


def _tool_sessions(rig: Rig) -> set[str]:
    """The session keys the guard saw the tool calls under (from its signal spans)."""
    return {
        s.attributes["cycleguard.session"]
        for s in rig.exporter.get_finished_spans()
        if s.name == "cycleguard.signal"
    }


def test_corrective_message_is_appended_to_the_next_model_call(rig):
    rig = rig()
    model = _model(max_calls=TERM_AT + 2)
    result = _agent(rig, model).invoke(QUESTION, _config("t-1"))
    assert result["messages"][-1].content == FINAL
    inputs = model.inputs
    assert [_has_mark(i) for i in inputs] == [False] * TERM_AT + [True] + [False] * 2
    before, healed, after = inputs[TERM_AT - 1], inputs[TERM_AT], inputs[TERM_AT + 1]
    assert healed[: len(before)] == before  # earlier messages unchanged
    assert isinstance(healed[-2], ToolMessage) and healed[-2].tool_call_id == f"call-{TERM_AT}"
    injected = healed[-1]
    assert isinstance(injected, SystemMessage)
    assert injected.content.startswith(MARK) and "loop" in injected.content
    # That call only: neither the next call nor the graph's state carries it.
    assert after[: len(healed) - 1] == healed[:-1]
    assert not _has_mark(after)
    assert not _has_mark(result["messages"])
    assert _tool_sessions(rig) == {"t-1"}
    assert rig.counters("t-1")["tool_calls"] == TERM_AT + 2


def test_a_run_that_heeds_the_message_finishes_without_a_thread_id(rig):
    rig = rig()
    model = _model(stop=lambda messages: _has_mark(messages[-1:]))
    result = _agent(rig, model).invoke(QUESTION, _config(thread=None))
    assert result["messages"][-1].content == FINAL
    assert len(rig.tool_calls) == TERM_AT
    # keyed by the trace id (no thread id): the hook found the same mailbox
    (session,) = _tool_sessions(rig)
    assert len(session) == 32
    assert rig.human.requests == []
    assert rig.engine.terminations == []


def test_a_run_that_keeps_looping_is_terminated_when_the_human_is_silent(rig):
    rig = rig(Human())
    model = _model()
    with pytest.raises(CycleTerminated) as caught:
        _agent(rig, model).invoke(QUESTION, _config("t-silent"))
    raised_at = time.time()
    assert caught.type is _Terminated  # propagated unwrapped
    lag = assert_terminated_in_time(rig, raised_at)
    print(f"langgraph: terminated {lag:+.3f} s after the deadline")
    assert len(rig.tool_calls) == 2 * TERM_AT
    assert sum(_has_mark(i[-1:]) for i in model.inputs) == 1
    assert_progress_saved(rig, caught.value, "t-silent")


def test_a_human_modify_instruction_arrives_as_a_user_message_async(rig):
    rig = rig(Human(HumanDecision("modify", message=INSTRUCTION)))
    model = _model(stop=lambda messages: messages[-1].content == INSTRUCTION)
    agent = _agent(rig, model)
    result = asyncio.run(agent.ainvoke(QUESTION, _config("t-modify")))
    assert result["messages"][-1].content == FINAL
    assert len(rig.human.requests) == 1
    assert len(rig.tool_calls) == 2 * TERM_AT
    last, before = model.inputs[-1], model.inputs[-2]
    assert last[: len(before)] == before
    assert isinstance(last[-2], ToolMessage)
    assert isinstance(last[-1], HumanMessage) and last[-1].content == INSTRUCTION
    assert rig.engine.terminations == []


def test_post_model_hook_stops_tools_after_termination(rig):
    rig = rig()

    def terminate() -> None:
        rig.engine.mailboxes.terminate(
            "t-post", _Terminated("t-post", "cycle_detected", "stopped by test", None)
        )

    model = _model(on_call=terminate)
    agent = _agent(rig, model, post_model_hook=cycleguard_post_model_hook())
    with pytest.raises(CycleTerminated) as caught:
        agent.invoke(QUESTION, _config("t-post"))
    assert caught.value.user_message == "stopped by test"
    assert len(model.inputs) == 1
    assert rig.tool_calls == []


def test_composes_with_a_user_hook_and_pins_a_session(rig):
    rig = rig()
    rig.engine.mailboxes.post("pinned", Directive("system", f"{MARK} pinned", "identical_call"))
    trimmed = SystemMessage("Be brief.")

    def my_hook(state: dict[str, Any]) -> dict[str, Any]:
        return {"llm_input_messages": [trimmed, *state["messages"][-1:]]}

    model = _model(max_calls=0)
    hook = cycleguard_pre_model_hook(session="pinned", inner=my_hook)
    result = _agent(rig, model, pre_model_hook=hook).invoke(QUESTION, _config("t-other"))
    assert result["messages"][-1].content == FINAL
    (sent,) = model.inputs
    assert [type(m) for m in sent] == [SystemMessage, HumanMessage, SystemMessage]
    assert sent[0].content == "Be brief."
    assert sent[-1].content == f"{MARK} pinned"
