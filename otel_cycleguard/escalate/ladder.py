"""The escalation ladder (docs/detection.md) as pure state: which step a TERM signal leads to.

Per session and per dimension: the first TERM self-heals (corrective message, counter reset);
the next TERM in the same dimension asks a human; a human's ``continue`` puts the dimension back
on the HITL rung (the next TERM asks again). One dimension's self-heal never uses up another's.
Break success: a self-healed dimension that does not reach TERM again (within ``break_window``
further tool calls when set, else for the rest of the session).
Both the live escalation engine and the offline replay drive this same object.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from otel_cycleguard.detect.signals import Dimension, Level, Signal

__all__ = ["EscalationLadder", "Stage"]


class Stage(str, enum.Enum):
    """A rung of the ladder."""

    WARN = "warn"
    SELF_HEAL = "self_heal"
    HITL = "hitl"
    TERMINATE = "terminate"


@dataclass
class _Rung:
    terms: int = 0
    healed_at_step: int | None = None
    break_open: bool = False


@dataclass
class EscalationLadder:
    """One session's position on the ladder, per dimension. Not thread-safe (caller locks)."""

    break_window: int | None = None
    terminated: bool = False
    _rungs: dict[Dimension, _Rung] = field(default_factory=dict)

    def step_for(self, signal: Signal) -> Stage:
        """The stage this signal leads to, advancing the dimension's rung on TERM."""
        if signal.level is Level.WARN:
            return Stage.WARN
        if self.terminated:
            return Stage.TERMINATE
        rung = self._rungs.setdefault(signal.dimension, _Rung())
        rung.terms += 1
        rung.break_open = False  # a TERM after a self-heal means that break failed
        if rung.terms == 1:
            rung.healed_at_step = signal.step
            rung.break_open = True
            return Stage.SELF_HEAL
        return Stage.HITL

    def human_continued(self, dimension: Dimension) -> None:
        """``continue``: the dimension stays on the HITL rung; its counter is reset elsewhere."""
        self._rungs.setdefault(dimension, _Rung(terms=1))

    def terminate(self) -> None:
        """The run is stopped: every later TERM maps to TERMINATE."""
        self.terminated = True

    def breaks_succeeded(self, step: int | None, *, session_over: bool = False) -> list[Dimension]:
        """Dimensions whose self-heal counts as a success now (each reported once).

        With a ``break_window``, a break succeeds once that many tool calls passed without a
        new TERM; without one, only when the session is over.
        """
        done: list[Dimension] = []
        for dimension, rung in self._rungs.items():
            if not rung.break_open:
                continue
            window_passed = (
                self.break_window is not None
                and step is not None
                and rung.healed_at_step is not None
                and step - rung.healed_at_step >= self.break_window
            )
            if window_passed or session_over:
                rung.break_open = False
                done.append(dimension)
        return done

    def terms(self, dimension: Dimension) -> int:
        """How many TERMs this dimension has reached in the session."""
        rung = self._rungs.get(dimension)
        return rung.terms if rung is not None else 0
