"""Shared rig for the framework adapter tests: a guarded provider, scripted humans, the loop.

Every test gets a fresh SDK ``TracerProvider`` (never the global one) with an
``InMemorySpanExporter`` and ``otel_cycleguard.install(..., tracer_provider=tp)`` wired to a
``DirectoryProgressStore(tmp_path)`` and a scripted escalator. With the ``general`` profile,
``identical_call`` reaches TERM on the 5th identical call (self-heal: a corrective system
message) and, its counter reset, again on the 10th (HITL: the run pauses and the escalator is
asked, with ``hitl_timeout_s`` = 2 s).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_cycleguard
from otel_cycleguard import CycleGuardSpanProcessor
from otel_cycleguard.escalate.engine import EscalationEngine
from otel_cycleguard.escalate.hitl import CallableEscalator, EscalationRequest, HumanDecision
from otel_cycleguard.escalate.progress import DirectoryProgressStore
from otel_cycleguard.integrations.generic import set_default_engine

HITL_TIMEOUT_S = 2.0
MARK = "[cycleguard]"  # every corrective message starts with it
INSTRUCTION = "Stop searching for TODO; search for FIXME in src instead."
LOOP_ARGS = {"pattern": "TODO", "path": "src"}
TERM_AT = 5  # identical_call TERM in the general profile

FILES: dict[str, str] = {
    "src/app.py": "import os\n# TODO: read the port from config\nPORT = 8080\n",
    "src/db.py": "def connect(url):\n    raise NotImplementedError  # FIXME\n",
}


def grep_files(pattern: str, path: str) -> str:
    """The tool every framework wraps: matching ``file:line: text`` lines."""
    hits = [
        f"{name}:{number}: {line}"
        for name, text in sorted(FILES.items())
        if name.startswith(path)
        for number, line in enumerate(text.splitlines(), 1)
        if pattern in line
    ]
    return "\n".join(hits) or "no matches"


class Human:
    """A scripted human behind a ``CallableEscalator``: silent, or answering ``modify``."""

    def __init__(self, answer: HumanDecision | None = None) -> None:
        self.answer = answer
        self.requests: list[EscalationRequest] = []
        self.asked_at: list[float] = []
        self.release = threading.Event()  # frees a silent human's thread at teardown

    def __call__(self, request: EscalationRequest) -> HumanDecision | str:
        self.requests.append(request)
        self.asked_at.append(time.time())
        if self.answer is None:  # silence: sleep far past the deadline
            self.release.wait(30)
            return "continue"  # too late: the escalator already returned timeout
        return self.answer


@dataclass
class Rig:
    provider: TracerProvider
    exporter: InMemorySpanExporter
    processor: CycleGuardSpanProcessor
    store: DirectoryProgressStore
    human: Human
    progress_dir: Path
    tool_calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def engine(self) -> EscalationEngine:
        return self.processor.escalation

    def grep(self, pattern: str, path: str) -> str:
        self.tool_calls.append({"pattern": pattern, "path": path})
        return grep_files(pattern, path)

    def counters(self, session: str) -> dict[str, Any]:
        return self.processor.guard.counters(session)


@pytest.fixture
def make_rig(tmp_path: Path) -> Iterator[Callable[..., Rig]]:
    """``make_rig(human=Human())``: a fresh provider with the guard installed on it."""
    made: list[Rig] = []

    def make(human: Human | None = None) -> Rig:
        human = human if human is not None else Human()
        provider = TracerProvider()
        exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        store = DirectoryProgressStore(tmp_path / "progress")
        processor = otel_cycleguard.install(
            otel_cycleguard.load_config(environ={}, escalation={"hitl_timeout_s": HITL_TIMEOUT_S}),
            tracer_provider=provider,
            escalator=CallableEscalator(human),
            progress_store=store,
        )
        assert processor is not None and processor.escalation is not None
        rig = Rig(provider, exporter, processor, store, human, tmp_path / "progress")
        made.append(rig)
        return rig

    yield make
    for rig in made:
        rig.human.release.set()
        rig.engine.shutdown(wait=False)
        rig.provider.shutdown()
    set_default_engine(None, None)


def assert_terminated_in_time(rig: Rig, raised_at: float) -> float:
    """The human was asked once and the run stopped within deadline + 1 s; returns the lag."""
    assert len(rig.human.requests) == 1, rig.human.requests
    deadline = rig.human.requests[0].deadline
    lag = raised_at - deadline
    # Not before the human's time ran out (fail-closed waits for the answer) ...
    assert lag > -0.2, f"terminated {-lag:.2f} s before the deadline"
    # ... and within deadline + 1 s grace (+0.5 s slack for a loaded CI machine).
    assert lag < 1.5, f"terminated {lag:.2f} s after the deadline"
    return lag


def assert_progress_saved(rig: Rig, error: Any, session: str) -> None:
    """The progress file is on disk and ``resume`` loads it with the evidence and counters."""
    assert error.reason == "cycle_detected"
    assert error.session == session
    assert error.progress_ref, "no progress reference"
    assert (rig.progress_dir / error.progress_ref).is_file()
    record = otel_cycleguard.resume(error.progress_ref, rig.store)
    assert record.session == session
    assert record.reason.value == "cycle_detected"
    assert record.dimension == "identical_call"
    assert record.hitl_decision == "timeout"
    assert record.resumable
    assert record.evidence and {e["tool"] for e in record.evidence} == {"grep"}
    assert record.counters.get("tool_calls", 0) >= 2 * TERM_AT, record.counters
