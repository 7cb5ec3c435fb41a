"""The escalation protocol (docs/detection.md) driven through the real stack.

A real SDK ``TracerProvider`` with ``install(...)``; the agent emits an ``invoke_agent`` span
carrying ``gen_ai.conversation.id`` and ``execute_tool`` child spans, and calls
``otel_cycleguard.check()`` between tool calls, as a guarded agent loop does. Metrics are read
from a fresh registry per test and asserted exactly.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from prometheus_client import CollectorRegistry

import otel_cycleguard
from otel_cycleguard import CycleTerminated, Directive, install, load_config
from otel_cycleguard.escalate import (
    CallableEscalator,
    Decision,
    DirectoryProgressStore,
    EscalationRequest,
    HumanDecision,
)
from otel_cycleguard.escalate.engine import EscalationEngine
from otel_cycleguard.integrations.generic import set_default_engine
from otel_cycleguard.metrics import CycleGuardMetrics

SESSION = "conv-42"
AGENT = "coder"
CYCLE_MESSAGE = (
    "The agent stopped after repeating the same operation. "
    "You can resume the task or review the completed work."
)

# general profile: identical_call 3 / 5, error_streak 5 / 8


@dataclass
class Stack:
    """The installed guard plus an agent that drives it."""

    provider: TracerProvider
    engine: EscalationEngine
    processor: Any
    registry: CollectorRegistry
    store: DirectoryProgressStore
    directives: list[Directive] = field(default_factory=list)

    @property
    def tracer(self) -> Any:
        return self.provider.get_tracer("agent-under-test")

    @contextmanager
    def agent(self, session: str = SESSION, name: str = AGENT) -> Iterator[None]:
        attrs = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": name,
            "gen_ai.conversation.id": session,
        }
        with self.tracer.start_as_current_span(f"invoke_agent {name}", attributes=attrs):
            yield

    def tool(
        self,
        tool: str = "grep",
        args: Any = '{"pattern": "TODO"}',
        result: str = "no matches",
        *,
        error: bool = False,
    ) -> None:
        attrs = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.arguments": args if isinstance(args, str) else json.dumps(args),
            "gen_ai.tool.call.result": result,
        }
        with self.tracer.start_as_current_span(f"execute_tool {tool}", attributes=attrs) as span:
            if error:
                span.set_status(Status(StatusCode.ERROR, "failed"))

    def step(self, *args: Any, **kwargs: Any) -> list[Directive]:
        """One agent step: a tool call, then the enforcement point."""
        self.tool(*args, **kwargs)
        got = otel_cycleguard.check()
        self.directives.extend(got)
        return got

    def count(self, session: str = SESSION, dimension: str = "identical_call") -> int:
        return self.processor.guard.counters(session)[dimension]

    def metric(self, name: str, **labels: str) -> float:
        self.processor.force_flush()  # install() detects in the background: catch up first
        labels.setdefault("agent", AGENT)
        value = self.registry.get_sample_value(f"cycleguard_{name}_total", labels)
        return 0.0 if value is None else value

    def steps_to_first_cycle(self) -> tuple[float, float]:
        labels = {"agent": AGENT}
        count = self.registry.get_sample_value("cycleguard_steps_to_first_cycle_count", labels)
        total = self.registry.get_sample_value("cycleguard_steps_to_first_cycle_sum", labels)
        return count or 0.0, total or 0.0

    def records(self) -> list[dict[str, Any]]:
        return [json.loads((self.store.path / ref).read_text()) for ref in self.store.refs()]


@pytest.fixture(name="make_stack")
def fixture_make_stack(tmp_path: Path) -> Iterator[Callable[..., Stack]]:
    made: list[Stack] = []

    def make(escalator: Any = None, *, config: dict[str, Any] | None = None, **esc: Any) -> Stack:
        esc.setdefault("hitl_timeout_s", 5.0)
        overrides = dict(config or {})
        overrides["escalation"] = esc
        registry = CollectorRegistry()
        store = DirectoryProgressStore(tmp_path / f"progress-{len(made)}")
        provider = TracerProvider()
        processor = install(
            load_config(environ={}, **overrides),
            tracer_provider=provider,
            escalator=escalator,
            progress_store=store,
            metrics=CycleGuardMetrics(registry),
        )
        assert processor is not None
        stack = Stack(provider, processor.escalation, processor, registry, store)
        made.append(stack)
        return stack

    yield make
    for stack in made:
        stack.engine.shutdown(wait=False)
        stack.provider.shutdown()
    set_default_engine(None)


def identical(stack: Stack, n: int) -> list[list[Directive]]:
    return [stack.step() for _ in range(n)]


def failing(stack: Stack, n: int, start: int = 0) -> list[list[Directive]]:
    # Each run fails differently (different arguments and output): only error_streak counts.
    return [
        stack.step("bash", {"cmd": f"pytest -k case{i}"}, f"FAILED case{i}", error=True)
        for i in range(start, start + n)
    ]


def answering(answer: Any, asked: list[EscalationRequest] | None = None) -> CallableEscalator:
    def fn(request: EscalationRequest) -> Any:
        if asked is not None:
            asked.append(request)
        return answer

    return CallableEscalator(fn)


# --------------------------------------------------------------------------- WARN / first TERM


def test_warn_annotates_only_no_directive_no_reset(make_stack: Callable[..., Stack]) -> None:
    stack = make_stack()
    with stack.agent():
        got = identical(stack, 4)
    assert got == [[], [], [], []]
    assert stack.count() == 4  # not reset by the WARN at 3
    assert stack.metric("signals", dimension="identical_call", level="warn") == 1
    assert stack.metric("signals", dimension="identical_call", level="term") == 0
    assert stack.metric("self_heals", dimension="identical_call") == 0
    assert stack.metric("sessions_with_cycle") == 0


def test_soft_hint_on_warn_queues_a_system_note(make_stack: Callable[..., Stack]) -> None:
    stack = make_stack(soft_hint_on_warn=True)
    with stack.agent():
        got = identical(stack, 3)
    assert got[:2] == [[], []]
    assert len(got[2]) == 1 and got[2][0].role == "system"
    assert got[2][0].dimension == "identical_call"
    assert stack.count() == 3
    assert stack.metric("self_heals", dimension="identical_call") == 0


def test_first_term_queues_one_system_message_and_resets_dimension(
    make_stack: Callable[..., Stack],
) -> None:
    stack = make_stack()
    with stack.agent():
        got = identical(stack, 5)
        assert stack.count() == 0
        after = stack.step()
        assert stack.count() == 1  # the next identical call counts 1 again
    assert got[:4] == [[], [], [], []]
    assert len(got[4]) == 1
    message = got[4][0]
    assert message.role == "system"
    assert message.dimension == "identical_call"
    assert "grep" in message.content and "loop" in message.content
    assert after == []  # consumed once, not repeated
    assert stack.metric("self_heals", dimension="identical_call") == 1
    assert stack.metric("human_escalations", dimension="identical_call") == 0
    assert stack.metric("signals", dimension="identical_call", level="term") == 1
    assert stack.metric("sessions_with_cycle") == 1
    assert stack.steps_to_first_cycle() == (1.0, 5.0)
    assert stack.records() == []


def test_one_dimensions_self_heal_does_not_use_up_anothers(
    make_stack: Callable[..., Stack],
) -> None:
    asked: list[EscalationRequest] = []
    stack = make_stack(answering("terminate", asked))
    with stack.agent():
        heal1 = identical(stack, 5)
        heal2 = failing(stack, 8)
        assert stack.count(dimension="error_streak") == 0
        stack.step("bash", {"cmd": "pytest -k again"}, "FAILED again", error=True)
        assert stack.count(dimension="error_streak") == 1  # global and per-tool both reset
    assert [d.dimension for d in heal1[4]] == ["identical_call"]
    assert [d.dimension for d in heal2[7]] == ["error_streak"]
    assert all(d.role == "system" for d in heal2[7])
    assert asked == []
    assert stack.metric("self_heals", dimension="identical_call") == 1
    assert stack.metric("self_heals", dimension="error_streak") == 1
    assert stack.metric("human_escalations", dimension="error_streak") == 0
    assert stack.metric("sessions_with_cycle") == 1  # a session counts once
    assert stack.steps_to_first_cycle() == (1.0, 5.0)


def test_sessions_escalate_independently(make_stack: Callable[..., Stack]) -> None:
    stack = make_stack()
    with stack.agent("a"):
        identical(stack, 5)
    with stack.agent("b"):
        got = identical(stack, 5)
    assert len(got[4]) == 1  # b self-heals too; a's self-heal is not b's
    assert stack.metric("self_heals", dimension="identical_call") == 2
    assert stack.metric("human_escalations", dimension="identical_call") == 0
    assert stack.metric("sessions_with_cycle") == 2


# --------------------------------------------------------------------------- second TERM: HITL


def test_second_term_in_same_dimension_asks_a_human_with_evidence(
    make_stack: Callable[..., Stack],
) -> None:
    asked: list[EscalationRequest] = []
    stack = make_stack(answering("continue", asked))
    with stack.agent():
        identical(stack, 5)
        assert asked == []
        identical(stack, 5)
    assert len(asked) == 1
    request = asked[0]
    assert request.session == SESSION and request.agent == AGENT
    assert request.dimension == "identical_call"
    assert request.streak == 5 and request.threshold == 5
    assert request.evidence and {e["tool"] for e in request.evidence} == {"grep"}
    assert "TODO" not in json.dumps(request.to_payload())  # hashes, never raw arguments
    assert stack.metric("human_escalations", dimension="identical_call") == 1
    assert stack.metric("self_heals", dimension="identical_call") == 1


def test_continue_resets_and_the_run_goes_on(make_stack: Callable[..., Stack]) -> None:
    asked: list[EscalationRequest] = []
    stack = make_stack(answering("continue", asked))
    with stack.agent():
        identical(stack, 10)
        assert stack.count() == 0
        stack.step()
        assert stack.count() == 1
        identical(stack, 4)  # the next TERM asks again: continue keeps the HITL rung
    assert len(asked) == 2
    assert stack.metric("hitl_decisions", decision="continue") == 2
    assert stack.metric("human_escalations", dimension="identical_call") == 2
    assert stack.metric("self_heals", dimension="identical_call") == 1
    assert stack.metric("terminations", reason="cycle_detected") == 0
    assert stack.records() == []


def test_modify_injects_the_instruction_as_a_user_directive(
    make_stack: Callable[..., Stack],
) -> None:
    decision = HumanDecision(Decision.MODIFY, "Search the index instead of grepping.")
    stack = make_stack(answering(decision))
    with stack.agent():
        got = identical(stack, 10)
        assert stack.count() == 0
        later = stack.step()
    assert got[9] == [Directive("user", "Search the index instead of grepping.", "identical_call")]
    assert later == []
    assert stack.metric("hitl_decisions", decision="modify") == 1
    assert stack.metric("terminations", reason="cycle_detected") == 0


def test_terminate_stops_the_run_with_reason_and_progress_ref(
    make_stack: Callable[..., Stack],
) -> None:
    stack = make_stack(answering("terminate"))
    with stack.agent():
        identical(stack, 9)
        with pytest.raises(CycleTerminated) as caught:
            stack.step()
        with pytest.raises(CycleTerminated):  # every later enforcement point refuses too
            otel_cycleguard.check()
    error = caught.value
    assert error.session == SESSION
    assert error.reason == "cycle_detected"
    assert error.user_message == CYCLE_MESSAGE
    assert error.progress_ref is not None
    record = stack.store.load(error.progress_ref)
    assert record.hitl_decision == "terminate" and record.resumable
    assert otel_cycleguard.resume(error.progress_ref, stack.store).session == SESSION
    assert stack.metric("hitl_decisions", decision="terminate") == 1
    assert stack.metric("terminations", reason="cycle_detected") == 1
    assert stack.engine.terminations == [(SESSION, error.progress_ref)]


def test_guard_tool_refuses_to_run_once_terminated(make_stack: Callable[..., Stack]) -> None:
    stack = make_stack(answering("terminate"))
    ran: list[str] = []

    @otel_cycleguard.guard_tool
    def deploy(target: str) -> str:
        ran.append(target)
        return "ok"

    with stack.agent():
        for _ in range(10):
            stack.tool()
        with pytest.raises(CycleTerminated):
            deploy("prod")
    assert ran == []


def test_silence_past_the_deadline_terminates_within_deadline_plus_1s(
    make_stack: Callable[..., Stack],
) -> None:
    never = threading.Event()
    timeout = 0.5

    def silent(request: EscalationRequest) -> str:
        never.wait(30)
        return "continue"

    stack = make_stack(CallableEscalator(silent), hitl_timeout_s=timeout)
    try:
        with stack.agent():
            identical(stack, 9)
            stack.tool()
            started = time.monotonic()
            with pytest.raises(CycleTerminated) as caught:
                otel_cycleguard.check()
            elapsed = time.monotonic() - started
    finally:
        never.set()
    assert elapsed < timeout + 1.0
    assert stack.store.load(caught.value.progress_ref).hitl_decision == "timeout"
    assert stack.metric("hitl_decisions", decision="timeout") == 1
    assert stack.metric("hitl_decisions", decision="continue") == 0
    assert stack.metric("terminations", reason="cycle_detected") == 1


class _IgnoresDeadline:
    """A custom escalator that breaks the protocol: it blocks long past its deadline."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def ask(self, request: EscalationRequest, deadline_s: float) -> HumanDecision:
        self.release.wait(30)
        return HumanDecision(Decision.CONTINUE)


