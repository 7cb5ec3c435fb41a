"""pydantic-ai: CycleGuardCapability delivers corrective messages, pauses for a human, stops.

Driven offline by a ``FunctionModel`` (a scripted model that sees every request), with
pydantic-ai's own instrumentation exporting to the guarded provider.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

from otel_cycleguard import CycleTerminated
from otel_cycleguard.escalate.directives import CycleTerminated as _Terminated
from otel_cycleguard.escalate.hitl import HumanDecision
from otel_cycleguard.integrations.generic import current_session
from otel_cycleguard.integrations.pydantic_ai import CycleGuardCapability

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

FINAL = "I could not find it by repeating myself; here is what I know."


def _texts(message: ModelMessage) -> list[tuple[str, str]]:
    """(part kind, text) of a request's system/user parts."""
    out = []
    for part in getattr(message, "parts", []):
        if isinstance(part, SystemPromptPart | UserPromptPart):
            out.append((part.part_kind, str(part.content)))
    return out


def _has_mark(messages: list[ModelMessage]) -> bool:
    return any(MARK in text for m in messages for _, text in _texts(m))


class Script:
    """The scripted model: the same grep every turn until ``stop(messages)`` says answer."""

    def __init__(self, stop: Any = None, max_calls: int = 40) -> None:
        self.requests: list[list[ModelMessage]] = []
        self.sessions: list[str | None] = []
        self.stop = stop or (lambda messages: False)
        self.max_calls = max_calls
        self.calls = 0

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(copy.deepcopy(messages))
        self.sessions.append(current_session())
        if self.stop(messages) or self.calls >= self.max_calls:
            return ModelResponse(parts=[TextPart(FINAL)])
        self.calls += 1
        return ModelResponse(
            parts=[ToolCallPart("grep", dict(LOOP_ARGS), tool_call_id=f"call-{self.calls}")]
        )


def _agent(rig: Rig, script: Script, **capability: Any) -> Agent:
    agent = Agent(
        FunctionModel(script),
        capabilities=[
            Instrumentation(settings=InstrumentationSettings(tracer_provider=rig.provider)),
            CycleGuardCapability(**capability),
        ],
    )

    @agent.tool_plain
    def grep(pattern: str, path: str) -> str:
        """Search files under ``path`` for ``pattern``."""
        return rig.grep(pattern, path)

    return agent


def _session(rig: Rig, script: Script) -> str:
    sessions = {s for s in script.sessions if s is not None}
    assert len(sessions) == 1, sessions
    return sessions.pop()


def test_corrective_message_is_appended_to_the_next_request(make_rig):
    rig = make_rig()
    script = Script(max_calls=TERM_AT + 2)
    result = _agent(rig, script).run_sync("Find where the port is configured.")
    assert result.output == FINAL

    requests = script.requests
    # Request i is sent after i tool calls; the 5th call (TERM) is answered in request 5.
    assert [_has_mark(r) for r in requests] == [False] * TERM_AT + [True] + [False] * 2
    before, healed, after = requests[TERM_AT - 1], requests[TERM_AT], requests[TERM_AT + 1]
    # Earlier messages unchanged: the previous request is a prefix of this one.
    assert healed[: len(before)] == before
    # pydantic-ai joins consecutive requests at the model boundary, so the new message arrives
    # as the last part(s) of the last request, after the tool result it follows.
    last = healed[-1]
    assert isinstance(last, ModelRequest)
    assert [type(p) for p in last.parts[:-1]] == [ToolReturnPart]
    injected = last.parts[-1]
    # A mid-conversation system part: a system message where the profile supports inline
    # system prompts, else (FunctionModel) a <system>-tagged user part.
    assert isinstance(injected, SystemPromptPart | UserPromptPart)
    text = str(injected.content)
    assert text.startswith(MARK) or text.startswith(f"<system>{MARK}"), text
    assert "loop" in text
    # That request only: the next request carries the same history without it.
    assert after[: len(healed) - 1] == healed[:-1]
    assert after[len(healed) - 1].parts == last.parts[:-1]
    assert not _has_mark(after)
    session = _session(rig, script)
    assert rig.counters(session)["tool_calls"] == TERM_AT + 2
    assert rig.engine.mailboxes.enforcement_seen


