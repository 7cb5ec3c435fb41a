"""Agents around a plain model client: tool calls read from the model spans, enforced by adapters.

The agent is the user's own loop (``_client_agents``) around the real ``openai`` / ``anthropic``
clients, talking to a scripted model on a loopback HTTP server (``_fake_llm``). Its tools leave
no spans: all the guard sees are the model spans of a real client instrumentation, one per
test: OpenInference OpenAI, OpenTelemetry's openai-v2, OpenLLMetry OpenAI, OpenInference
Anthropic and OpenLLMetry Anthropic.

A call's result is only in the *next* request, so the guard observes call k at the end of
model span k+1: the 5th identical call (TERM, self-heal) is seen when the 6th request has been
answered, and the corrective message rides in the 7th request; the 10th identical call (TERM
again: the human is asked) is seen after the 11th, and the 12th request waits for the human,
then raises ``CycleTerminated`` when nobody answers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("anthropic")

import itertools

import anthropic
import openai
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otel_cycleguard import CycleTerminated, Observer, Signal
from otel_cycleguard.analyze import analyze_paths
from otel_cycleguard.analyze.readers import TraceReader
from otel_cycleguard.demo import JsonLinesSpanExporter
from otel_cycleguard.guard import CycleGuard
from otel_cycleguard.integrations.anthropic_client import guard_anthropic
from otel_cycleguard.integrations.openai_client import guard_openai
from otel_cycleguard.service.ingest import Ingestor
from otel_cycleguard.service.sessions import SessionResolver

from ._client_agents import (
    TOOL,
    Run,
    anthropic_agent,
    async_anthropic_agent,
    async_openai_agent,
    openai_agent,
)
from ._fake_llm import FakeLLM
from ._rig import MARK, TERM_AT, Rig, assert_terminated_in_time

pytestmark = pytest.mark.frameworks


@dataclass(frozen=True)
class Instrumentation:
    id: str
    api: str  # "openai" | "anthropic"
    module: str
    cls: str
    env: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        return self.id


INSTRUMENTATIONS = [
    Instrumentation(
        "openinference-openai",
        "openai",
        "openinference.instrumentation.openai",
        "OpenAIInstrumentor",
    ),
    Instrumentation(
        "otel-openai-v2",
        "openai",
        "opentelemetry.instrumentation.openai_v2",
        "OpenAIInstrumentor",
        (
            ("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental"),
            ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only"),
        ),
    ),
    Instrumentation(
        "openllmetry-openai",
        "openai",
        "opentelemetry.instrumentation.openai",
        "OpenAIInstrumentor",
        (("TRACELOOP_TRACE_CONTENT", "true"),),
    ),
    Instrumentation(
        "openinference-anthropic",
        "anthropic",
        "openinference.instrumentation.anthropic",
        "AnthropicInstrumentor",
    ),
    Instrumentation(
        "openllmetry-anthropic",
        "anthropic",
        "opentelemetry.instrumentation.anthropic",
        "AnthropicInstrumentor",
        (("TRACELOOP_TRACE_CONTENT", "true"),),
    ),
]


def _reset_semconv_mode() -> None:
    """openai-v2 reads OTEL_SEMCONV_STABILITY_OPT_IN once per process: let it read it again."""
    from opentelemetry.instrumentation._semconv import _OpenTelemetrySemanticConventionStability

    _OpenTelemetrySemanticConventionStability._initialized = False


class Recorder(Observer):
    """Every signal (dimension, level, tool) and how many tool calls the guard observed."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str | None]] = []
        self.tool_calls = 0
        self.sessions: set[str] = set()

    def tool_call(self, entry: Any, call: Any) -> None:
        self.tool_calls += 1
        self.sessions.add(entry.key)

    def signals(self, entry: Any, signals: list[Signal], span_ref: Any) -> None:
        self.seen.extend((s.dimension.value, s.level.value, s.tool) for s in signals)


