"""The live two-phase escalation protocol (docs/detection.md), as an observer of the guard.

WARN annotates (and optionally queues a soft hint). The first TERM in a dimension queues a
corrective system message and resets that dimension (self-heal). The next TERM pauses the run
and asks a human on a worker thread — never on the span-processing thread — with the evidence.
``continue`` resets the dimension, ``modify`` injects the human's instruction as a user message,
``terminate``, silence past the deadline, or an escalator failure terminates the run with its
progress saved (fail-closed). Each step is one structured log line.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cachetools import LRUCache
from opentelemetry import context as otel_context

from otel_cycleguard.config import EscalationConfig
from otel_cycleguard.detect import Level, ModelTurn, Signal, ToolCall
from otel_cycleguard.detect.normalize import Normalizer
from otel_cycleguard.escalate.directives import CycleTerminated, Directive, Mailboxes
from otel_cycleguard.escalate.hitl import Decision, EscalationRequest, Escalator, HumanDecision
from otel_cycleguard.escalate.journal import EscalationJournal
from otel_cycleguard.escalate.ladder import EscalationLadder
from otel_cycleguard.escalate.policy import (
    Action,
    AskHuman,
    QueueMessage,
    ResetDimension,
    Resume,
    Terminate,
    Warn,
    corrective_message,
    decide,
    on_decision,
)
from otel_cycleguard.escalate.preview import preview_call, preview_turn
from otel_cycleguard.escalate.progress import (
    DirectoryProgressStore,
    ProgressStore,
    TerminationReason,
    TerminationRecord,
)
from otel_cycleguard.guard import CycleGuard, Observer, SessionEntry

__all__ = ["EscalationEngine", "corrective_message"]

logger = logging.getLogger("otel_cycleguard.escalation")

_SUPPRESS_KEY = getattr(otel_context, "_SUPPRESS_INSTRUMENTATION_KEY", None)
# The engine's own deadline watchdog fires this long after the escalation deadline, so an
# escalator that honours its deadline reports first; the mailbox waits 1 s past the deadline.
_WATCHDOG_SLACK_S = 0.25


@contextlib.contextmanager
def _instrumentation_suppressed() -> Iterator[None]:
    """Our own HTTP calls (webhook, notifications) must not become agent spans."""
    token = (
        otel_context.attach(otel_context.set_value(_SUPPRESS_KEY, True)) if _SUPPRESS_KEY else None
    )
    try:
        yield
    finally:
        if token is not None:
            otel_context.detach(token)


class EscalationEngine(Observer):
    """Runs the protocol for every session a :class:`CycleGuard` sees.

    Attach it with ``guard.observers.append(engine)`` (``install`` does this). ``escalator``
    is the HITL channel (webhook, callable, console); without one the second TERM terminates
    at once, since nobody can answer. ``checkpoint(session, payload)`` registers what the
    agent wants saved if it is stopped.

    The deadline is the engine's, not only the escalator's: a watchdog terminates the run when
    no decision was applied by then, whatever the escalator does, and an escalation waits for
    no other session's (each is asked on its own worker, up to ``max_workers`` at once; the
    sessions asking are bounded by ``max_sessions``).

    What to do is decided by the pure policy (``policy.py``); this class executes its actions.
    ``journal`` (the OTLP service's) records open escalations so that they survive a restart,
    and may leave them pending when the service stops; every executor goes through the same
    watchdog.
    """

    def __init__(
        self,
        guard: CycleGuard,
        *,
        escalator: Escalator | None = None,
        store: ProgressStore | None = None,
        config: EscalationConfig | None = None,
        metrics: Any = None,
        mailboxes: Mailboxes | None = None,
        max_workers: int = 256,
        journal: EscalationJournal | None = None,
    ) -> None:
        self.guard = guard
        self.config = config if config is not None else guard.config.escalation
        self.escalator = escalator
        self.store: ProgressStore = (
            store if store is not None else DirectoryProgressStore(self.config.progress_dir)
        )
        self.metrics = metrics
        self.mailboxes = (
            mailboxes if mailboxes is not None else Mailboxes(guard.config.max_sessions)
        )
        self._executor = ThreadPoolExecutor(
            max_workers=max_workers, thread_name_prefix="cycleguard-hitl"
        )
        self._lock = threading.Lock()
        # Per session, bounded like the guard's table: the least recently used go first.
        bound = max(1, guard.config.max_sessions)
        self._ladders: LRUCache[str, EscalationLadder] = LRUCache(maxsize=bound)
        self._checkpoints: LRUCache[str, Any] = LRUCache(maxsize=bound)
        # include_raw: the last call's (or turn's) short redacted preview, per session.
        self._include_raw = bool(
            self.config.include_raw or getattr(escalator, "include_raw", False)
        )
        self._previews: LRUCache[str, dict[str, Any]] = LRUCache(maxsize=bound)
        self._masker = Normalizer(
            guard.config.mask_patterns, mask_defaults=guard.config.mask_defaults
        )
        self._pending: dict[str, str] = {}  # session -> request id
        self._watchdogs: dict[str, threading.Timer] = {}  # request id -> its deadline timer
        self.journal = journal
        self._observe_only_logged = False
        self.terminations: list[tuple[str, str | None]] = []  # (session, progress ref), bounded

    # -- Observer ---------------------------------------------------------------------------

    def signals(self, entry: SessionEntry, signals: list[Signal], span_ref: Any) -> None:
        can_ask = self.escalator is not None
        soft_hint = self.config.soft_hint_on_warn
        for signal in signals:
            if signal.level is Level.WARN:
                actions = decide(signal, None, soft_hint=soft_hint)
            else:
                with self._lock:
                    actions = decide(
                        signal,
                        self._ladder(signal.session),
                        can_ask=can_ask,
                        asking=signal.session in self._pending,
                    )
            self._execute(entry, actions)
        self._report_breaks(entry, signals[-1].step)

    def _execute(self, entry: SessionEntry, actions: list[Action]) -> None:
        """Carry out the policy's actions, in order."""
        for action in actions:
            if isinstance(action, Warn):
                self._log("warn", action.signal)
            elif isinstance(action, QueueMessage):
                self.mailboxes.post(
                    action.session, Directive(action.role, action.text, action.dimension)
                )
            elif isinstance(action, ResetDimension):
                self.guard.reset(action.session, action.dimension)
                if action.self_heal:
                    self._self_healed(entry, action.signal)
            elif isinstance(action, AskHuman):
                self._ask_human(entry, action.signal)
            elif isinstance(action, Resume):
                self.mailboxes.resume(action.session)
            elif isinstance(action, Terminate):
                if action.hitl_decision == "none":
                    # Nobody to ask: fail closed at once. Not counted as a human escalation or
                    # a decision, so human_escalation_rate only reflects questions really asked.
                    self._log("hitl", action.signal, escalator="none")
                self._terminate(
                    entry, action.signal, action.decision, hitl_decision=action.hitl_decision
                )

    def tool_call(self, entry: SessionEntry, call: ToolCall) -> None:
        if self._include_raw:
            self._keep_preview(entry, preview_call(call, self._masker))
        # With a break_window, a self-heal succeeds once that many further calls passed without
        # a TERM; healthy calls fire no signal, so count them here. The window is judged up to
        # the previous call: this call's own signals (heard next) may still break it.
        if self.config.break_window is not None:
            self._report_breaks(entry, entry.detector.tool_calls - 2)

    def model_turn(self, entry: SessionEntry, turn: ModelTurn) -> None:
        if self._include_raw:
            self._keep_preview(entry, preview_turn(turn, self._masker))

    def _keep_preview(self, entry: SessionEntry, preview: dict[str, Any]) -> None:
        with self._lock:
            self._previews[entry.key] = preview

    def session_evicted(self, entry: SessionEntry, cause: str) -> None:
        with self._lock:
            self._previews.pop(entry.key, None)
            ladder = self._ladders.pop(entry.key, None)
        if ladder is not None:
            for dimension in ladder.breaks_succeeded(None, session_over=True):
                self._metric("break_succeeded", entry.agent, dimension.value)

    # -- public API -------------------------------------------------------------------------

    def checkpoint(self, session: str, payload: Any) -> None:
        """Register the payload saved with the progress if this session is terminated."""
        with self._lock:
            self._checkpoints[session] = payload

    def session_ended(self, entry: SessionEntry) -> None:
        """Observer hook: the session's root agent span ended (see :meth:`end_session`)."""
        self.end_session(entry.key)

    def end_session(self, session: str) -> None:
        """A run finished: self-heals that held until now count as successful breaks.

        The ladder is kept: a conversation may continue in a later run under the same key,
        and a dimension that self-healed before goes to a human on its next TERM.
        """
        entry = self.guard.get(session)
        with self._lock:
            ladder = self._ladders.get(session)
        if ladder is not None:
            agent = entry.agent if entry is not None else None
            for dimension in ladder.breaks_succeeded(None, session_over=True):
                self._metric("break_succeeded", agent, dimension.value)

    def shutdown(self, wait: bool = True) -> None:
        """Stop the worker threads (pending questions run to their deadline when ``wait``).

        When the journal leaves escalations pending (the service stopping), their watchdogs
        are stopped too: they are resumed, with their deadline, after the restart."""
        self._executor.shutdown(wait=wait, cancel_futures=not wait)
        if self._leaving_pending():
            with self._lock:
                watchdogs = list(self._watchdogs.values())
                self._watchdogs.clear()
            for watchdog in watchdogs:
                watchdog.cancel()

    # -- the service's persistence (through the journal) -------------------------------------

    def ladders(self) -> dict[str, EscalationLadder]:
        """A copy of the sessions' ladders (to save; the caller holds no engine lock)."""
        with self._lock:
            return dict(self._ladders)

    def restore_ladders(self, ladders: dict[str, EscalationLadder]) -> None:
        with self._lock:
            self._ladders.update(ladders)

    # -- steps ------------------------------------------------------------------------------

    def _self_healed(self, entry: SessionEntry, signal: Signal) -> None:
        """After a self-heal's message and reset: count it, log it, say if nobody enforces."""
        self._metric("self_heal", entry.agent, signal.dimension.value)
        self._log("self_heal", signal)
        if not self.mailboxes.enforcement_seen and not self._observe_only_logged:
            self._observe_only_logged = True
            logger.warning(
                "otel-cycleguard is observe-only: no enforcement point (check(), the tool "
                "decorator or a framework adapter) has run, so corrective messages and "
                "terminations cannot reach the agent; detection, traces, metrics and the "
                "webhook still work"
            )

    def _ask_human(self, entry: SessionEntry, signal: Signal) -> None:
        with self._lock:
            preview = self._previews.get(signal.session) if self._include_raw else None
        request = EscalationRequest.from_signal(
            signal, timeout_s=self.config.hitl_timeout_s, raw_preview=preview
        )
        if self.journal is not None:
            self.journal.started(request, signal)
        self._open(entry, signal, request, "hitl")
        self._metric("human_escalation", entry.agent, signal.dimension.value)

    def resume_escalation(
        self, entry: SessionEntry, signal: Signal, request: EscalationRequest
    ) -> None:
        """Re-open an escalation saved before a restart (the journal holds its record)."""
        self._open(entry, signal, request, "hitl_resumed", resume=True)

    def _open(
        self,
        entry: SessionEntry,
        signal: Signal,
        request: EscalationRequest,
        step: str,
        *,
        resume: bool = False,
    ) -> None:
        """Pause the session, start the deadline watchdog, ask on a worker: the one way every
        escalation (new or resumed, live or in the service) is put to a human."""
        with self._lock:
            self._pending[signal.session] = request.id
        self.mailboxes.pause(signal.session, request.id, request.deadline)
        self._log(step, signal, request=request.id)
        watchdog = threading.Timer(
            max(0.0, request.deadline - time.time()) + _WATCHDOG_SLACK_S,
            self._expire,
            args=(entry, signal, request),
        )
        watchdog.daemon = True
        with self._lock:
            self._watchdogs[request.id] = watchdog
        watchdog.start()
        try:
            self._executor.submit(self._ask_and_apply, entry, signal, request, watchdog, resume)
        except RuntimeError:  # shut down: nobody will ask, the watchdog terminates
            logger.warning(
                "otel-cycleguard engine shut down; escalation %s fails closed", request.id
            )

    def _claim(self, session: str, request_id: str) -> bool:
        """Exactly one of the worker and the watchdog may end an escalation."""
        with self._lock:
            if self._pending.get(session) != request_id:
                return False
            del self._pending[session]
            self._watchdogs.pop(request_id, None)
        if self.journal is not None:
            self.journal.finished(request_id)
        return True

    def _leaving_pending(self) -> bool:
        """The service is stopping: open escalations stay open for after the restart."""
        return self.journal is not None and self.journal.leave_pending()

    def _expire(self, entry: SessionEntry, signal: Signal, request: EscalationRequest) -> None:
        """The deadline passed with no decision applied: terminate (fail-closed)."""
        if self._leaving_pending() or not self._claim(signal.session, request.id):
            return
        with _instrumentation_suppressed():
            try:
                self._apply(
                    entry,
                    signal,
                    HumanDecision(Decision.TIMEOUT, detail="no decision before the deadline"),
                )
            except Exception:
                logger.exception("otel-cycleguard could not terminate a timed-out escalation")

    def _ask_and_apply(
        self,
        entry: SessionEntry,
        signal: Signal,
        request: EscalationRequest,
        watchdog: threading.Timer,
        resume: bool = False,
    ) -> None:
        with self._lock:
            expired = self._pending.get(signal.session) != request.id
        if expired:  # queued past its deadline: the watchdog already ended it
            return
        with _instrumentation_suppressed():
            decision = None
            if request.deadline <= time.time():
                decision = HumanDecision(
                    Decision.TIMEOUT, detail="the deadline passed before it could be asked"
                )
            elif resume and self.journal is not None:
                decision = self.journal.resumed_decision(request)
            if decision is None:
                decision = self._ask(request)
            if decision.failed and self._leaving_pending():
                return  # interrupted by the service's own shutdown: resumed after the restart
            if not self._claim(signal.session, request.id):
                logger.warning(
                    "otel-cycleguard: decision %s for %s came after the deadline; ignored",
                    decision.decision.value,
                    request.id,
                )
                return
            watchdog.cancel()
            try:
                self._apply(entry, signal, decision)
            except Exception:
                logger.exception("otel-cycleguard escalation failed; terminating (fail-closed)")
                self._terminate(
                    entry, signal, HumanDecision(Decision.ERROR, detail="internal error")
                )

    def _ask(self, request: EscalationRequest) -> HumanDecision:
        if self.escalator is None:
            return HumanDecision(
                Decision.TIMEOUT, detail="no escalator configured: nobody can answer"
            )
        remaining = max(0.0, request.deadline - time.time())
        try:
            decision = self.escalator.ask(request, remaining)
        except Exception as exc:  # an escalator must not raise; if it does, that is a no
            logger.warning("otel-cycleguard escalator %r raised %r", self.escalator, exc)
            return HumanDecision(
                Decision.ERROR, detail=f"escalator raised {type(exc).__name__}: {exc}"
            )
        if not isinstance(decision, HumanDecision):
            return HumanDecision(
                Decision.ERROR, detail=f"escalator returned {type(decision).__name__}"
            )
        return decision

    def _apply(self, entry: SessionEntry, signal: Signal, decision: HumanDecision) -> None:
        self._metric("hitl_decision", entry.agent, decision.decision.value)
        self._log("decision", signal, decision=decision.decision.value, detail=decision.detail)
        with self._lock:
            actions = on_decision(signal, decision, self._ladder(signal.session))
        self._execute(entry, actions)

    def _terminate(
        self,
        entry: SessionEntry,
        signal: Signal,
        decision: HumanDecision,
        *,
        hitl_decision: str | None = None,
    ) -> None:
        with self._lock:
            self._ladder(signal.session).terminate()
            checkpoint = self._checkpoints.get(signal.session)
        reason = TerminationReason.for_dimension(signal.dimension)
        record = TerminationRecord.from_signal(
            signal,
            counters=self.guard.counters(signal.session),
            checkpoint=checkpoint,
            hitl_decision=hitl_decision or decision.decision.value,
            reason=reason,
        )
        ref = self._save(record)
        self.mailboxes.terminate(
            signal.session, CycleTerminated(signal.session, reason.value, reason.user_message, ref)
        )
        self.terminations.append((signal.session, ref))
        del self.terminations[:-1000]
        self._metric("termination", entry.agent, reason.value)
        self._log(
            "terminate", signal, reason=reason.value, progress=ref, decision=decision.decision.value
        )
        notify = getattr(self.escalator, "notify_termination", None)
        if callable(notify):
            try:
                notify(record, ref=ref)
            except Exception:
                logger.warning("otel-cycleguard: termination notification failed", exc_info=True)

    def _save(self, record: TerminationRecord) -> str | None:
        try:
            return self.store.save(record)
        except (TypeError, ValueError):
            logger.warning(
                "otel-cycleguard: checkpoint not JSON-serialisable; saving progress without it"
            )
            try:
                return self.store.save(
                    TerminationRecord.from_dict({**record.to_dict(), "checkpoint": None})
                )
            except Exception:
                logger.exception("otel-cycleguard: could not save progress")
        except Exception:
            logger.exception("otel-cycleguard: could not save progress")
        return None

    # -- helpers ----------------------------------------------------------------------------

    def _ladder(self, session: str) -> EscalationLadder:
        ladder = self._ladders.get(session)
        if ladder is None:
            ladder = self._ladders[session] = EscalationLadder(
                break_window=self.config.break_window
            )
        return ladder

    def _report_breaks(self, entry: SessionEntry, step: int | None) -> None:
        if self.config.break_window is None:
            return
        with self._lock:
            ladder = self._ladders.get(entry.key)
            done = ladder.breaks_succeeded(step) if ladder is not None else []
        for dimension in done:
            self._metric("break_succeeded", entry.agent, dimension.value)

    def _metric(self, method: str, *args: Any, **kwargs: Any) -> None:
        if self.metrics is not None:
            getattr(self.metrics, method)(*args, **kwargs)

    @staticmethod
    def _log(step: str, signal: Signal, **fields: Any) -> None:
        extra = " ".join(f"{k}={v}" for k, v in fields.items())
        logger.info(
            "cycleguard step=%s session=%s agent=%s dimension=%s level=%s streak=%d threshold=%d "
            "tool=%s index=%s %s",
            step,
            signal.session,
            signal.agent,
            signal.dimension.value,
            signal.level.value,
            signal.streak,
            signal.threshold,
            signal.tool,
            signal.step if signal.step is not None else f"turn:{signal.model_turn_index}",
            extra,
            extra={"cycleguard": {"step": step, "dimension": signal.dimension.value, **fields}},
        )