def test_deadline_holds_even_when_the_escalator_ignores_it(
    make_stack: Callable[..., Stack],
) -> None:
    escalator = _IgnoresDeadline()
    timeout = 0.5
    stack = make_stack(escalator, hitl_timeout_s=timeout)
    try:
        with stack.agent():
            identical(stack, 9)
            stack.tool()
            started = time.monotonic()
            with pytest.raises(CycleTerminated):
                otel_cycleguard.check()
            elapsed = time.monotonic() - started
    finally:
        escalator.release.set()
    assert elapsed < timeout + 1.0
    # the late "continue" must not be applied or counted on top of the timeout
    stack.engine.shutdown(wait=True)
    assert stack.metric("hitl_decisions", decision="timeout") == 1
    assert stack.metric("hitl_decisions", decision="continue") == 0
    assert stack.metric("terminations", reason="cycle_detected") == 1
    with stack.agent(), pytest.raises(CycleTerminated):
        otel_cycleguard.check()


def test_every_concurrent_escalation_reaches_a_human(make_stack: Callable[..., Stack]) -> None:
    """Pending questions in other sessions must not keep a new one from being asked."""
    asked: list[str] = []
    lock = threading.Lock()
    release = threading.Event()

    def slow_human(request: EscalationRequest) -> str:
        with lock:
            asked.append(request.session)
        release.wait(10)
        return "continue"

    stack = make_stack(CallableEscalator(slow_human), hitl_timeout_s=10.0)
    sessions = [f"s{i}" for i in range(6)]
    try:
        for session in sessions:
            with stack.agent(session):
                for _ in range(10):
                    stack.tool()  # observe-only here: no check(), so nothing blocks
        deadline = time.monotonic() + 2.0
        while len(asked) < len(sessions) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        release.set()
    assert sorted(asked) == sessions


