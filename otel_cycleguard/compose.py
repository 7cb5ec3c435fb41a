"""The composition root: guard, metrics, escalation and progress store, built from the config.

:func:`otel_cycleguard.install` (in-process) and ``cycleguard serve`` (the OTLP service) assemble
the same collaborators the same way, here. Each is passed to the next through its constructor:
nothing is set on an object from outside after it was built. What differs between the two is
passed in: trace annotation (in-process only), the service's escalation journal and pending
decisions, and the span processor's drain that enforcement points run first in background mode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.escalate.directives import Mailboxes
from otel_cycleguard.escalate.engine import EscalationEngine
from otel_cycleguard.escalate.hitl import Escalator, PendingDecisions, WebhookEscalator
from otel_cycleguard.escalate.journal import EscalationJournal
from otel_cycleguard.escalate.progress import DirectoryProgressStore, ProgressStore
from otel_cycleguard.guard import CycleGuard, Observer
from otel_cycleguard.metrics import CycleGuardMetrics
from otel_cycleguard.metrics_observer import MetricsObserver

__all__ = ["Assembly", "CatchUp", "assemble", "default_escalator"]


class CatchUp:
    """What enforcement points run before reading a mailbox: background detection's drain.

    The mailboxes are built before the span processor (which needs the engine that owns
    them), so the root binds the drain here once the processor exists."""

    __slots__ = ("_drain",)

    def __init__(self) -> None:
        self._drain: Callable[[], object] | None = None

    def bind(self, drain: Callable[[], object]) -> None:
        self._drain = drain

    def __call__(self) -> None:
        drain = self._drain
        if drain is not None:
            drain()


@dataclass(frozen=True)
class Assembly:
    """The collaborators one guard runs with."""

    config: CycleGuardConfig
    guard: CycleGuard
    engine: EscalationEngine
    metrics: CycleGuardMetrics | None
    store: ProgressStore
    escalator: Escalator | None


def default_escalator(
    config: CycleGuardConfig,
    *,
    pending: PendingDecisions | None = None,
    timeout_s: float | None = None,
    secret: str | None = None,
) -> Escalator | None:
    """The webhook the configuration names (``escalation.webhook_url``), else None.
    ``secret`` overrides ``escalation.webhook_secret`` (the service's own setting)."""
    esc = config.escalation
    if not esc.webhook_url:
        return None
    return WebhookEscalator(
        esc.webhook_url,
        secret=secret or esc.webhook_secret,
        include_raw=esc.include_raw,
        pending=pending,
        timeout_s=timeout_s,
    )


def assemble(
    config: CycleGuardConfig,
    *,
    observers: Iterable[Observer] = (),
    metrics: CycleGuardMetrics | None = None,
    escalator: Escalator | None = None,
    progress_store: ProgressStore | None = None,
    journal: EscalationJournal | None = None,
    before_take: Callable[[], object] | None = None,
) -> Assembly:
    """Build the guard and its observers: ``observers`` first (annotation, the service's
    recent signals), then metrics, then the escalation engine (it may reset a dimension, so
    the others hear of a signal before it acts on it)."""
    guard = CycleGuard(config, observers=observers)
    if metrics is not None:
        guard.observers.append(MetricsObserver(metrics, guard))
    store = (
        progress_store
        if progress_store is not None
        else DirectoryProgressStore(config.escalation.progress_dir)
    )
    engine = EscalationEngine(
        guard,
        escalator=escalator,
        store=store,
        metrics=metrics,
        mailboxes=Mailboxes(config.max_sessions, before_take=before_take),
        journal=journal,
    )
    guard.observers.append(engine)
    return Assembly(config, guard, engine, metrics, store, escalator)