@dataclass
class Setup:
    rig: Rig
    instrumentation: Instrumentation
    recorder: Recorder
    trace_file: Path
    exporter: JsonLinesSpanExporter

    def client(self, fake: FakeLLM, *, asynchronous: bool = False, guarded: bool = True) -> Any:
        if self.instrumentation.api == "openai":
            make = openai.AsyncOpenAI if asynchronous else openai.OpenAI
            client = make(base_url=fake.openai_url, api_key="test", max_retries=0)
            return guard_openai(client) if guarded else client
        make = anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic
        client = make(base_url=fake.anthropic_url, api_key="test", max_retries=0)
        return guard_anthropic(client) if guarded else client

    def agent(self, client: Any, run: Run, **kwargs: Any) -> Run:
        tracer = self.rig.provider.get_tracer("weather-agent")
        if self.instrumentation.api == "openai":
            return openai_agent(client, tracer, run, **kwargs)
        return anthropic_agent(client, tracer, run, **kwargs)

    def finish_export(self) -> None:
        self.rig.processor.force_flush()
        self.exporter.shutdown()


def _instrument(
    instrumentation: Instrumentation, provider: Any, monkeypatch: pytest.MonkeyPatch
) -> Callable[[], None]:
    module = pytest.importorskip(instrumentation.module)
    for name, value in instrumentation.env:
        monkeypatch.setenv(name, value)
    _reset_semconv_mode()
    instrumentor = getattr(module, instrumentation.cls)()
    instrumentor.instrument(tracer_provider=provider)

    def undo() -> None:
        instrumentor.uninstrument()
        _reset_semconv_mode()

    return undo


@pytest.fixture(params=INSTRUMENTATIONS, ids=str)
def setup(
    request: pytest.FixtureRequest,
    make_rig: Callable[..., Rig],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Setup]:
    rig = make_rig()
    recorder = Recorder()
    rig.processor.guard.observers.append(recorder)
    trace_file = tmp_path / "traces.otlp.jsonl"
    exporter = JsonLinesSpanExporter(trace_file)
    rig.provider.add_span_processor(SimpleSpanProcessor(exporter))
    undo = _instrument(request.param, rig.provider, monkeypatch)
    try:
        yield Setup(rig, request.param, recorder, trace_file, exporter)
    finally:
        undo()


def same_call(body: dict[str, Any], turn: int) -> list[tuple[str, dict[str, Any]]]:
    """A model stuck on one call: it never heeds the corrective message."""
    return [(TOOL, {"city": "Paris"})]


CITIES = ["Paris", "London", "Rome", "Berlin", "Madrid", "Oslo"]


def different_calls(body: dict[str, Any], turn: int) -> Any:
    """A healthy run: a different city each turn, then an answer."""
    return [(TOOL, {"city": CITIES[turn]})] if turn < len(CITIES) else "Mostly mild."


def _has_mark(message: dict[str, Any]) -> bool:
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(str(block.get("text", "")) for block in content)
    return isinstance(content, str) and MARK in content


def assert_delivered_once_appended(requests: list[dict[str, Any]], at: int) -> None:
    """The corrective message arrives in request ``at`` as its new last message; every request
    extends the one before it (no earlier message edited), and only ``at`` carries it."""
    marked = [i for i, body in enumerate(requests) if any(map(_has_mark, body["messages"]))]
    assert marked and marked[0] == at, (marked, at)
    assert _has_mark(requests[at]["messages"][-1])
    assert not any(_has_mark(m) for m in requests[at]["messages"][:-1])
    for before, after in itertools.pairwise(requests):
        previous = [m for m in before["messages"] if not _has_mark(m)]
        kept = [m for m in after["messages"] if not _has_mark(m)]
        assert kept[: len(previous)] == previous


def _offline(setup: Setup) -> tuple[list[tuple[str, str, str | None]], Any]:
    analysis = analyze_paths([str(setup.trace_file)], setup.rig.processor.config, hitl="timeout")
    assert len(analysis.sessions) == 1, [s.session for s in analysis.sessions]
    report = analysis.sessions[0]
    return [(s.dimension, s.level, s.tool) for s in report.signals], report