def test_an_escalator_that_raises_terminates(make_stack: Callable[..., Stack]) -> None:
    class Broken:
        def ask(self, request: EscalationRequest, deadline_s: float) -> HumanDecision:
            raise ConnectionError("pager service down")

    stack = make_stack(Broken())
    with stack.agent():
        identical(stack, 9)
        with pytest.raises(CycleTerminated) as caught:
            stack.step()
    assert stack.store.load(caught.value.progress_ref).hitl_decision == "error"
    assert stack.metric("hitl_decisions", decision="error") == 1
    assert stack.metric("terminations", reason="cycle_detected") == 1


def test_a_raising_callable_escalator_terminates(make_stack: Callable[..., Stack]) -> None:
    def fn(request: EscalationRequest) -> str:
        raise RuntimeError("boom")

    stack = make_stack(CallableEscalator(fn))
    with stack.agent():
        identical(stack, 9)
        with pytest.raises(CycleTerminated):
            stack.step()
    assert stack.metric("hitl_decisions", decision="error") == 1
    assert stack.metric("terminations", reason="cycle_detected") == 1


def test_no_escalator_terminates_at_the_second_term(make_stack: Callable[..., Stack]) -> None:
    stack = make_stack()
    with stack.agent():
        got = identical(stack, 9)
        started = time.monotonic()
        with pytest.raises(CycleTerminated) as caught:
            stack.step()
        assert time.monotonic() - started < 1.0  # nobody to wait for
    assert len(got[4]) == 1
    assert caught.value.reason == "cycle_detected"
    assert stack.metric("self_heals", dimension="identical_call") == 1
    # nobody was asked: no human escalation and no decision are counted, only the stop
    assert stack.metric("human_escalations", dimension="identical_call") == 0
    assert stack.metric("hitl_decisions", decision="timeout") == 0
    assert stack.metric("terminations", reason="cycle_detected") == 1
    assert stack.metric("breaks_succeeded", dimension="identical_call") == 0
    assert stack.records()[0]["hitl_decision"] == "none"


