"""Feeds :class:`~otel_cycleguard.metrics.CycleGuardMetrics` from what the guard observes.

Escalation steps (self-heals, human escalations, decisions, terminations) are counted by the
escalation engine itself; this observer counts traffic, signals and session lifecycle.
"""

from __future__ import annotations

from typing import Any

from otel_cycleguard.detect import Level, ModelTurn, Signal, ToolCall
from otel_cycleguard.guard import CycleGuard, Observer, SessionEntry
from otel_cycleguard.metrics import CycleGuardMetrics

__all__ = ["MetricsObserver"]

_CYCLE_COUNTED = "metrics.cycle_counted"


class MetricsObserver(Observer):
    """Counts tool calls, model turns, signals, sessions and first cycles."""

    def __init__(self, metrics: CycleGuardMetrics, guard: CycleGuard | None = None) -> None:
        self.metrics = metrics
        self.guard = guard

    def session_started(self, entry: SessionEntry) -> None:
        self.metrics.session_started(entry.agent)
        self._active()

    def session_evicted(self, entry: SessionEntry, cause: str) -> None:
        self.metrics.session_evicted(cause)
        self._active()

    def tool_call(self, entry: SessionEntry, call: ToolCall) -> None:
        self.metrics.tool_call(entry.agent, call.tool)

    def model_turn(self, entry: SessionEntry, turn: ModelTurn) -> None:
        self.metrics.model_turn(entry.agent)

    def signals(self, entry: SessionEntry, signals: list[Signal], span_ref: Any) -> None:
        for signal in signals:
            self.metrics.signal(
                entry.agent, signal.dimension, signal.level, tool=signal.tool, rule=signal.rule
            )
            if signal.level is Level.TERM:
                extra = entry.extra if entry.extra is not None else {}
                if not extra.get(_CYCLE_COUNTED):
                    extra[_CYCLE_COUNTED] = True
                    entry.extra = extra
                    steps = (
                        (signal.step + 1) if signal.step is not None else entry.detector.tool_calls
                    )
                    self.metrics.session_with_cycle(entry.agent, steps)

    def _active(self) -> None:
        if self.guard is not None:
            self.metrics.set_sessions_active(len(self.guard), self.guard.hibernated)
