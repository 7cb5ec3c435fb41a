"""The service's escalation journal: pending human decisions survive a restart.

The service runs the library's :class:`~otel_cycleguard.escalate.engine.EscalationEngine`
(composed, not subclassed) with an :class:`EscalationRecords` as its journal. The journal keeps
a record of every escalation waiting for a human (the request, the signal, and whether the
webhook already answered ``202``), so the state file can carry it across a restart; and on
shutdown an escalation still waiting is *left pending* rather than timed out (which would
terminate the run: fail-closed is for silence, not for our own restart). After a restart, an
escalation whose webhook answered ``202`` waits for the decision at the decision endpoint until
its original deadline; one that had not been answered is re-posted with the same id (receivers
deduplicate on it); one whose deadline passed meanwhile terminates. The engine's deadline
watchdog covers all of them, as it does in-process.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from otel_cycleguard.detect import Dimension, Level, Signal
from otel_cycleguard.detect.signals import BreakStrategy, CallDigest, CycleClass
from otel_cycleguard.escalate.engine import EscalationEngine
from otel_cycleguard.escalate.hitl import (
    Decision,
    EscalationRequest,
    HumanDecision,
    PendingDecisions,
)
from otel_cycleguard.escalate.ladder import EscalationLadder, _Rung
from otel_cycleguard.guard import CycleGuard, SessionEntry

__all__ = ["EscalationRecords", "ServicePendingDecisions"]

logger = logging.getLogger("otel_cycleguard.escalation")


class ServicePendingDecisions(PendingDecisions):
    """Decisions posted to the decision endpoint; waits end early when the service stops.

    ``on_wait`` is called with the request id when a ``202`` wait starts (the webhook
    accepted the escalation): the journal records it."""

    def __init__(
        self, stopping: threading.Event, on_wait: Callable[[str], None] | None = None
    ) -> None:
        super().__init__()
        self._stopping = stopping
        self._on_wait = on_wait

    def wait(self, request_id: str, timeout_s: float) -> HumanDecision | None:
        if self._on_wait is not None:
            self._on_wait(request_id)
        end = time.monotonic() + max(0.0, timeout_s)
        while True:
            left = end - time.monotonic()
            decision = super().wait(request_id, min(max(left, 0.0), 0.2))
            if decision is not None or left <= 0 or self._stopping.is_set():
                return decision


class EscalationRecords:
    """The journal (:class:`~otel_cycleguard.escalate.journal.EscalationJournal`) of the
    service: open escalations by request id, in the form the state file keeps.

    ``decisions`` is where decisions posted to the decision endpoint arrive: by default its
    own :class:`ServicePendingDecisions`, which tells this journal when the webhook accepted
    an escalation; or the one of an escalator passed in."""

    def __init__(
        self, stopping: threading.Event, decisions: PendingDecisions | None = None
    ) -> None:
        self.stopping = stopping
        self.decisions = (
            decisions
            if decisions is not None
            else ServicePendingDecisions(stopping, on_wait=self.accepted)
        )
        self._lock = threading.Lock()
        self._records: dict[str, dict[str, Any]] = {}  # request id -> saved form

    # -- EscalationJournal ---------------------------------------------------------------

    def started(self, request: EscalationRequest, signal: Signal) -> None:
        with self._lock:
            self._records[request.id] = {
                "request": request.to_payload(include_raw=False),
                "signal": signal_to_dict(signal),
                "accepted": False,
            }

    def finished(self, request_id: str) -> None:
        with self._lock:
            self._records.pop(request_id, None)

    def leave_pending(self) -> bool:
        return self.stopping.is_set()

    def resumed_decision(self, request: EscalationRequest) -> HumanDecision | None:
        with self._lock:
            record = self._records.get(request.id) or {}
        if not record.get("accepted"):
            return None  # the webhook never accepted it: post it again (same id)
        pending = self.decisions
        pending.register(request.id)
        try:
            return pending.wait(request.id, request.deadline - time.time()) or HumanDecision(
                Decision.TIMEOUT, detail="no decision before the deadline"
            )
        finally:
            pending.discard(request.id)

    def accepted(self, request_id: str) -> None:
        """The webhook answered ``202``: after a restart, wait for the decision endpoint."""
        with self._lock:
            record = self._records.get(request_id)
            if record is not None:
                record["accepted"] = True

    # -- listing and persistence ---------------------------------------------------------

    def pending_requests(self) -> list[dict[str, Any]]:
        """The escalations waiting for a human (for the decision endpoint's listing)."""
        with self._lock:
            return [dict(r["request"], accepted=r["accepted"]) for r in self._records.values()]

    def export_state(self, engine: EscalationEngine) -> dict[str, Any]:
        ladders = {key: ladder_to_dict(ladder) for key, ladder in engine.ladders().items()}
        with self._lock:
            pending = [dict(record) for record in self._records.values()]
        return {"ladders": ladders, "pending": pending}

    def restore_state(
        self, engine: EscalationEngine, guard: CycleGuard, state: dict[str, Any]
    ) -> int:
        """Load ladders and resume pending escalations; returns how many were resumed."""
        ladders = {}
        for key, saved in (state.get("ladders") or {}).items():
            try:
                ladders[key] = ladder_from_dict(saved)
            except Exception:
                logger.warning("cycleguard serve: saved ladder of %s skipped", key)
        engine.restore_ladders(ladders)
        resumed = 0
        for record in state.get("pending") or ():
            try:
                request = request_from_payload(record["request"])
                signal = signal_from_dict(record["signal"])
            except Exception:
                logger.warning("cycleguard serve: a saved pending escalation could not be read")
                continue
            entry = guard.get(signal.session)
            if entry is None:
                detector = guard.detector.session(signal.session, agent=signal.agent)
                entry = SessionEntry(detector, signal.agent, False, time.monotonic())
            with self._lock:
                self._records[request.id] = {
                    "request": record["request"],
                    "signal": record["signal"],
                    "accepted": bool(record.get("accepted")),
                }
            engine.resume_escalation(entry, signal, request)
            resumed += 1
        return resumed


# ------------------------------------------------------------------------------ codecs


def signal_to_dict(signal: Signal) -> dict[str, Any]:
    return {
        "dimension": signal.dimension.value,
        "level": signal.level.value,
        "session": signal.session,
        "streak": signal.streak,
        "threshold": signal.threshold,
        "profile": signal.profile,
        "tool": signal.tool,
        "category": signal.category,
        "step": signal.step,
        "model_turn_index": signal.model_turn_index,
        "cycle_class": signal.cycle_class.value,
        "break_strategy": signal.break_strategy.value,
        "explanation": signal.explanation,
        "evidence": [[d.tool, d.args_hash, d.result_hash, d.error] for d in signal.evidence],
        "unit": list(signal.unit),
        "agent": signal.agent,
        "span_id": signal.span_id,
        "rule": signal.rule,
    }


def signal_from_dict(data: dict[str, Any]) -> Signal:
    return Signal(
        dimension=Dimension(data["dimension"]),
        level=Level(data["level"]),
        session=data["session"],
        streak=int(data["streak"]),
        threshold=int(data["threshold"]),
        profile=data["profile"],
        tool=data.get("tool"),
        category=data.get("category"),
        step=data.get("step"),
        model_turn_index=data.get("model_turn_index"),
        cycle_class=CycleClass(data["cycle_class"]),
        break_strategy=BreakStrategy(data["break_strategy"]),
        explanation=data["explanation"],
        evidence=tuple(CallDigest(t, a, r, bool(e)) for t, a, r, e in data.get("evidence", ())),
        unit=tuple(data.get("unit", ())),
        agent=data.get("agent"),
        span_id=data.get("span_id"),
        rule=data.get("rule") or "",
    )


def request_from_payload(payload: dict[str, Any]) -> EscalationRequest:
    return EscalationRequest(
        session=payload["session"],
        dimension=payload["dimension"],
        streak=int(payload["streak"]),
        threshold=int(payload["threshold"]),
        explanation=payload["explanation"],
        deadline=float(payload["deadline"]),
        agent=payload.get("agent"),
        unit=tuple(payload.get("unit", ())),
        evidence=tuple(dict(e) for e in payload.get("evidence", ())),
        choices=tuple(payload.get("choices", ("continue", "terminate", "modify"))),
        id=payload["id"],
        rule=payload.get("rule") or "",
    )


def ladder_to_dict(ladder: EscalationLadder) -> dict[str, Any]:
    return {
        "break_window": ladder.break_window,
        "terminated": ladder.terminated,
        "rungs": {
            d.value: [r.terms, r.healed_at_step, r.break_open] for d, r in ladder._rungs.items()
        },
    }


def ladder_from_dict(data: dict[str, Any]) -> EscalationLadder:
    ladder = EscalationLadder(break_window=data.get("break_window"))
    ladder.terminated = bool(data.get("terminated"))
    for name, (terms, healed, open_) in (data.get("rungs") or {}).items():
        ladder._rungs[Dimension(name)] = _Rung(int(terms), healed, bool(open_))
    return ladder
