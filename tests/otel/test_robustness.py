"""Never harm the host: any span is survived, bounds hold, threads don't cross, fork works."""

from __future__ import annotations

import json
import os
import threading
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import StatusCode
from otel_rig import Recorder, agent_attrs, genai_tool

from otel_cycleguard import CycleGuard, CycleGuardSpanProcessor, Level, load_config
from otel_cycleguard.otel import SignalAnnotator

CONVENTION_KEYS = [
    "gen_ai.operation.name",
    "gen_ai.tool.name",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.conversation.id",
    "gen_ai.agent.name",
    "gen_ai.output.messages",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.completion.0.content",
    "llm.output_messages.0.message.content",
    "llm.request.type",
    "openinference.span.kind",
    "tool.name",
    "input.value",
    "output.value",
    "session.id",
    "traceloop.span.kind",
    "traceloop.entity.name",
    "traceloop.entity.input",
    "traceloop.entity.output",
    "traceloop.association.properties.session_id",
    "tool_arguments",
    "tool_response",
    "error.type",
    "cycleguard.state_hash",
    "cycleguard.tool.read_only",
]
CONVENTION_VALUES = [
    "execute_tool",
    "chat",
    "invoke_agent",
    "TOOL",
    "LLM",
    "AGENT",
    "tool",
    "workflow",
    "",
]
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
).map(lambda v: json.dumps(v, allow_nan=True))

VALUES = st.one_of(
    st.text(max_size=64),
    st.sampled_from(CONVENTION_VALUES),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.binary(max_size=64),
    JSONISH,
    st.just("x" * 200_000),
    st.just('{"kwargs": ' * 500),
    st.just('{"args": [1], "kwargs": {"a": [' + "[" * 900 + "]" * 900 + "]}}"),
    st.lists(st.text(max_size=8), max_size=5),
    st.lists(st.integers(), max_size=5),
    st.just("None"),
    st.just("null"),
    # opentelemetry-sdk's extended attributes: maps, and arrays holding maps (unhashable)
    st.dictionaries(st.text(max_size=8), st.text(max_size=8) | st.integers(), max_size=3),
    st.lists(st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=2), max_size=2),
)
KEYS = st.one_of(st.sampled_from(CONVENTION_KEYS), st.text(min_size=1, max_size=40))
SPAN = st.fixed_dictionaries(
    {
        "name": st.one_of(
            st.sampled_from(
                ["execute_tool grep", "running tool", "handoff to x", "cycleguard.signal", "chat"]
            ),
            st.text(max_size=30),
        ),
        "start": st.dictionaries(KEYS, VALUES, max_size=6),
        "end": st.dictionaries(KEYS, VALUES, max_size=6),
        "error": st.booleans(),
        "exception": st.booleans(),
        "event": st.one_of(st.none(), st.dictionaries(KEYS, VALUES, max_size=3)),
        "depth": st.integers(0, 3),
    }
)


@pytest.fixture(name="raise_internal")
def fixture_raise_internal(monkeypatch):
    """Any internal error re-raises instead of being swallowed, so the test sees it."""
    monkeypatch.setenv("CYCLEGUARD_RAISE_INTERNAL_ERRORS", "1")


