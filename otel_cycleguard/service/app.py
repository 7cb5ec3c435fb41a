"""``CycleGuardService``: OTLP receivers feeding the same guard, metrics and escalation as
the in-process plugin (mirrors :func:`otel_cycleguard.install`, minus the TracerProvider).

The service sees spans after they ended and were exported, so it cannot annotate them:
signals reach people through ``/metrics``, one structured log line per escalation step,
``GET /v1/signals``, and the HITL webhook (escalation and termination notices).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest

from otel_cycleguard.compose import assemble, default_escalator
from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.detect import Signal
from otel_cycleguard.escalate.hitl import Escalator, PendingDecisions
from otel_cycleguard.escalate.progress import ProgressStore
from otel_cycleguard.guard import Observer, SessionEntry
from otel_cycleguard.metrics import CycleGuardMetrics
from otel_cycleguard.service.engine import EscalationRecords
from otel_cycleguard.service.ingest import Ingestor
from otel_cycleguard.service.sessions import SessionResolver
from otel_cycleguard.service.settings import DEFAULT_GRPC_PORT, DEFAULT_HTTP_PORT, ServiceSettings
from otel_cycleguard.service.state import StateFile
from otel_cycleguard.spans import SpanData

__all__ = ["DEFAULT_GRPC_PORT", "DEFAULT_HTTP_PORT", "CycleGuardService", "ServiceSettings"]

logger = logging.getLogger("otel_cycleguard.service")


class RecentSignals(Observer):
    """The last signals, for ``GET /v1/signals`` (bounded)."""

    def __init__(self, size: int = 2000) -> None:
        self._items: deque[dict[str, Any]] = deque(maxlen=size)
        self._lock = threading.Lock()

    def signals(self, entry: SessionEntry, signals: list[Signal], span_ref: Any) -> None:
        now = time.time()
        with self._lock:
            for s in signals:
                self._items.append(
                    {
                        "time": now,
                        "session": s.session,
                        "agent": s.agent,
                        "dimension": s.dimension.value,
                        "level": s.level.value,
                        "streak": s.streak,
                        "threshold": s.threshold,
                        "tool": s.tool,
                        "step": s.step,
                        "model_turn_index": s.model_turn_index,
                        "explanation": s.explanation,
                        "trace_id": getattr(span_ref, "trace_id_hex", None),
                        "span_id": getattr(span_ref, "span_id_hex", None),
                    }
                )

    def list(self, session: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [s for s in self._items if session is None or s["session"] == session]


class CycleGuardService:
    """The OTLP-receiving guard. ``start()``, then ``stop()`` (drains and saves state)."""

    def __init__(
        self,
        config: CycleGuardConfig | None = None,
        settings: ServiceSettings | None = None,
        *,
        escalator: Escalator | None = None,
        progress_store: ProgressStore | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.config = config if config is not None else CycleGuardConfig()
        self.settings = settings if settings is not None else ServiceSettings()
        self.stopping = threading.Event()
        self.restored = threading.Event()
        self.registry = registry if registry is not None else CollectorRegistry()
        self.metrics = CycleGuardMetrics(self.registry, max_tools=self.config.max_tool_label_values)
        self._requests = Counter(
            "cycleguard_service_requests",
            "OTLP export requests by protocol and outcome (accepted, throttled, malformed, "
            "too_large, unauthenticated, bad_content_type, bad_encoding, no_length, unavailable).",
            ("protocol", "outcome"),
            registry=self.registry,
        )
        self._spans = Counter(
            "cycleguard_service_spans",
            "Spans received, by outcome (accepted, rejected: malformed span in an accepted "
            "request, throttled: refused with back-pressure).",
            ("protocol", "outcome"),
            registry=self.registry,
        )
        self._skipped = Counter(
            "cycleguard_service_spans_skipped",
            "Accepted spans skipped by the detection worker because reading or detecting on "
            "them raised (each is logged, at most one line a minute); their neighbours were "
            "processed.",
            registry=self.registry,
        )
        self.recent = RecentSignals()
        esc = self.config.escalation
        self.webhook_secret = self.settings.webhook_secret or esc.webhook_secret
        if self.webhook_secret != self.settings.webhook_secret:  # the config's, for the routes
            self.settings = self.settings.model_copy(update={"webhook_secret": self.webhook_secret})
        self.pending: PendingDecisions | None  # where posted decisions go (None: nowhere)
        if escalator is None:
            # The webhook's decisions arrive at our decision endpoint: the journal's.
            self.escalations = EscalationRecords(self.stopping)
            escalator = default_escalator(
                self.config,
                pending=self.escalations.decisions,
                timeout_s=self.settings.webhook_attempt_timeout_s,
                secret=self.webhook_secret,
            )
            self.pending = self.escalations.decisions if escalator is not None else None
        else:
            pending = getattr(escalator, "pending", None)
            self.pending = pending if isinstance(pending, PendingDecisions) else None
            self.escalations = EscalationRecords(self.stopping, self.pending)
        assembly = assemble(
            self.config,
            observers=[self.recent],
            metrics=self.metrics,
            escalator=escalator,
            progress_store=progress_store,
            journal=self.escalations,
        )
        self.escalator = escalator
        self.guard = assembly.guard
        self.engine = assembly.engine
        self.resolver = SessionResolver(
            self.config.delegating_tools, max_traces=max(self.config.max_sessions * 10, 1000)
        )
        self.state = StateFile(self.settings.state_file) if self.settings.state_file else None
        self.ingestor = Ingestor(
            self.guard,
            self.resolver,
            capacity_spans=self.settings.queue_spans,
            capture=self._capture_state if self.state is not None else None,
            write=self.state.write if self.state is not None else None,
            snapshot_interval_s=self.settings.snapshot_interval_s if self.state else None,
            on_skipped=self._skipped.inc,
        )
        Gauge(
            "cycleguard_service_queue_spans",
            "Spans accepted and waiting for detection.",
            registry=self.registry,
        ).set_function(lambda: self.ingestor.queued)
        Gauge(
            "cycleguard_service_queue_capacity_spans",
            "Capacity of the ingestion queue, in spans.",
            registry=self.registry,
        ).set_function(lambda: self.ingestor.capacity)
        Gauge(
            "cycleguard_service_spans_processed",
            "Spans that went through session resolution and detection since start.",
            registry=self.registry,
        ).set_function(lambda: self.ingestor.processed)
        self.http: Any = None
        self.grpc: Any = None
        self._stopped = False

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> CycleGuardService:
        """Restore saved state, start the worker, then open the ports."""
        from otel_cycleguard.service.grpc_receiver import GrpcReceiver
        from otel_cycleguard.service.http_receiver import HttpReceiver

        self.load_state()
        self.ingestor.start()
        s = self.settings
        if s.http_port is not None:
            self.http = HttpReceiver(self, s.host, s.http_port)
            self.http.start()
        if s.grpc_port is not None:
            self.grpc = GrpcReceiver(self, s.host, s.grpc_port)
            self.grpc.start()
        self.restored.set()
        logger.info("cycleguard serve listening: %s", self.describe())
        return self

    def describe(self) -> str:
        parts = []
        if self.http is not None:
            parts.append("otlp_http={}:{}".format(*self.http.address))
        if self.grpc is not None:
            parts.append("otlp_grpc={}:{}".format(*self.grpc.address))
        return " ".join(parts)

    def stop(self) -> bool:
        """Graceful shutdown: refuse new data (503/UNAVAILABLE), drain the queue, stop the
        escalation workers (pending human decisions stay pending), save state. True when
        everything accepted was processed."""
        if self._stopped:
            return True
        self._stopped = True
        self.stopping.set()
        started = time.monotonic()
        if self.grpc is not None:
            try:
                self.grpc.stop(grace_s=2.0)
            except Exception:
                logger.exception("cycleguard serve: stopping OTLP/gRPC failed")
        ing = self.ingestor
        backlog = ing.queued
        drained = ing.drain(max(0.0, self.settings.drain_timeout_s - (time.monotonic() - started)))
        if not drained:
            logger.error(
                "cycleguard serve: %d of the %d spans queued at shutdown not processed within "
                "the %.0fs drain budget (%d processed since start)",
                ing.queued,
                backlog,
                self.settings.drain_timeout_s,
                ing.processed,
            )
        try:
            self.engine.shutdown(wait=True)
        except Exception:
            logger.exception("cycleguard serve: stopping the escalation workers failed")
        saved = self.save_state_safely()
        if self.http is not None:
            self.http.stop()
        logger.info(
            "cycleguard serve stopped: %d spans processed (%d queued at shutdown, %d left) in "
            "%.1fs, state %s",
            ing.processed,
            backlog,
            ing.queued,
            time.monotonic() - started,
            ("saved" if saved else "NOT saved") if self.state else "not kept (no state file)",
        )
        return drained and saved

    # -- readiness and accounting ----------------------------------------------------------

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        queued = self.ingestor.queued
        detail = {
            "queue_spans": queued,
            "queue_capacity": self.ingestor.capacity,
            "sessions": len(self.guard),
            "restored": self.restored.is_set(),
            "stopping": self.stopping.is_set(),
        }
        ready = (
            self.restored.is_set()
            and not self.stopping.is_set()
            and queued < self.ingestor.capacity * self.settings.ready_high_water
        )
        return ready, detail

    # -- the receivers' interface (service/intake.py) --------------------------------------

    def offer(self, spans: list[SpanData]) -> bool:
        return self.ingestor.offer(spans)

    def queue_status(self) -> tuple[int, int]:
        return self.ingestor.queued, self.ingestor.capacity

    def metrics_text(self) -> bytes:
        return generate_latest(self.registry)

    def pending_requests(self) -> list[dict[str, Any]]:
        return self.escalations.pending_requests()

    def recent_signals(self, session: str | None) -> list[dict[str, Any]]:
        return self.recent.list(session)

    def resolve_decision(self, request_id: str, decision: Any, message: Any) -> bool | None:
        if self.pending is None:
            return None
        return self.pending.resolve(request_id, decision, message)

    def count_request(
        self, protocol: str, outcome: str, *, spans: int = 0, rejected: int = 0
    ) -> None:
        self._requests.labels(protocol=protocol, outcome=outcome).inc()
        if spans:
            kind = "throttled" if outcome == "throttled" else "accepted"
            self._spans.labels(protocol=protocol, outcome=kind).inc(spans)
        if rejected:
            self._spans.labels(protocol=protocol, outcome="rejected").inc(rejected)

    # -- persistence -----------------------------------------------------------------------

    def save_state(self) -> None:
        """Snapshot sessions, trace bindings, ladders and pending escalations (atomic).

        Captured under the ingestion lock, so between two items whether the worker runs or
        not (the resolver is the worker's alone and is not safe to read while it works)."""
        if self.state is None:
            return
        with self.ingestor.lock:
            body = self._capture_state()
        self.state.write(body)

    def save_state_safely(self) -> bool:
        """:meth:`save_state`, logging instead of raising (shutdown must reach its end)."""
        try:
            self.save_state()
            return True
        except Exception:
            logger.exception("cycleguard serve: the final state save failed")
            return False

    def _capture_state(self) -> bytes:
        """The state file's bytes now (call between two items: the worker, or its lock)."""
        assert self.state is not None
        return self.state.encode(
            {
                "sessions": self.guard.export_sessions(),
                "traces": self.resolver.export_state(),
                "escalation": self.escalations.export_state(self.engine),
            }
        )

    def load_state(self) -> None:
        if self.state is None:
            return
        data = self.state.load()
        if data is None:
            return
        sessions = self.guard.restore_sessions(data.get("sessions") or ())
        self.resolver.restore_state(data.get("traces") or ())
        resumed = self.escalations.restore_state(
            self.engine, self.guard, data.get("escalation") or {}
        )
        self.metrics.set_sessions_active(len(self.guard), self.guard.hibernated)
        logger.info(
            "cycleguard serve: restored %d sessions and %d pending escalations from %s",
            sessions,
            resumed,
            self.state.path,
        )