# --------------------------------------------------------------------------- break success


def test_break_success_counted_when_the_agent_span_ends(make_stack: Callable[..., Stack]) -> None:
    """The processor ends the session with its root agent span; a later end adds nothing."""
    stack = make_stack()
    with stack.agent():
        identical(stack, 5)
        for i in range(6):
            stack.step("read", {"path": f"src/m{i}.py"}, f"contents {i}")
        assert stack.metric("breaks_succeeded", dimension="identical_call") == 0
    assert stack.metric("breaks_succeeded", dimension="identical_call") == 1
    stack.engine.end_session(SESSION)  # reported once
    assert stack.metric("breaks_succeeded", dimension="identical_call") == 1


def test_failed_break_is_not_counted(make_stack: Callable[..., Stack]) -> None:
    stack = make_stack(answering("continue"))
    with stack.agent():
        identical(stack, 10)
    stack.engine.end_session(SESSION)
    assert stack.metric("self_heals", dimension="identical_call") == 1
    assert stack.metric("breaks_succeeded", dimension="identical_call") == 0


def test_break_success_reported_after_break_window_calls(
    make_stack: Callable[..., Stack],
) -> None:
    stack = make_stack(break_window=3)
    with stack.agent():
        identical(stack, 5)
        for i in range(2):
            stack.step("read", {"path": f"src/m{i}.py"}, f"contents {i}")
        assert stack.metric("breaks_succeeded", dimension="identical_call") == 0
        for i in range(2, 6):  # healthy calls, no signal at all
            stack.step("read", {"path": f"src/m{i}.py"}, f"contents {i}")
        assert stack.metric("breaks_succeeded", dimension="identical_call") == 1
    stack.engine.end_session(SESSION)
    assert stack.metric("breaks_succeeded", dimension="identical_call") == 1