def test_a_run_that_heeds_the_message_finishes(make_rig):
    rig = make_rig()
    script = Script(stop=lambda messages: _has_mark(messages[-1:]))
    result = _agent(rig, script).run_sync("Find where the port is configured.")
    assert result.output == FINAL
    assert len(rig.tool_calls) == TERM_AT
    assert rig.human.requests == []
    assert rig.engine.terminations == []


def test_a_run_that_keeps_looping_is_terminated_when_the_human_is_silent(make_rig):
    rig = make_rig(Human())  # silent: sleeps past the 2 s deadline
    script = Script()
    agent = _agent(rig, script)
    with pytest.raises(CycleTerminated) as caught:
        agent.run_sync("Find where the port is configured.")
    raised_at = time.time()
    assert caught.type is _Terminated
    lag = assert_terminated_in_time(rig, raised_at)
    print(f"pydantic-ai: terminated {lag:+.3f} s after the deadline")
    # self-heal at call 5, human asked at call 10, no tool ran after that
    assert len(rig.tool_calls) == 2 * TERM_AT
    assert sum(_has_mark(r[-1:]) for r in script.requests) == 1
    assert_progress_saved(rig, caught.value, _session(rig, script))


def test_a_human_modify_instruction_arrives_as_a_user_message(make_rig):
    rig = make_rig(Human(HumanDecision("modify", message=INSTRUCTION)))
    script = Script(stop=lambda messages: any(INSTRUCTION in t for _, t in _texts(messages[-1])))
    result = _agent(rig, script).run_sync("Find where the port is configured.")
    assert result.output == FINAL
    assert len(rig.human.requests) == 1
    assert len(rig.tool_calls) == 2 * TERM_AT
    last = script.requests[-1]
    before = script.requests[-2]
    assert last[: len(before)] == before  # earlier messages unchanged
    assert isinstance(last[-1], ModelRequest)
    assert [type(p) for p in last[-1].parts] == [ToolReturnPart, UserPromptPart]
    assert last[-1].parts[-1].content == INSTRUCTION
    assert not any(INSTRUCTION in t for m in before for _, t in _texts(m))
    assert rig.engine.terminations == []


def test_no_tool_runs_once_the_run_is_terminated(make_rig):
    """Termination landing while the model is answering: before_tool_execute stops the call."""
    rig = make_rig()

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        session = current_session()
        assert session is not None
        rig.engine.mailboxes.terminate(
            session, _Terminated(session, "cycle_detected", "stopped by test", None)
        )
        return ModelResponse(parts=[ToolCallPart("grep", dict(LOOP_ARGS), tool_call_id="c1")])

    agent = Agent(
        FunctionModel(model),
        capabilities=[
            Instrumentation(settings=InstrumentationSettings(tracer_provider=rig.provider)),
            CycleGuardCapability(),
        ],
    )

    @agent.tool_plain
    def grep(pattern: str, path: str) -> str:
        return rig.grep(pattern, path)

    with pytest.raises(CycleTerminated) as caught:
        agent.run_sync("go")
    assert caught.value.user_message == "stopped by test"
    assert rig.tool_calls == []
    tool_spans = [s for s in rig.exporter.get_finished_spans() if s.name == "execute_tool grep"]
    assert [s.status.status_code.name for s in tool_spans] == ["ERROR"]


def test_explicit_session(make_rig):
    """``session=`` pins the mailbox the capability reads."""
    rig = make_rig()
    rig.engine.mailboxes.post("pinned", _directive("system", f"{MARK} pinned"))
    script = Script(max_calls=1)
    result = _agent(rig, script, session="pinned").run_sync("go")
    assert result.output == FINAL
    assert MARK in _texts(script.requests[0][-1])[-1][1]


def _directive(role: str, content: str) -> Any:
    from otel_cycleguard.escalate.directives import Directive

    return Directive(role, content, "identical_call")  # type: ignore[arg-type]