def _service(setup: Setup) -> Recorder:
    recorder = Recorder()
    config = setup.rig.processor.config
    ingestor = Ingestor(
        CycleGuard(config, observers=[recorder]), SessionResolver(config.delegating_tools)
    )
    for spans in TraceReader([str(setup.trace_file)]).iter_documents():
        ingestor.process(spans)
    return recorder


def test_a_repeated_call_is_corrected_then_terminated_live_and_offline(setup: Setup) -> None:
    rig = setup.rig
    with FakeLLM(same_call) as fake:
        client = setup.client(fake)
        run = Run()
        with pytest.raises(CycleTerminated) as stopped:
            setup.agent(client, run)
        raised_at = time.time()
    setup.finish_export()
    requests = fake.requests

    # Call k is observed when request k+1 has been answered: TERM on the 5th call after the
    # 6th request, the corrective message in the 7th (index TERM_AT + 1), appended.
    assert_delivered_once_appended(requests, TERM_AT + 1)
    # The second TERM (10th call, seen after the 11th request) asks the human; the 12th
    # request waits and is never sent: the silent human terminates the run.
    assert len(requests) == 2 * TERM_AT + 1, len(requests)
    assert len(run.calls) == 2 * TERM_AT + 1
    assert_terminated_in_time(rig, raised_at)
    assert stopped.value.reason == "cycle_detected"
    live_terms = [s for s in setup.recorder.seen if s[1] == "term"]
    assert live_terms == [("identical_call", "term", TOOL)] * 2, setup.recorder.seen
    assert setup.recorder.tool_calls == 2 * TERM_AT

    # The exported traces, replayed: the same signals, the same end.
    offline, report = _offline(setup)
    assert offline == setup.recorder.seen
    assert report.tool_calls == 2 * TERM_AT
    assert report.terminated_at is not None and report.terminated_at.dimension == "identical_call"
    assert [e.stage for e in report.escalations] == ["self_heal", "hitl", "terminate"]

    # And the OTLP service's ingestion path derives the same calls (it has no escalation
    # here, so only the first TERM compares).
    served = _service(setup)
    assert served.tool_calls == 2 * TERM_AT
    assert (
        served.seen[: setup.recorder.seen.index(live_terms[0]) + 1]
        == setup.recorder.seen[: setup.recorder.seen.index(live_terms[0]) + 1]
    )


def test_a_healthy_run_gets_no_signal(setup: Setup) -> None:
    with FakeLLM(different_calls) as fake:
        run = setup.agent(setup.client(fake), Run())
    setup.finish_export()
    assert run.answer == "Mostly mild." and len(run.calls) == len(CITIES)
    assert setup.recorder.seen == []
    assert setup.recorder.tool_calls == len(CITIES)  # every call derived, once
    offline, report = _offline(setup)
    assert offline == [] and report.tool_calls == len(CITIES)
    assert _service(setup).tool_calls == len(CITIES)