def test_term_inside_break_window_is_a_failed_break(make_stack: Callable[..., Stack]) -> None:
    stack = make_stack(answering("continue"), break_window=5)
    with stack.agent():
        identical(stack, 10)  # the second TERM is 5 calls after the self-heal
        for i in range(10):
            stack.step("read", {"path": f"src/m{i}.py"}, f"contents {i}")
    stack.engine.end_session(SESSION)
    assert stack.metric("breaks_succeeded", dimension="identical_call") == 0


# --------------------------------------------------------------------------- observe-only


def test_observe_only_warning_logged_exactly_once(
    make_stack: Callable[..., Stack], caplog: pytest.LogCaptureFixture
) -> None:
    stack = make_stack()
    caplog.set_level(logging.INFO, logger="otel_cycleguard")
    for session in ("a", "b"):
        with stack.agent(session):
            for _ in range(5):
                stack.tool()  # no check(): nobody consumes directives
            for i in range(8):
                stack.tool("bash", {"cmd": f"make t{i}"}, f"error {i}", error=True)
    stack.processor.force_flush()
    warnings = [r for r in caplog.records if "observe-only" in r.getMessage()]
    assert len(warnings) == 1
    assert warnings[0].levelno == logging.WARNING
    assert stack.metric("self_heals", dimension="identical_call") == 2
    assert stack.metric("self_heals", dimension="error_streak") == 2


def test_no_observe_only_warning_when_check_runs(
    make_stack: Callable[..., Stack], caplog: pytest.LogCaptureFixture
) -> None:
    stack = make_stack()
    caplog.set_level(logging.INFO, logger="otel_cycleguard")
    with stack.agent():
        identical(stack, 5)
    assert not [r for r in caplog.records if "observe-only" in r.getMessage()]
    steps = [getattr(r, "cycleguard", {}).get("step") for r in caplog.records]
    assert steps.count("warn") == 1 and steps.count("self_heal") == 1  # one line per step


