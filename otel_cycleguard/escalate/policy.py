"""The escalation policy, pure: a signal (or a human's decision) and the ladder → actions.

``decide`` and ``on_decision`` do no I/O, take no locks and start no threads; they advance the
session's :class:`~otel_cycleguard.escalate.ladder.EscalationLadder` and say what to do. The
executors do it: the live engine (mailboxes, the guard, a human on a worker thread under the
deadline watchdog), the offline replay (a simulated human, the report) and the service (the
live engine with its pending escalations persisted). So the ladder is applied in one place
and a replay reproduces what the live run would have done.
"""

from __future__ import annotations

from dataclasses import dataclass

from otel_cycleguard.detect.signals import Dimension, Level, Signal
from otel_cycleguard.escalate.decisions import Decision, HumanDecision
from otel_cycleguard.escalate.ladder import EscalationLadder, Stage

__all__ = [
    "Action",
    "AskHuman",
    "QueueMessage",
    "ResetDimension",
    "Resume",
    "Terminate",
    "Warn",
    "corrective_message",
    "decide",
    "hint_message",
    "on_decision",
]

_STRATEGY_TEXT = {
    "change_arguments_or_tool": "Try different arguments or a different tool",
    "force_execution_or_clarify": "Stop deliberating: act on what you know, or ask the user a "
    "clarifying question",
    "reset_context_or_rollback": "Step back to the last state that worked and take another route",
}


@dataclass(frozen=True, slots=True)
class Warn:
    """A WARN: logged (and, with ``soft_hint``, a :class:`QueueMessage` follows)."""

    signal: Signal


@dataclass(frozen=True, slots=True)
class QueueMessage:
    """Leave a message for the agent in the session's mailbox (``system`` or ``user``)."""

    session: str
    role: str
    text: str
    dimension: str


@dataclass(frozen=True, slots=True)
class ResetDimension:
    """Reset the dimension of ``signal`` in its session (self-heal, a human's continue).
    ``self_heal`` tells the executors which of the two it is (metrics, the report)."""

    signal: Signal
    self_heal: bool

    @property
    def session(self) -> str:
        return self.signal.session

    @property
    def dimension(self) -> Dimension:
        return self.signal.dimension


@dataclass(frozen=True, slots=True)
class AskHuman:
    """Pause the run and ask a human, under the deadline; ``None`` escalator: see decide."""

    signal: Signal


@dataclass(frozen=True, slots=True)
class Resume:
    """The human let the run go on: lift the pause."""

    session: str


@dataclass(frozen=True, slots=True)
class Terminate:
    """Stop the run, its progress saved. ``decision`` is why (a human's, a timeout, ...)."""

    signal: Signal
    decision: HumanDecision
    hitl_decision: str


Action = Warn | QueueMessage | ResetDimension | AskHuman | Resume | Terminate

_NOBODY = HumanDecision(Decision.TIMEOUT, detail="no escalator configured: nobody can answer")


def corrective_message(signal: Signal) -> str:
    """The system message a self-heal injects: what repeated, and a way out."""
    strategy = _STRATEGY_TEXT.get(signal.break_strategy.value, "Try a different approach")
    return (
        f"[cycleguard] You appear to be stuck in a loop: {signal.explanation}. Repeating it will "
        f"not produce new information. {strategy}, or say clearly that you cannot complete the "
        "task and why."
    )


def hint_message(signal: Signal) -> str:
    """The soft hint a WARN may queue."""
    return (
        f"[cycleguard] Note: {signal.explanation}. Consider whether this is still making progress."
    )


def decide(
    signal: Signal,
    ladder: EscalationLadder | None,
    *,
    can_ask: bool = True,
    asking: bool = False,
    soft_hint: bool = False,
) -> list[Action]:
    """What one signal leads to (advancing ``ladder`` on TERM).

    ``can_ask``: a human can be asked at all (an escalator is configured); without one the
    rung that would ask terminates at once, fail-closed. ``asking``: a question for this
    session is already open, so a further TERM adds nothing.
    """
    if signal.level is Level.WARN:
        if soft_hint:
            return [
                Warn(signal),
                QueueMessage(
                    signal.session, "system", hint_message(signal), signal.dimension.value
                ),
            ]
        return [Warn(signal)]
    if ladder is None:
        raise ValueError("a TERM signal needs the session's ladder")
    stage = ladder.step_for(signal)
    if stage is Stage.SELF_HEAL:
        return [
            QueueMessage(
                signal.session, "system", corrective_message(signal), signal.dimension.value
            ),
            ResetDimension(signal, self_heal=True),
        ]
    if stage is Stage.HITL and not asking:
        if not can_ask:
            ladder.terminate()
            return [Terminate(signal, _NOBODY, "none")]
        return [AskHuman(signal)]
    return []


def on_decision(signal: Signal, decision: HumanDecision, ladder: EscalationLadder) -> list[Action]:
    """What a human's decision (or a timeout, an error) on ``signal`` leads to."""
    if decision.terminates:
        ladder.terminate()
        return [Terminate(signal, decision, decision.decision.value)]
    actions: list[Action] = []
    if decision.decision is Decision.MODIFY and decision.message:
        actions.append(
            QueueMessage(signal.session, "user", decision.message, signal.dimension.value)
        )
    ladder.human_continued(signal.dimension)
    actions.append(ResetDimension(signal, self_heal=False))
    actions.append(Resume(signal.session))
    return actions