@pytest.mark.parametrize("tool_spans", ["with_id", "without_id"])
def test_calls_traced_twice_count_once(setup: Setup, tool_spans: str) -> None:
    """The user's own ``execute_tool`` spans and the client's model spans describe the same
    calls: matched by tool-call id (or by name and arguments), each counts once."""
    with FakeLLM(same_call) as fake, pytest.raises(CycleTerminated):
        setup.agent(setup.client(fake), Run(), tool_spans=tool_spans)
    setup.finish_export()
    # Real tool spans are seen at once, no turn later: the 10th call's span asks the human and
    # the 11th request is the one that waits (without tool spans it is the 12th).
    assert len(fake.requests) == 2 * TERM_AT
    assert setup.recorder.tool_calls == 2 * TERM_AT
    assert [s for s in setup.recorder.seen if s[1] == "term"] == [
        ("identical_call", "term", TOOL)
    ] * 2
    offline, report = _offline(setup)
    assert offline == setup.recorder.seen
    assert report.tool_calls == 2 * TERM_AT
    assert _service(setup).tool_calls == 2 * TERM_AT


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_async_clients_are_corrected_then_terminated(
    api: str, make_rig: Callable[..., Rig], monkeypatch: pytest.MonkeyPatch
) -> None:
    rig = make_rig()
    instrumentation = next(i for i in INSTRUMENTATIONS if i.api == api)  # OpenInference
    undo = _instrument(instrumentation, rig.provider, monkeypatch)
    try:
        with FakeLLM(same_call) as fake:
            if api == "openai":
                client = guard_openai(
                    openai.AsyncOpenAI(base_url=fake.openai_url, api_key="t", max_retries=0)
                )
                agent = async_openai_agent
            else:
                client = guard_anthropic(
                    anthropic.AsyncAnthropic(
                        base_url=fake.anthropic_url, api_key="t", max_retries=0
                    )
                )
                agent = async_anthropic_agent

            async def main() -> None:
                ticks = 0

                async def ticker() -> None:  # the event loop keeps running while a human decides
                    nonlocal ticks
                    while True:
                        await asyncio.sleep(0.05)
                        ticks += 1

                task = asyncio.create_task(ticker())
                try:
                    await agent(client, rig.provider.get_tracer("t"), Run())
                finally:
                    task.cancel()
                assert ticks > 10

            with pytest.raises(CycleTerminated):
                asyncio.run(main())
            raised_at = time.time()
        assert_delivered_once_appended(fake.requests, TERM_AT + 1)
        assert len(fake.requests) == 2 * TERM_AT + 1
        assert_terminated_in_time(rig, raised_at)
    finally:
        undo()


def test_without_message_content_the_setting_is_named_once(
    make_rig: Callable[..., Rig],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """openai-v2 captures no content by default: the guard cannot see the calls, says so once
    in the log, and ``cycleguard analyze`` names the setting in its report."""
    from otel_cycleguard import derive
    from otel_cycleguard.cli import main

    monkeypatch.setattr(derive, "_logged_hints", set())
    rig = make_rig()
    trace_file = tmp_path / "bare.otlp.jsonl"
    exporter = JsonLinesSpanExporter(trace_file)
    rig.provider.add_span_processor(SimpleSpanProcessor(exporter))
    bare = Instrumentation(
        "otel-openai-v2-default",
        "openai",
        "opentelemetry.instrumentation.openai_v2",
        "OpenAIInstrumentor",
    )
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    monkeypatch.delenv("OTEL_SEMCONV_STABILITY_OPT_IN", raising=False)
    undo = _instrument(bare, rig.provider, monkeypatch)
    try:
        caplog.set_level(logging.WARNING, logger="otel_cycleguard")
        with FakeLLM(same_call) as fake:
            client = guard_openai(
                openai.OpenAI(base_url=fake.openai_url, api_key="t", max_retries=0)
            )
            tracer = rig.provider.get_tracer("t")
            for _ in range(2):
                openai_agent(client, tracer, Run(), turns=8)
        rig.processor.force_flush()
        exporter.shutdown()
    finally:
        undo()
    assert rig.counters(next(iter(rig.processor.derived.session_keys())))["tool_calls"] == 0
    lines = [r.getMessage() for r in caplog.records if "no message content" in r.getMessage()]
    assert len(lines) == 1, lines
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only" in lines[0]

    out = tmp_path / "report.md"
    main(["analyze", str(trace_file), "--format", "markdown", "-o", str(out)])
    text = out.read_text()
    assert "## Notes" in text
    assert "2 sessions had model spans without message content" in text
    assert "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental" in text
    # the same notes whichever process replayed the sessions
    one = analyze_paths([str(trace_file)], rig.processor.config)
    two = analyze_paths([str(trace_file)], rig.processor.config, jobs=2)
    assert one.notes == two.notes and len(one.notes) == 1
    assert one.to_dict()["notes"] == one.notes
