"""The escalation engine as the service runs it: pending human decisions survive a restart.

:class:`ServiceEscalationEngine` is the library's :class:`EscalationEngine` with two additions:
it keeps a record of every escalation waiting for a human (the request, the signal, and
whether the webhook already answered ``202``), so the state file can carry it across a
restart; and on shutdown an escalation still waiting is *left pending* rather than timed out
(which would terminate the run: fail-closed is for silence, not for our own restart). After a
restart, an escalation whose webhook answered ``202`` waits for the decision at the decision
endpoint until its original deadline; one that had not been answered is re-posted with the
same id (receivers deduplicate on it); one whose deadline passed meanwhile terminates.
"""

from __future__ import annotations

import logging
import threading
import time
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
from otel_cycleguard.guard import SessionEntry

__all__ = ["ServiceEscalationEngine", "ServicePendingDecisions"]

logger = logging.getLogger("otel_cycleguard.escalation")


class ServicePendingDecisions(PendingDecisions):
    """Decisions posted to the decision endpoint; waits end early when the service stops."""

    def __init__(self, stopping: threading.Event) -> None:
        super().__init__()
        self._stopping = stopping
        self.on_wait: Any = None  # called with the request id when a 202 wait starts

    def wait(self, request_id: str, timeout_s: float) -> HumanDecision | None:
        if self.on_wait is not None:
            self.on_wait(request_id)
        end = time.monotonic() + max(0.0, timeout_s)
        while True:
            left = end - time.monotonic()
            decision = super().wait(request_id, min(max(left, 0.0), 0.2))
            if decision is not None or left <= 0 or self._stopping.is_set():
                return decision


class ServiceEscalationEngine(EscalationEngine):
    """:class:`EscalationEngine` whose pending escalations can be saved and resumed."""

    def __init__(self, *args: Any, stopping: threading.Event | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.stopping = stopping if stopping is not None else threading.Event()
        self._records: dict[str, dict[str, Any]] = {}  # request id -> saved form
        pending = getattr(self.escalator, "pending", None)
        if isinstance(pending, ServicePendingDecisions):
            pending.on_wait = self._accepted

    # -- the protocol, recorded -----------------------------------------------------------

    def _ask_human(self, entry: SessionEntry, signal: Signal) -> None:
        request = EscalationRequest.from_signal(signal, timeout_s=self.config.hitl_timeout_s)
        with self._lock:
            self._pending[signal.session] = request.id
            self._records[request.id] = {
                "request": request.to_payload(include_raw=False),
                "signal": signal_to_dict(signal),
                "accepted": False,
            }
        self.mailboxes.pause(signal.session, request.id, request.deadline)
        self._metric("human_escalation", entry.agent, signal.dimension.value)
        self._log("hitl", signal, request=request.id)
        self._executor.submit(self._ask_and_apply, entry, signal, request)

    def _ask_and_apply(
        self, entry: SessionEntry, signal: Signal, request: EscalationRequest, resume: bool = False
    ) -> None:
        keep = False
        try:
            record = self._records.get(request.id) or {}
            if request.deadline <= time.time():
                decision = HumanDecision(
                    Decision.TIMEOUT, detail="the deadline passed while the service was down"
                )
            elif resume and record.get("accepted") and self._pending_decisions() is not None:
                pending = self._pending_decisions()
                pending.register(request.id)
                try:
                    decision = pending.wait(request.id, request.deadline - time.time()) or (
                        HumanDecision(Decision.TIMEOUT, detail="no decision before the deadline")
                    )
                finally:
                    pending.discard(request.id)
            else:
                decision = self._ask(request)
            if self.stopping.is_set() and decision.failed:
                keep = True  # interrupted by our own shutdown: resume after the restart
                return
            self._apply(entry, signal, decision)
        except Exception:
            logger.exception("otel-cycleguard escalation failed; terminating (fail-closed)")
            self._terminate(entry, signal, HumanDecision(Decision.ERROR, detail="internal error"))
        finally:
            if not keep:
                with self._lock:
                    self._pending.pop(signal.session, None)
                    self._records.pop(request.id, None)

    def _accepted(self, request_id: str) -> None:
        with self._lock:
            record = self._records.get(request_id)
            if record is not None:
                record["accepted"] = True

    def _pending_decisions(self) -> PendingDecisions | None:
        pending = getattr(self.escalator, "pending", None)
        return pending if isinstance(pending, PendingDecisions) else None

    # -- persistence ----------------------------------------------------------------------

    def export_state(self) -> dict[str, Any]:
        with self._lock:
            ladders = {key: ladder_to_dict(ladder) for key, ladder in self._ladders.items()}
            pending = [dict(record) for record in self._records.values()]
        return {"ladders": ladders, "pending": pending}

    def restore_state(self, state: dict[str, Any]) -> int:
        """Load ladders and resume pending escalations; returns how many were resumed."""
        with self._lock:
            for key, saved in (state.get("ladders") or {}).items():
                try:
                    self._ladders[key] = ladder_from_dict(saved)
                except Exception:
                    logger.warning("cycleguard serve: saved ladder of %s skipped", key)
        resumed = 0
        for record in state.get("pending") or ():
            try:
                request = request_from_payload(record["request"])
                signal = signal_from_dict(record["signal"])
            except Exception:
                logger.warning("cycleguard serve: a saved pending escalation could not be read")
                continue
            entry = self.guard.get(signal.session)
            if entry is None:
                detector = self.guard.detector.session(signal.session, agent=signal.agent)
                entry = SessionEntry(detector, signal.agent, False, time.monotonic())
            with self._lock:
                self._pending[signal.session] = request.id
                self._records[request.id] = {
                    "request": record["request"],
                    "signal": record["signal"],
                    "accepted": bool(record.get("accepted")),
                }
            self.mailboxes.pause(signal.session, request.id, request.deadline)
            self._log("hitl_resumed", signal, request=request.id)
            self._executor.submit(self._ask_and_apply, entry, signal, request, True)
            resumed += 1
        return resumed

    def pending_requests(self) -> list[dict[str, Any]]:
        """The escalations waiting for a human (for the decision endpoint's listing)."""
        with self._lock:
            return [dict(r["request"], accepted=r["accepted"]) for r in self._records.values()]


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