class TestFuzzedSpans:
    """Random attribute names, types and sizes never raise and never break the bounds."""

    @settings(
        max_examples=150,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(spans=st.lists(SPAN, min_size=1, max_size=12))
    def test_random_spans_never_raise_and_bounds_hold(self, raise_internal, spans):
        """Through a real provider with the processor and the annotator, nothing escapes."""
        provider = TracerProvider()
        guard = CycleGuard(
            load_config(environ={}, max_sessions=4), observers=[SignalAnnotator(provider)]
        )
        processor = CycleGuardSpanProcessor(guard, max_open_spans=5)
        provider.add_span_processor(processor)
        tracer = provider.get_tracer("fuzz")
        open_spans = []
        for spec in spans:
            parent = open_spans[-1] if open_spans and spec["depth"] else None
            ctx = trace.set_span_in_context(parent) if parent is not None else None
            span = tracer.start_span(spec["name"], context=ctx, attributes=spec["start"])
            span.set_attributes(spec["end"])
            if spec["event"] is not None:
                span.add_event("gen_ai.choice", attributes=spec["event"])
            if spec["exception"]:
                span.record_exception(ValueError("fuzz"))
            if spec["error"]:
                span.set_status(StatusCode.ERROR)
            if spec["depth"] > 1:
                open_spans.append(span)  # keep it open a while: children nest under it
            else:
                span.end()
            assert len(processor.guard) <= 4
            assert processor.open_spans() <= 5
        for span in reversed(open_spans):
            span.end()
        assert processor.open_spans() == 0
        provider.shutdown()


@pytest.mark.parametrize("background", [False, True])
def test_map_and_array_values_in_every_key_are_read_not_raised(raise_internal, background):
    """Every key the guard reads, set to each value shape the SDK accepts: nothing raises and
    the well-formed tool calls beside them are all counted."""
    provider = TracerProvider()
    processor = CycleGuardSpanProcessor(config=load_config(environ={}), background=background)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("shapes")
    shapes = [{"name": "execute_tool"}, ({"a": 1}, "chat"), b"\x00", 2.5, True, ("TOOL",)]
    shapes.append("[" * 50_000)  # JSON text nested past any parser's recursion limit
    model_keys = ["gen_ai.input.messages", "llm.input_messages.0.message.content"]
    with tracer.start_as_current_span(
        "invoke_agent a", attributes=agent_attrs("a", **{"gen_ai.conversation.id": "shapes"})
    ):
        for shape in shapes:
            for key in CONVENTION_KEYS + model_keys:
                with tracer.start_as_current_span("execute_tool x", attributes={key: shape}):
                    pass
                with tracer.start_as_current_span(
                    "chat m", attributes={"gen_ai.operation.name": "chat", key: shape}
                ):
                    pass
            with tracer.start_as_current_span("execute_tool grep", attributes=genai_tool("grep")):
                pass
    processor.force_flush()
    assert processor.guard.counters("shapes")["tool_calls"] >= len(shapes)
    provider.shutdown()


class TestConcurrentSessions:
    """16 threads × many sessions: no lost or crossed session state."""

    def test_every_session_gets_exactly_its_own_signals(self, raise_internal):
        """Session i repeats one call 5 times: exactly one WARN and one TERM per session."""
        threads_n, per_thread = 16, 1_000 // 16 + 1  # 16 threads, 1,008 sessions in all
        recorder = Recorder()
        provider = TracerProvider()
        guard = CycleGuard(
            load_config(environ={}, max_sessions=2_000),
            observers=[recorder, SignalAnnotator(provider)],
        )
        processor = CycleGuardSpanProcessor(guard)
        provider.add_span_processor(processor)
        tracer = provider.get_tracer("threads")
        barrier = threading.Barrier(threads_n)
        errors: list[BaseException] = []

        def worker(t: int) -> None:
            try:
                barrier.wait()
                sessions = [f"t{t}-s{i}" for i in range(per_thread)]
                # interleave the sessions of this thread, so each streak is built across others
                for _round in range(5):
                    for key in sessions:
                        agent = agent_attrs("a", **{"session.id": key})
                        with tracer.start_as_current_span("invoke_agent a", attributes=agent):
                            attrs = genai_tool("grep", f'{{"q": "{key}"}}')
                            tracer.start_span("execute_tool grep", attributes=attrs).end()
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(t,)) for t in range(threads_n)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        total = threads_n * per_thread
        per_session = Counter((key, s.level) for key, _, s in recorder.fired)
        assert len(per_session) == 2 * total
        assert set(per_session.values()) == {1}
        assert all(s.session == key for key, _, s in recorder.fired)
        calls = Counter(key for key, _ in recorder.calls)
        assert len(calls) == total and set(calls.values()) == {5}
        assert processor.open_spans() == 0
        assert len(guard) == total
        provider.shutdown()


