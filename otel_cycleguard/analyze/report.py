"""The analysis report as data, and its JSON form (schema ``cycleguard.analysis/v2``).

The renderers (:mod:`.report_text`, :mod:`.report_markdown`, :mod:`.report_html`) read these
objects; :meth:`Analysis.to_dict` is the JSON contract documented in ``docs/analyze.md`` and
checked by ``schema/analysis-v2.json``. Indices are 0-based in the session's own order:
``tool_call_index`` among its tool calls, ``model_turn_index`` among its model turns, both in
start-time order; ``sequence`` (not in the JSON) counts both together, for timelines.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from otel_cycleguard.analyze.problems import InputProblem
from otel_cycleguard.detect.signals import DIMENSIONS

__all__ = [
    "SCHEMA_ID",
    "Analysis",
    "Episode",
    "EscalationRecord",
    "SessionReport",
    "SignalRecord",
    "Step",
    "TerminatedAt",
    "Wasted",
    "episodes",
    "schema",
]

SCHEMA_ID = "cycleguard.analysis/v2"
STAGES: tuple[str, ...] = ("self_heal", "hitl", "terminate")
MAX_PROBLEMS_LISTED = 100
_SCHEMA_PATH = Path(__file__).with_name("schema") / "analysis-v2.json"


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of :meth:`Analysis.to_dict`."""
    return json.loads(_SCHEMA_PATH.read_text(encoding="utf-8"))


@dataclass(slots=True)
class Step:
    """One tool call (``tool`` set) or model turn (``tool`` None), for timelines."""

    tool: str | None
    start_ns: int
    end_ns: int
    error: bool = False


@dataclass(frozen=True, slots=True)
class SignalRecord:
    """A WARN or TERM the detector fired on one span."""

    dimension: str
    level: str
    span_id: str
    tool: str | None
    tool_call_index: int | None
    model_turn_index: int | None
    streak: int
    threshold: int
    explanation: str
    sequence: int = 0
    rule: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "dimension": self.dimension,
            "level": self.level,
            "rule": self.rule or self.dimension,
            "span_id": self.span_id,
            "tool": self.tool,
            "tool_call_index": self.tool_call_index,
            "model_turn_index": self.model_turn_index,
            "streak": self.streak,
            "threshold": self.threshold,
            "explanation": self.explanation,
        }


@dataclass(frozen=True, slots=True)
class EscalationRecord:
    """A step up the ladder: ``self_heal``, ``hitl`` (a human asked) or ``terminate``."""

    stage: str
    dimension: str
    span_id: str
    tool_call_index: int | None
    model_turn_index: int | None
    sequence: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "dimension": self.dimension,
            "span_id": self.span_id,
            "tool_call_index": self.tool_call_index,
            "model_turn_index": self.model_turn_index,
        }


@dataclass(frozen=True, slots=True)
class TerminatedAt:
    """Where the guard would have stopped the run, and the reason code it would emit."""

    span_id: str
    tool_call_index: int | None
    model_turn_index: int | None
    reason: str
    dimension: str
    sequence: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "span_id": self.span_id,
            "tool_call_index": self.tool_call_index,
            "model_turn_index": self.model_turn_index,
            "reason": self.reason,
            "dimension": self.dimension,
        }


@dataclass(slots=True)
class Wasted:
    """What the run spent after its first TERM: tool calls, wall seconds, model tokens."""

    tool_calls: int = 0
    seconds: float = 0.0
    tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool_calls": self.tool_calls,
            "seconds": round(self.seconds, 3),
            "tokens": self.tokens,
        }


