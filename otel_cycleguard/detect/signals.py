"""What the detector emits: levels, dimensions, cycle classes and the Signal record."""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "DIMENSIONS",
    "RULES",
    "BreakStrategy",
    "CallDigest",
    "CycleClass",
    "Dimension",
    "Level",
    "Signal",
]


class Level(str, enum.Enum):
    """How far a dimension's count has gone: WARN annotates, TERM escalates."""

    WARN = "warn"
    TERM = "term"


class Dimension(str, enum.Enum):
    """The eight loop dimensions, in the order docs/detection.md lists them (the escalation order)."""

    IDENTICAL_CALL = "identical_call"
    CATEGORY_STREAK = "category_streak"
    TOOL_PATTERN = "tool_pattern"
    POLL_NO_PROGRESS = "poll_no_progress"
    ERROR_STREAK = "error_streak"
    TEXT_LOOP = "text_loop"
    STATE_HASH = "state_hash"
    BUDGET = "budget"


DIMENSIONS: tuple[str, ...] = tuple(d.value for d in Dimension)

#: Every name a signal's ``rule`` can take: each dimension's own counter, then the rules for
#: loops real agents fall into (docs/detection.md), each reported under one dimension.
RULES: tuple[str, ...] = (
    *DIMENSIONS,
    "replay_cycle",
    "edit_without_effect",
    "nothing_new",
    "near_duplicate_edit",
    "repeated_failure",
    "recurring_failure",
    "failure_density",
    "same_error",
    "failed_lookups",
)


class CycleClass(str, enum.Enum):
    """What kind of cycle a signal points at; decides the suggested break strategy."""

    TOOL_CYCLE = "tool_cycle"
    REASONING_CYCLE = "reasoning_cycle"
    MIXED_CYCLE = "mixed_cycle"


class BreakStrategy(str, enum.Enum):
    """Suggested way out of a cycle, one per cycle class (docs/detection.md, "Signals")."""

    CHANGE_ARGUMENTS_OR_TOOL = "change_arguments_or_tool"
    FORCE_EXECUTION_OR_CLARIFY = "force_execution_or_clarify"
    RESET_CONTEXT_OR_ROLLBACK = "reset_context_or_rollback"


@dataclass(frozen=True, slots=True)
class CallDigest:
    """A hashed trace of one call kept as evidence: never the raw arguments or result."""

    tool: str
    args_hash: str
    result_hash: str
    error: bool = False


@dataclass(frozen=True, slots=True)
class Signal:
    """One WARN or TERM crossing of one dimension in one session.

    ``step`` is the 0-based index of the tool call that fired it among the session's tool
    calls, or ``None`` when a model turn fired it (then ``model_turn_index`` is set).
    ``unit`` names the repeated unit (tool names) for pattern-like dimensions. ``rule`` names
    what fired inside the dimension: the dimension's own counter (``rule`` equals the
    dimension's name) or one of the real-world rules (``replay_cycle``, ``same_error``...).
    """

    dimension: Dimension
    level: Level
    session: str
    streak: int
    threshold: int
    profile: str
    tool: str | None
    category: str | None
    step: int | None
    model_turn_index: int | None
    cycle_class: CycleClass
    break_strategy: BreakStrategy
    explanation: str
    evidence: tuple[CallDigest, ...] = ()
    unit: tuple[str, ...] = ()
    agent: str | None = None
    span_id: str | None = None
    rule: str = ""

    def __post_init__(self) -> None:
        if not self.rule:  # the dimension's own counter
            object.__setattr__(self, "rule", self.dimension.value)

    def as_attributes(self, prefix: str = "cycleguard.") -> dict[str, str | int]:
        """Flat, OTLP-safe attributes for span events and logs (no raw content)."""
        attrs: dict[str, str | int] = {
            f"{prefix}dimension": self.dimension.value,
            f"{prefix}level": self.level.value,
            f"{prefix}rule": self.rule,
            f"{prefix}session": self.session,
            f"{prefix}streak": self.streak,
            f"{prefix}threshold": self.threshold,
            f"{prefix}profile": self.profile,
            f"{prefix}cycle_class": self.cycle_class.value,
            f"{prefix}break_strategy": self.break_strategy.value,
            f"{prefix}explanation": self.explanation,
        }
        if self.tool is not None:
            attrs[f"{prefix}tool"] = self.tool
        if self.category is not None:
            attrs[f"{prefix}category"] = self.category
        if self.step is not None:
            attrs[f"{prefix}step"] = self.step
        if self.model_turn_index is not None:
            attrs[f"{prefix}model_turn_index"] = self.model_turn_index
        if self.unit:
            attrs[f"{prefix}unit"] = " -> ".join(self.unit)
        if self.evidence:
            attrs[f"{prefix}evidence"] = "; ".join(
                f"{d.tool}#{d.args_hash[:8]}:{d.result_hash[:8]}{'!' if d.error else ''}"
                for d in self.evidence
            )
        if self.agent is not None:
            attrs[f"{prefix}agent"] = self.agent
        return attrs