# --------------------------------------------------------------------------- progress


def test_progress_file_holds_evidence_counters_and_checkpoint(
    make_stack: Callable[..., Stack],
) -> None:
    stack = make_stack(answering("terminate"))
    with stack.agent():
        otel_cycleguard.checkpoint({"done": ["parse", "index"], "next": "report"})
        identical(stack, 9)
        with pytest.raises(CycleTerminated) as caught:
            stack.step()
    [data] = stack.records()
    assert caught.value.progress_ref in stack.store.refs(SESSION)
    assert data["schema"] == "cycleguard.termination/v1"
    assert data["session"] == SESSION and data["agent"] == AGENT
    assert data["reason"] == "cycle_detected" and data["user_message"] == CYCLE_MESSAGE
    assert data["resumable"] is True
    assert data["dimension"] == "identical_call"
    assert data["hitl_decision"] == "terminate"
    assert data["checkpoint"] == {"done": ["parse", "index"], "next": "report"}
    assert data["evidence"] and all(e["tool"] == "grep" for e in data["evidence"])
    assert all(len(e["args_hash"]) >= 8 for e in data["evidence"])
    assert "TODO" not in json.dumps(data["evidence"])
    assert data["counters"]["tool_calls"] == 10
    assert data["counters"]["identical_call"] == 5


def test_non_json_checkpoint_still_saves_the_rest(make_stack: Callable[..., Stack]) -> None:
    stack = make_stack(answering("terminate"))
    with stack.agent():
        otel_cycleguard.checkpoint({"handle": object()})
        identical(stack, 9)
        with pytest.raises(CycleTerminated) as caught:
            stack.step()
    assert caught.value.progress_ref is not None
    [data] = stack.records()
    assert data["checkpoint"] is None
    assert data["evidence"] and data["counters"]["tool_calls"] == 10
    assert stack.metric("terminations", reason="cycle_detected") == 1
    assert not list(stack.store.path.glob(".tmp-*"))


def test_error_streak_terminates_with_its_reason_and_message(
    make_stack: Callable[..., Stack],
) -> None:
    stack = make_stack()
    with stack.agent():
        healed = failing(stack, 8)
        failing(stack, 7, start=8)
        with pytest.raises(CycleTerminated) as caught:
            failing(stack, 1, start=15)
    assert [d.dimension for d in healed[7]] == ["error_streak"]
    assert caught.value.reason == "error_streak_terminated"
    assert caught.value.user_message == (
        "The agent stopped after the same step kept failing. "
        "You can resume the task or review the completed work."
    )
    [data] = stack.records()
    assert data["reason"] == "error_streak_terminated"
    assert all(e["error"] for e in data["evidence"])
    assert stack.metric("self_heals", dimension="error_streak") == 1
    assert stack.metric("human_escalations", dimension="error_streak") == 0  # no escalator
    assert stack.metric("terminations", reason="error_streak_terminated") == 1
    assert stack.metric("terminations", reason="cycle_detected") == 0


def test_budget_exceeded_terminates_with_its_reason_and_message(
    make_stack: Callable[..., Stack],
) -> None:
    """The first TERM self-heals and starts a fresh budget window (a self-heal resets counters);
    exceeding it again goes to the (absent) human and terminates."""
    budget = {"enabled": True, "max_tool_calls": 3}
    stack = make_stack(config={"profiles": {"general": {"budget": budget}}})
    with stack.agent():
        got = [stack.step("read", {"path": f"f{i}"}, f"body {i}") for i in range(5)]
        with pytest.raises(CycleTerminated) as caught:
            stack.step("read", {"path": "f5"}, "body 5")  # the second window's third call
    assert [d.dimension for d in got[2]] == ["budget"]  # first window used up: self-heal
    assert [d for step in got[3:] for d in step] == []  # the fresh window is quiet
    assert stack.metric("self_heals", dimension="budget") == 1
    assert caught.value.reason == "budget_exceeded"
    assert caught.value.user_message == (
        "The agent stopped after reaching its configured limit on steps, tokens or time. "
        "You can resume the task or review the completed work."
    )
    assert stack.metric("terminations", reason="budget_exceeded") == 1
    assert stack.records()[0]["reason"] == "budget_exceeded"