@dataclass(slots=True)
class SessionReport:
    """One session's replay: counts, signals, escalations, termination point, waste."""

    session: str
    agent: str | None
    profile: str
    subagent: bool = False
    keyed_by: str = "session"
    first_start_ns: int = 0
    trace_ids: list[str] = field(default_factory=list)
    tool_calls: int = 0
    model_turns: int = 0
    signals: list[SignalRecord] = field(default_factory=list)
    escalations: list[EscalationRecord] = field(default_factory=list)
    terminated_at: TerminatedAt | None = None
    wasted: Wasted = field(default_factory=Wasted)
    last_end_ns: int = 0
    first_term_end_ns: int | None = None
    steps: list[Step] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._settle()

    def _settle(self) -> None:
        if self.first_term_end_ns is not None and self.last_end_ns and self.first_term_end_ns:
            self.wasted.seconds = max(0, self.last_end_ns - self.first_term_end_ns) / 1e9

    @property
    def has_loop(self) -> bool:
        """A TERM fired somewhere in the session."""
        return any(signal.level == "term" for signal in self.signals)

    @property
    def first_term(self) -> SignalRecord | None:
        return next((s for s in self.signals if s.level == "term"), None)

    def to_dict(self) -> dict[str, Any]:
        self._settle()
        return {
            "session": self.session,
            "keyed_by": self.keyed_by,
            "trace_ids": list(self.trace_ids),
            "agent": self.agent,
            "profile": self.profile,
            "subagent": self.subagent,
            "tool_calls": self.tool_calls,
            "model_turns": self.model_turns,
            "signals": [signal.to_dict() for signal in self.signals],
            "escalations": [escalation.to_dict() for escalation in self.escalations],
            "terminated_at": self.terminated_at.to_dict() if self.terminated_at else None,
            "wasted": self.wasted.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class Episode:
    """A loop episode in one dimension: from its first signal to what ended it.

    ``end_stage`` is the escalation that closed it (``self_heal``, ``hitl`` when a human let
    the run continue, ``terminate``), or None when it ended without one (a WARN whose count
    fell back, or the end of the session).
    """

    dimension: str
    start_sequence: int
    end_sequence: int
    level: str
    end_stage: str | None
    signals: tuple[SignalRecord, ...]


def episodes(report: SessionReport) -> list[Episode]:
    """The session's loop episodes, in order of their first signal."""
    closing: dict[tuple[str, int], str] = {}
    for escalation in report.escalations:
        key = (escalation.dimension, escalation.sequence)
        if escalation.stage == "terminate" or key not in closing:
            closing[key] = escalation.stage
    done: list[Episode] = []
    open_: dict[str, list[SignalRecord]] = {}

    def close(dimension: str, stage: str | None) -> None:
        found = open_.pop(dimension)
        level = "term" if any(s.level == "term" for s in found) else "warn"
        done.append(
            Episode(dimension, found[0].sequence, found[-1].sequence, level, stage, tuple(found))
        )

    for signal in report.signals:
        dimension = signal.dimension
        current = open_.get(dimension)
        if current is not None and signal.level == "warn":
            close(dimension, None)  # a fresh WARN: the count fell back and rose again
        open_.setdefault(dimension, []).append(signal)
        stage = closing.get((dimension, signal.sequence))
        if stage is not None and signal.level == "term":
            close(dimension, stage)
    for dimension in list(open_):
        close(dimension, None)
    done.sort(key=lambda e: (e.start_sequence, DIMENSIONS.index(e.dimension)))
    return done


@dataclass(slots=True)
class Analysis:
    """A whole analysis: sessions, settings, input accounting."""

    sessions: list[SessionReport]
    settings: dict[str, Any]
    spans_read: int = 0
    problems: list[InputProblem] = field(default_factory=list)
    problem_counts: Counter[str] = field(default_factory=Counter)
    formats: Counter[str] = field(default_factory=Counter)
    #: What the input lacked for a full analysis (model spans without message content, and
    #: which setting turns capture on); listed in every report format, absent when empty.
    notes: list[str] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        sessions: Sequence[SessionReport],
        replayer: Any,
        *,
        spans_read: int,
        problems: Iterable[InputProblem] = (),
        problem_counts: Counter[str] | None = None,
        formats: Counter[str] | None = None,
    ) -> Analysis:
        config = replayer.config
        settings = {
            "profile": config.profile,
            "subagent_profile": config.subagent_profile,
            "hitl": replayer.hitl,
        }
        listed = list(problems)
        counts = problem_counts if problem_counts is not None else Counter(p.kind for p in listed)
        derived = getattr(replayer, "derived", None)
        notes = [
            f"{count:,} session{'s' if count != 1 else ''} had model spans without message "
            f"content and no tool spans, so their tool calls could not be read; to turn "
            f"capture on: {hint}"
            for hint, count in sorted((getattr(derived, "notes", None) or {}).items())
        ]
        return cls(
            list(sessions), settings, spans_read, listed, counts, formats or Counter(), notes
        )

    @property
    def has_loops(self) -> bool:
        return any(session.has_loop for session in self.sessions)

    def summary(self) -> dict[str, Any]:
        signals = {dimension: {"warn": 0, "term": 0} for dimension in DIMENSIONS}
        stages = dict.fromkeys(STAGES, 0)
        wasted = Wasted()
        counts = Counter[str]()
        for session in self.sessions:
            session._settle()
            for signal in session.signals:
                signals[signal.dimension][signal.level] += 1
            for escalation in session.escalations:
                stages[escalation.stage] += 1
            wasted.tool_calls += session.wasted.tool_calls
            wasted.seconds += session.wasted.seconds
            wasted.tokens += session.wasted.tokens
            counts["tool_calls"] += session.tool_calls
            counts["model_turns"] += session.model_turns
            counts["with_loops"] += session.has_loop
            counts["with_warnings_only"] += bool(session.signals) and not session.has_loop
            counts["terminated"] += session.terminated_at is not None
            counts["by_trace_id"] += session.keyed_by == "trace_id"
            counts["subagent"] += session.subagent
        return {
            "sessions": len(self.sessions),
            "sessions_with_loops": counts["with_loops"],
            "sessions_with_warnings_only": counts["with_warnings_only"],
            "terminated": counts["terminated"],
            "sessions_keyed_by_trace_id": counts["by_trace_id"],
            "subagent_sessions": counts["subagent"],
            "tool_calls": counts["tool_calls"],
            "model_turns": counts["model_turns"],
            "spans_read": self.spans_read,
            "signals": signals,
            "escalations": stages,
            "wasted": wasted.to_dict(),
            "input_problems": sum(self.problem_counts.values()),
            "input_problems_by_kind": dict(sorted(self.problem_counts.items())),
        }

    def to_dict(self) -> dict[str, Any]:
        """The ``cycleguard.analysis/v2`` document."""
        return {
            "schema": SCHEMA_ID,
            "settings": dict(self.settings),
            "summary": self.summary(),
            "sessions": [session.to_dict() for session in self.sessions],
            "problems": [
                {
                    "source": problem.source,
                    "line": problem.line,
                    "kind": problem.kind,
                    "reason": problem.reason,
                }
                for problem in self.problems[:MAX_PROBLEMS_LISTED]
            ],
            **({"notes": list(self.notes)} if self.notes else {}),
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False) + "\n"
