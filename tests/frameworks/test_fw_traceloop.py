"""traceloop-sdk (OpenLLMetry): an ``@agent`` loop calling a ``@tool``-decorated ``grep``.

How the guard reaches traceloop's spans: ``Traceloop.init`` builds a process-wide singleton
(``TracerWrapper``; a second ``init`` is a no-op) that adopts the global tracer provider when
it is already an SDK ``TracerProvider`` and otherwise creates one and makes it global. Either
way, right after ``init`` the provider traceloop writes to is ``trace.get_tracer_provider()``,
so ``otel_cycleguard.install(tracer_provider=trace.get_tracer_provider())`` adds the guard to
it. Traceloop's own processor (the exporter passed to ``init``) was added first, so its
``on_start`` copies the association properties onto a span before the guard's ``on_start``
reads it. (``init(processor=[...])`` would also work, but traceloop then monkeypatches the
processors' ``on_start`` and drops ``exporter=``.)

Because of the singleton the module initialises once (module fixture) and the tests share the
exporter (cleared per test) and the guard; each test uses its own session id. ``instruments=
set()`` keeps traceloop from auto-instrumenting every installed library. Teardown makes the
guard inert and uninstruments the ``ThreadingInstrumentor`` traceloop turned on; the global
provider cannot be unset in OpenTelemetry, but no other framework module uses it.

Tool spans: ``grep.tool`` with ``traceloop.span.kind=tool``, ``traceloop.entity.name``,
``gen_ai.tool.name``, ``traceloop.entity.input`` = ``{"args": [], "kwargs": {...}}`` and
``traceloop.entity.output`` (JSON).
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Iterator

import pytest
from _frameworks_support import (
    DISTINCT_ARGS,
    LOOP_ARGS,
    Guarded,
    assert_loop_detected,
    assert_no_identical_call,
    grep_files,
    install_guard,
)

pytest.importorskip(
    "traceloop.sdk",
    reason="traceloop-sdk is not installed: pip install -r requirements/frameworks.txt",
)

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from traceloop.sdk import Traceloop
from traceloop.sdk.decorators import agent, tool

from otel_cycleguard.otel import autoconfig

pytestmark = pytest.mark.frameworks


@pytest.fixture(scope="module")
def traceloop_guarded() -> Iterator[Guarded]:
    mp = pytest.MonkeyPatch()
    for name in ("TRACELOOP_API_KEY", "TRACELOOP_BASE_URL", "TRACELOOP_HEADERS"):
        mp.delenv(name, raising=False)
    mp.setenv("TRACELOOP_TRACE_CONTENT", "true")  # tool inputs/outputs on the spans
    exporter = InMemorySpanExporter()
    Traceloop.init(
        app_name="cycleguard-framework-test",
        exporter=exporter,
        disable_batch=True,
        instruments=set(),
        telemetry_enabled=False,
    )
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        mp.undo()
        pytest.fail(f"traceloop left a non-SDK global tracer provider: {type(provider)}")
    guarded = install_guard(provider, exporter)
    try:
        yield guarded
    finally:
        guarded.processor.shutdown()  # inert from now on (SDK providers cannot drop processors)
        if autoconfig.installed_on(provider) is guarded.processor:
            autoconfig.uninstall(provider)  # let a later install() add a fresh guard
        from opentelemetry.instrumentation.threading import ThreadingInstrumentor

        ThreadingInstrumentor().uninstrument()
        mp.undo()


@pytest.fixture
def tl(traceloop_guarded: Guarded) -> Iterator[Guarded]:
    traceloop_guarded.exporter.clear()
    traceloop_guarded.recorder.seen.clear()
    traceloop_guarded.recorder.span_ids.clear()
    traceloop_guarded.recorder.tool_calls.clear()
    yield traceloop_guarded


@tool(name="grep")
def grep(pattern: str, path: str) -> str:
    """Search files under ``path`` for lines containing ``pattern``."""
    return grep_files(pattern, path)


def scripted_model(script: list[dict[str, str]], results: list[str]) -> dict[str, str] | None:
    """The "model": the next call of the script given the results so far, or None (answer)."""
    return script[len(results)] if len(results) < len(script) else None


@agent(name="searcher")
def search_agent(script: list[dict[str, str]]) -> tuple[str, list[str]]:
    results: list[str] = []
    while (call := scripted_model(script, results)) is not None:
        results.append(grep(**call))
    return f"done after {len(results)} searches", results


def run_agent(script: list[dict[str, str]], session_id: str) -> list[str]:
    """Run the agent with a traceloop session id, in a copied context.

    ``Traceloop.set_association_properties`` attaches to the current context and never
    detaches; the copy keeps the id from leaking into later tests.
    """

    def run() -> tuple[str, list[str]]:
        Traceloop.set_association_properties({"session_id": session_id})
        return search_agent(script)

    answer, results = contextvars.copy_context().run(run)
    assert answer == f"done after {len(script)} searches"
    return results


def tool_spans(guarded: Guarded) -> list:
    return [s for s in guarded.spans() if (s.attributes or {}).get("traceloop.span.kind") == "tool"]


def test_identical_grep_loop_is_detected_at_the_third_and_fifth_call(tl: Guarded) -> None:
    """Six identical ``grep`` calls: WARN at step 2, TERM at step 4, on those tool spans."""
    seen = run_agent(LOOP_ARGS, session_id="tl-session-loop")
    assert seen == [grep_files(**LOOP_ARGS[0])] * 6

    spans = tool_spans(tl)
    assert [s.name for s in spans] == ["grep.tool"] * 6
    first = spans[0].attributes
    assert first["traceloop.entity.name"] == "grep"
    assert first["gen_ai.tool.name"] == "grep"
    assert json.loads(first["traceloop.entity.input"]) == {"args": [], "kwargs": LOOP_ARGS[0]}
    assert json.loads(first["traceloop.entity.output"]) == grep_files(**LOOP_ARGS[0])
    assert first["traceloop.association.properties.session_id"] == "tl-session-loop"

    # Session: OpenLLMetry `traceloop.association.properties.session_id` (on every span).
    assert_loop_detected(tl, spans, session="tl-session-loop")


def test_six_different_searches_are_not_a_loop(tl: Guarded) -> None:
    """Six ``grep`` calls with different queries finding different lines: no identical_call."""
    seen = run_agent(DISTINCT_ARGS, session_id="tl-session-distinct")
    assert seen == [grep_files(**args) for args in DISTINCT_ARGS]
    spans = tool_spans(tl)
    assert [json.loads(s.attributes["traceloop.entity.input"])["kwargs"] for s in spans] == (
        DISTINCT_ARGS
    )
    assert_no_identical_call(tl, spans, session="tl-session-distinct")
