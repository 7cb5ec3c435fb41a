"""The generic enforcement points: check(), checkpoint() and the guard_tool decorator."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

import otel_cycleguard
from otel_cycleguard import CycleGuard, CycleTerminated, Directive, install, load_config
from otel_cycleguard.escalate import DirectoryProgressStore
from otel_cycleguard.escalate.engine import EscalationEngine
from otel_cycleguard.integrations.generic import current_session, set_default_engine

AGENT_ATTRS = {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": "coder",
    "gen_ai.conversation.id": "conv-7",
}


@pytest.fixture(autouse=True)
def _no_default_engine() -> Iterator[None]:
    set_default_engine(None)
    yield
    set_default_engine(None)


@pytest.fixture(name="engine")
def fixture_engine(tmp_path: Path) -> Iterator[EscalationEngine]:
    engine = EscalationEngine(
        CycleGuard(load_config(environ={})), store=DirectoryProgressStore(tmp_path)
    )
    yield engine
    engine.shutdown(wait=False)


def test_check_without_an_installed_guard_is_a_no_op() -> None:
    assert otel_cycleguard.check("anything") == []
    assert otel_cycleguard.check() == []  # no span, no engine
    otel_cycleguard.checkpoint({"x": 1})  # does not raise


def test_check_returns_and_consumes_the_sessions_directives(engine: EscalationEngine) -> None:
    engine.mailboxes.post("s1", Directive("system", "stop repeating"))
    assert otel_cycleguard.check("s1", engine=engine) == [Directive("system", "stop repeating")]
    assert otel_cycleguard.check("s1", engine=engine) == []


def test_check_raises_once_terminated(engine: EscalationEngine) -> None:
    error = CycleTerminated("s1", "cycle_detected", "stopped", "ref.json")
    engine.mailboxes.terminate("s1", error)
    with pytest.raises(CycleTerminated) as caught:
        otel_cycleguard.check("s1", engine=engine)
    assert caught.value is error
    assert otel_cycleguard.check("s2", engine=engine) == []


def test_checkpoint_registers_the_payload_for_the_session(engine: EscalationEngine) -> None:
    otel_cycleguard.checkpoint({"step": 3}, "s1", engine=engine)
    otel_cycleguard.checkpoint({"step": 4}, "s1", engine=engine)
    assert engine._checkpoints["s1"] == {"step": 4}


def test_guard_tool_runs_the_tool_until_terminated(engine: EscalationEngine) -> None:
    calls: list[int] = []

    @otel_cycleguard.guard_tool(session="s1", engine=engine)
    def tool(x: int) -> int:
        """Doubles."""
        calls.append(x)
        return 2 * x

    assert tool(2) == 4
    assert tool.__name__ == "tool" and tool.__doc__ == "Doubles."
    engine.mailboxes.terminate("s1", CycleTerminated("s1", "cycle_detected", "stopped", None))
    with pytest.raises(CycleTerminated):
        tool(3)
    assert calls == [2]


def test_guard_tool_guards_async_tools(engine: EscalationEngine) -> None:
    @otel_cycleguard.guard_tool(session="s1", engine=engine)
    async def fetch(url: str) -> str:
        return url.upper()

    assert asyncio.run(fetch("a")) == "A"
    engine.mailboxes.terminate("s1", CycleTerminated("s1", "cycle_detected", "stopped", None))
    with pytest.raises(CycleTerminated):
        asyncio.run(fetch("b"))


def test_session_defaults_to_the_current_spans_conversation(tmp_path: Path) -> None:
    provider = TracerProvider()
    processor = install(
        load_config(environ={}),
        tracer_provider=provider,
        progress_store=DirectoryProgressStore(tmp_path),
    )
    try:
        tracer = provider.get_tracer("agent")
        processor.escalation.mailboxes.post("conv-7", Directive("system", "hello"))
        with tracer.start_as_current_span("invoke_agent coder", attributes=AGENT_ATTRS):
            assert current_session() == "conv-7"
            otel_cycleguard.checkpoint({"done": 1})
            assert otel_cycleguard.check() == [Directive("system", "hello")]
        assert processor.escalation._checkpoints["conv-7"] == {"done": 1}
        with tracer.start_as_current_span("plain"):  # no agent: the trace id is the session
            assert current_session() is not None and len(current_session()) == 32
    finally:
        processor.escalation.shutdown(wait=False)
        provider.shutdown()