class TestFork:
    """A forked child gets a working processor (fresh locks, no inherited open spans)."""

    def test_child_uses_the_processor_and_exits_cleanly(self):
        """The child detects its own loop and exits 0; the parent is unaffected."""
        recorder = Recorder()
        provider = TracerProvider()
        guard = CycleGuard(load_config(environ={}), observers=[recorder])
        processor = CycleGuardSpanProcessor(guard)
        provider.add_span_processor(processor)
        tracer = provider.get_tracer("fork")
        agent = tracer.start_span("invoke_agent parent", attributes=agent_attrs("parent"))
        guard._lock.acquire()  # worst case: the guard's lock is held at fork time
        pid = os.fork()
        if pid != 0:
            guard._lock.release()
        if pid == 0:  # child
            code = 1
            try:
                assert processor.open_spans() == 0
                for _ in range(5):
                    attrs = {**genai_tool(), "session.id": "child-session"}
                    tracer.start_span("execute_tool grep", attributes=attrs).end()
                levels = [s.level for key, _, s in recorder.fired if key == "child-session"]
                code = 0 if levels == [Level.WARN, Level.TERM] else 2
            except BaseException:
                code = 3
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        agent.end()
        assert processor.open_spans() == 0
        assert not any(key == "child-session" for key, _, _ in recorder.fired)


class TestInternalErrors:
    """Outside tests, a bug in a hook is logged once and swallowed; the host never sees it."""

    def test_a_bug_in_on_end_is_swallowed_and_later_processors_still_run(self, monkeypatch, caplog):
        """With CYCLEGUARD_RAISE_INTERNAL_ERRORS=0 the span still reaches the exporter."""
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        from otel_cycleguard import conventions
        from otel_cycleguard.otel import processor as processor_module

        monkeypatch.setenv("CYCLEGUARD_RAISE_INTERNAL_ERRORS", "0")

        class FreshBug(Exception):
            """A new type per run: each (hook, type) is logged once per process."""

        def broken(*args):
            raise FreshBug("bug")

        provider = TracerProvider()
        exporter = InMemorySpanExporter()
        provider.add_span_processor(CycleGuardSpanProcessor(config=load_config(environ={})))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        monkeypatch.setattr(conventions, "classify", broken)  # on_end's first step
        monkeypatch.setattr(processor_module, "_open_scope", broken)  # on_start's
        tracer = provider.get_tracer("x")
        for _ in range(2):
            tracer.start_span("execute_tool grep", attributes=genai_tool()).end()
        assert len(exporter.get_finished_spans()) == 2
        # logged once per hook (on_start, on_end), not once per span
        assert caplog.text.count("your agent is still running fine") == 2

    def test_our_suite_sees_internal_errors(self, monkeypatch):
        """Our own tests see internal errors: tests/conftest.py asks for them."""
        from otel_cycleguard import conventions

        monkeypatch.delenv("CYCLEGUARD_RAISE_INTERNAL_ERRORS", raising=False)
        monkeypatch.setattr(conventions, "classify", lambda n, a: 1 / 0)
        processor = CycleGuardSpanProcessor()
        provider = TracerProvider()
        provider.add_span_processor(processor)
        with pytest.raises(ZeroDivisionError):  # an agent span is classified at start
            provider.get_tracer("x").start_span("invoke_agent s").end()


USER_AGENT_TEST = """
from opentelemetry.sdk.trace import TracerProvider

from otel_cycleguard import CycleGuardSpanProcessor, conventions


def test_my_agent(monkeypatch):
    monkeypatch.delenv("CYCLEGUARD_RAISE_INTERNAL_ERRORS", raising=False)
    monkeypatch.setattr(conventions, "classify", lambda name, attrs: 1 / 0)
    provider = TracerProvider()
    provider.add_span_processor(CycleGuardSpanProcessor())
    provider.get_tracer("agent").start_span("invoke_agent my-agent").end()
"""


def test_a_users_own_pytest_run_never_sees_our_exceptions(tmp_path):
    """pytest being imported is no switch: a user's agent tests get the swallow-and-log path."""
    import subprocess
    import sys

    (tmp_path / "test_user_agent.py").write_text(USER_AGENT_TEST)
    env = {k: v for k, v in os.environ.items() if k != "CYCLEGUARD_RAISE_INTERNAL_ERRORS"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
