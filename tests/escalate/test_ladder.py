"""The escalation ladder as pure state: which stage each TERM leads to, and break success."""

from __future__ import annotations

from otel_cycleguard.detect.signals import BreakStrategy, CycleClass, Dimension, Level, Signal
from otel_cycleguard.escalate.ladder import EscalationLadder, Stage

IDENTICAL = Dimension.IDENTICAL_CALL
ERRORS = Dimension.ERROR_STREAK


def signal(dimension: Dimension, level: Level = Level.TERM, step: int | None = 0) -> Signal:
    return Signal(
        dimension=dimension,
        level=level,
        session="s",
        streak=5,
        threshold=5,
        profile="general",
        tool="grep",
        category="exploration",
        step=step,
        model_turn_index=None if step is not None else 0,
        cycle_class=CycleClass.TOOL_CYCLE,
        break_strategy=BreakStrategy.CHANGE_ARGUMENTS_OR_TOOL,
        explanation="grep repeated",
    )


def test_warn_never_climbs_the_ladder() -> None:
    ladder = EscalationLadder()
    assert [ladder.step_for(signal(IDENTICAL, Level.WARN)) for _ in range(3)] == [Stage.WARN] * 3
    assert ladder.terms(IDENTICAL) == 0
    assert ladder.step_for(signal(IDENTICAL)) is Stage.SELF_HEAL


def test_first_term_self_heals_and_later_terms_ask_a_human() -> None:
    ladder = EscalationLadder()
    stages = [ladder.step_for(signal(IDENTICAL, step=i)) for i in range(3)]
    assert stages == [Stage.SELF_HEAL, Stage.HITL, Stage.HITL]
    assert ladder.terms(IDENTICAL) == 3


def test_dimensions_climb_independently() -> None:
    ladder = EscalationLadder()
    assert ladder.step_for(signal(IDENTICAL)) is Stage.SELF_HEAL
    assert ladder.step_for(signal(ERRORS)) is Stage.SELF_HEAL
    assert ladder.step_for(signal(IDENTICAL)) is Stage.HITL
    assert ladder.step_for(signal(Dimension.TEXT_LOOP, step=None)) is Stage.SELF_HEAL
    assert ladder.terms(ERRORS) == 1


def test_human_continue_keeps_the_dimension_on_the_hitl_rung() -> None:
    ladder = EscalationLadder()
    ladder.step_for(signal(IDENTICAL))
    ladder.step_for(signal(IDENTICAL))
    ladder.human_continued(IDENTICAL)
    assert ladder.step_for(signal(IDENTICAL)) is Stage.HITL


def test_after_termination_every_term_maps_to_terminate() -> None:
    ladder = EscalationLadder()
    ladder.terminate()
    assert ladder.step_for(signal(ERRORS)) is Stage.TERMINATE
    assert ladder.step_for(signal(IDENTICAL, Level.WARN)) is Stage.WARN


def test_break_succeeds_at_session_end_once() -> None:
    ladder = EscalationLadder()
    ladder.step_for(signal(IDENTICAL, step=4))
    assert ladder.breaks_succeeded(100) == []  # no window: only the session's end decides
    assert ladder.breaks_succeeded(None, session_over=True) == [IDENTICAL]
    assert ladder.breaks_succeeded(None, session_over=True) == []


def test_a_second_term_fails_the_break() -> None:
    ladder = EscalationLadder()
    ladder.step_for(signal(IDENTICAL, step=4))
    ladder.step_for(signal(IDENTICAL, step=9))
    assert ladder.breaks_succeeded(None, session_over=True) == []


def test_break_window_counts_further_calls() -> None:
    ladder = EscalationLadder(break_window=3)
    ladder.step_for(signal(IDENTICAL, step=4))
    ladder.step_for(signal(ERRORS, step=5))
    assert ladder.breaks_succeeded(6) == []
    assert ladder.breaks_succeeded(7) == [IDENTICAL]
    assert ladder.breaks_succeeded(8) == [ERRORS]
    assert ladder.breaks_succeeded(50, session_over=True) == []


def test_a_failed_break_does_not_reopen_after_a_human_continue() -> None:
    ladder = EscalationLadder(break_window=2)
    ladder.step_for(signal(IDENTICAL, step=1))
    ladder.step_for(signal(IDENTICAL, step=2))
    ladder.human_continued(IDENTICAL)
    assert ladder.breaks_succeeded(40, session_over=True) == []
