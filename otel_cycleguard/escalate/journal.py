"""The seam through which an executor of the escalation policy keeps open escalations.

The live engine needs none. The OTLP service passes one (``service/escalations.py``) so an
escalation waiting for a human survives a restart: it records each one, learns when the
webhook accepted it, may answer a resumed one from the decision endpoint, and leaves open
escalations pending while the service stops (a restart is not the human's silence). The
engine calls it; it never calls the engine's private parts, and the deadline watchdog stays
the engine's, for every executor.
"""

from __future__ import annotations

from typing import Protocol

from otel_cycleguard.detect.signals import Signal
from otel_cycleguard.escalate.decisions import HumanDecision
from otel_cycleguard.escalate.hitl import EscalationRequest

__all__ = ["EscalationJournal"]


class EscalationJournal(Protocol):
    """Records the escalations an engine has open."""

    def started(self, request: EscalationRequest, signal: Signal) -> None:
        """A new escalation was opened."""

    def finished(self, request_id: str) -> None:
        """An escalation was ended (decided, timed out): forget it."""

    def leave_pending(self) -> bool:
        """True while stopping: open escalations are not to be ended by a failed ask or
        their watchdog, but resumed after the restart."""

    def resumed_decision(self, request: EscalationRequest) -> HumanDecision | None:
        """For a resumed escalation: the decision, when it is to be awaited elsewhere than
        by asking again (the webhook already accepted it); None: ask again."""
