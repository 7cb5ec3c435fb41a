"""Shared helpers for the framework tests: a guarded tracer provider and the loop assertions.

Each framework module drives a real agent framework offline (a scripted model, never a real
LLM) with its real instrumentation exporting into an ``InMemorySpanExporter``, and
``otel_cycleguard.install`` adding the guard to the same provider. The scripted model calls a
``grep`` tool six times and then answers:

* loop: six identical calls. With the ``general`` profile ``identical_call`` warns on the 3rd
  call (step index 2) and terminates on the 5th (step index 4), nothing else fires;
* negative: six different queries that find different things: no ``identical_call`` at all.

Install the extra first: ``pip install -r requirements/frameworks.txt``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_cycleguard
from otel_cycleguard import CycleGuardSpanProcessor, Observer, Signal

SIGNAL_SPAN = "cycleguard.signal"

# A tiny "repository" the grep tool searches: identical queries give identical results,
# different queries find different lines.
FILES: dict[str, str] = {
    "src/app.py": "import os\n# TODO: read the port from config\nPORT = 8080\n",
    "src/db.py": "def connect(url):\n    raise NotImplementedError  # FIXME\n",
    "src/api.py": "def handler(request):\n    return {'status': 'ok'}\n",
    "tests/test_app.py": "def test_port():\n    assert PORT == 8080\n",
}

LOOP_ARGS: list[dict[str, str]] = [{"pattern": "TODO", "path": "src"}] * 6
DISTINCT_ARGS: list[dict[str, str]] = [
    {"pattern": "TODO", "path": "src"},
    {"pattern": "FIXME", "path": "src"},
    {"pattern": "PORT", "path": "src"},
    {"pattern": "def ", "path": "src"},
    {"pattern": "import", "path": "src"},
    {"pattern": "assert", "path": "tests"},
]


def grep_files(pattern: str, path: str) -> str:
    """The tool body every framework wraps: matching ``file:line: text`` lines."""
    hits = [
        f"{name}:{number}: {line}"
        for name, text in sorted(FILES.items())
        if name.startswith(path)
        for number, line in enumerate(text.splitlines(), 1)
        if pattern in line
    ]
    return "\n".join(hits) or "no matches"


# The negative case really is "different things found": every result differs.
assert len({grep_files(**args) for args in DISTINCT_ARGS}) == len(DISTINCT_ARGS)


class Recorder(Observer):
    """Collects every signal the guard emits and the id of the span it fired on."""

    def __init__(self) -> None:
        self.seen: list[Signal] = []
        self.span_ids: list[str] = []
        self.tool_calls: dict[str, int] = {}

    def tool_call(self, entry: Any, call: Any) -> None:
        self.tool_calls[entry.key] = self.tool_calls.get(entry.key, 0) + 1

    def signals(self, entry: Any, signals: list[Signal], span_ref: Any) -> None:
        for signal in signals:
            self.seen.append(signal)
            self.span_ids.append(getattr(span_ref, "span_id_hex", ""))


@dataclass
class Guarded:
    """A tracer provider with an exporter and the guard installed, plus what the guard saw."""

    provider: TracerProvider
    exporter: InMemorySpanExporter
    processor: CycleGuardSpanProcessor
    recorder: Recorder = field(default_factory=Recorder)

    def spans(self) -> list[ReadableSpan]:
        return sorted(self.exporter.get_finished_spans(), key=lambda s: s.start_time or 0)

    def signals(self, dimension: str | None = None) -> list[Signal]:
        return [
            s for s in self.recorder.seen if dimension is None or s.dimension.value == dimension
        ]


def install_guard(provider: TracerProvider, exporter: InMemorySpanExporter) -> Guarded:
    """``otel_cycleguard.install`` on ``provider`` with the default configuration.

    ``load_config(environ={})`` keeps a developer's ``CYCLEGUARD_*`` variables out of the test.
    """
    recorder = Recorder()
    processor = otel_cycleguard.install(
        otel_cycleguard.load_config(environ={}), tracer_provider=provider, observers=[recorder]
    )
    assert processor is not None, "install() refused the provider"
    if recorder not in processor.guard.observers:  # a guard installed earlier on this provider
        processor.guard.observers.append(recorder)
    return Guarded(provider, exporter, processor, recorder)


def _hex(span_id: int) -> str:
    return f"{span_id:016x}"


def assert_loop_detected(
    guarded: Guarded,
    tool_spans: Sequence[ReadableSpan],
    session: str | None,
    *,
    profile: str | None = "general",
) -> None:
    """The loop is caught at the exact calls and marked under the exact tool spans.

    ``session``/``profile`` None: only check that both signals share one session.
    """
    guarded.processor.force_flush()  # install() detects in the background: catch up first
    assert len(tool_spans) == 6, [s.name for s in tool_spans]
    identical = guarded.signals("identical_call")
    got = [(s.level.value, s.step, s.streak) for s in identical]
    # general profile: identical_call warn 3 / term 5 -> 3rd call (index 2), 5th (index 4);
    # the 6th call is past the crossing and fires nothing new.
    assert got == [("warn", 2, 3), ("term", 4, 5)]
    assert [s.dimension.value for s in guarded.signals()] == ["identical_call"] * 2, [
        (s.dimension.value, s.level.value, s.step) for s in guarded.signals()
    ]
    sessions = {s.session for s in identical}
    assert len(sessions) == 1
    if session is not None:
        assert sessions == {session}
    session = sessions.pop()
    assert tool_calls_seen(guarded, session) == 6
    if profile is not None:
        assert {s.profile for s in identical} == {profile}
    # The signals fired on the 3rd and 5th tool spans.
    assert guarded.recorder.span_ids == [
        _hex(tool_spans[2].context.span_id),
        _hex(tool_spans[4].context.span_id),
    ]

    exported = [s for s in guarded.exporter.get_finished_spans() if s.name == SIGNAL_SPAN]
    assert len(exported) == 2, [s.name for s in guarded.exporter.get_finished_spans()]
    by_level = {s.attributes["cycleguard.level"]: s for s in exported}
    assert set(by_level) == {"warn", "term"}
    for level, index, streak, threshold in (("warn", 2, 3, 3), ("term", 4, 5, 5)):
        span = by_level[level]
        tool = tool_spans[index]
        attrs = span.attributes
        assert attrs["cycleguard.dimension"] == "identical_call"
        assert attrs["cycleguard.step"] == index
        assert attrs["cycleguard.streak"] == streak
        assert attrs["cycleguard.threshold"] == threshold
        assert attrs["cycleguard.session"] == session
        assert [e.name for e in span.events] == [f"cycleguard.{level}"]
        # parented on the offending tool span, in its trace
        assert span.parent is not None
        assert span.parent.span_id == tool.context.span_id
        assert span.context.trace_id == tool.context.trace_id


def tool_calls_seen(guarded: Guarded, session: str) -> int:
    """How many tool calls the guard read in ``session`` (proves the spans were read)."""
    return guarded.recorder.tool_calls.get(session, 0)


def assert_no_identical_call(
    guarded: Guarded, tool_spans: Sequence[ReadableSpan], session: str | None
) -> None:
    """Six different queries: six tool calls read in one session, no identical_call at all.

    ``session`` None: any single session (see :func:`assert_loop_detected`).
    """
    guarded.processor.force_flush()  # install() detects in the background: catch up first
    assert len(tool_spans) == 6, [s.name for s in tool_spans]
    assert list(guarded.recorder.tool_calls.values()) == [6], guarded.recorder.tool_calls
    if session is not None:
        assert tool_calls_seen(guarded, session) == 6
    assert guarded.signals("identical_call") == []
    assert not [
        s
        for s in guarded.exporter.get_finished_spans()
        if s.name == SIGNAL_SPAN and s.attributes.get("cycleguard.dimension") == "identical_call"
    ]
