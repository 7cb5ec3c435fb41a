"""The bounded ingestion queue and the single worker that feeds the guard.

Receivers (OTLP/HTTP handler threads, gRPC workers) convert a request, then ``offer`` its spans
as one item. The queue is bounded in *spans*: an item that does not fit is refused whole and
the receiver answers with OTLP back-pressure (HTTP 429 / gRPC ``RESOURCE_EXHAUSTED`` with a
retry hint), so the sender keeps the data and retries. Once accepted, spans are never dropped:
shutdown drains the queue before the state is saved.

One worker thread (the package's shared :class:`~otel_cycleguard.worker.Worker`, as the span
processor's background mode uses) resolves sessions and runs detection, so the spans of a session are
processed in arrival order and the resolver needs no lock. It also captures the periodic state
snapshot *between* items, so a snapshot is always consistent with what was processed; the
file is written by a thread of its own, and the next capture waits at least nine times as
long as the last one took, so snapshots never take more than a tenth of detection's time.
``lock`` is held while an item is processed: whoever else captures state (the final save on
shutdown) holds it too.
"""

from __future__ import annotations

import logging
import operator
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from otel_cycleguard._ratelog import RateLimitedLog
from otel_cycleguard.guard import CycleGuard
from otel_cycleguard.pipeline import SpanPipeline
from otel_cycleguard.service.sessions import Resolved, SessionResolver
from otel_cycleguard.spans import SpanData, SpanRef
from otel_cycleguard.worker import Worker

__all__ = ["Ingestor"]

logger = logging.getLogger("otel_cycleguard.service")


class Ingestor:
    """Bounded span queue + one detection worker."""

    def __init__(
        self,
        guard: CycleGuard,
        resolver: SessionResolver,
        *,
        capacity_spans: int = 200_000,
        capture: Callable[[], Any] | None = None,
        write: Callable[[Any], None] | None = None,
        snapshot_interval_s: float | None = None,
        on_processed: Callable[[int], None] | None = None,
        on_skipped: Callable[[], None] | None = None,
    ) -> None:
        if capacity_spans < 1:
            raise ValueError("capacity_spans must be >= 1")
        self.guard = guard
        self.resolver = resolver
        self.capacity = capacity_spans
        self._items: deque[list[SpanData]] = deque()
        self._queued = 0
        self._busy = 0  # spans taken by the worker but not yet processed
        self._cond = threading.Condition()
        self.lock = threading.Lock()  # held while an item is processed (consistent captures)
        self._stop = False
        self._deadline = float("inf")  # when stopping: leave what is still queued after it
        self._capture = capture
        self._write = write
        self._interval = snapshot_interval_s if capture is not None else None
        self._next_snapshot = time.monotonic() + (snapshot_interval_s or 0)
        self._writing = threading.Event()  # a snapshot is being written
        self._writer: threading.Thread | None = None
        self.snapshots = 0
        self._on_processed = on_processed
        self._on_skipped = on_skipped
        self._skip_log = RateLimitedLog(logger, 60.0)
        self.processed = 0
        self.skipped = 0  # spans accepted but skipped: reading or detecting on them raised
        self.accepted = 0
        self.refused = 0
        # classify → derive → record → guard, shared with the processor and the replay
        # (worker-owned: one thread feeds it).
        self.pipeline = SpanPipeline(guard)
        self.derived = self.pipeline.derived
        self._worker = Worker("cycleguard-ingest", self._step, self._snapshot_timeout)

    def start(self) -> None:
        self._worker.start()

    # -- receivers' side -----------------------------------------------------------------

    def offer(self, spans: list[SpanData]) -> bool:
        """Queue one request's spans; False (nothing queued) when they do not fit."""
        n = len(spans)
        if n == 0:
            return True
        with self._cond:
            if self._stop or self._queued + n > self.capacity:
                self.refused += n
                return False
            self._items.append(spans)
            self._queued += n
            self.accepted += n
        self._worker.wake()
        return True

    @property
    def queued(self) -> int:
        """Spans accepted and not yet processed."""
        return self._queued + self._busy

    def fill_ratio(self) -> float:
        return self.queued / self.capacity

    # -- lifecycle -----------------------------------------------------------------------

    def drain(self, timeout_s: float = 30.0) -> bool:
        """Refuse new spans, process what is queued within ``timeout_s``, stop the worker.

        True when everything was processed. At the deadline the worker stops after the item
        in hand and what is left stays queued (counted in ``queued``), so a save that follows
        sees a consistent state. No periodic snapshot is taken while draining."""
        with self._cond:
            self._stop = True
            self._deadline = time.monotonic() + timeout_s
        self._worker.stop(timeout_s + 5.0)  # + the item in hand at the deadline
        writer = self._writer
        if writer is not None:
            writer.join(10.0)  # a periodic write in flight finishes before the final save
        return not self._worker.is_alive() and self.queued == 0

    def wait_idle(self, timeout_s: float = 10.0) -> bool:
        """Block until everything accepted so far has been processed (tests, benchmarks)."""
        end = time.monotonic() + timeout_s
        with self._cond:
            while self._queued or self._busy:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))
        return True

    # -- worker --------------------------------------------------------------------------

    def _snapshot_timeout(self) -> float | None:
        """How long the worker may sleep: until the next periodic snapshot, or until woken."""
        if self._interval and not self._stop:
            return max(0.0, self._next_snapshot - time.monotonic())
        return None

    def _step(self) -> None:
        """Process what is queued in arrival order (when stopping: until the deadline; the rest
        stays queued), then take the periodic snapshot if it is due."""
        cond = self._cond
        while True:
            with cond:
                if not self._items or (self._stop and time.monotonic() >= self._deadline):
                    break
                item = self._items.popleft()
                self._queued -= len(item)
                self._busy = len(item)
            try:
                with self.lock:
                    self.process(item)
            except Exception:  # a bug must not stop ingestion
                logger.exception("cycleguard serve: a batch failed in detection; continuing")
            finally:
                with cond:
                    self._busy = 0
                    self.processed += len(item)
                    cond.notify_all()
            if self._on_processed is not None:
                self._on_processed(len(item))
            if self._snapshot_due():
                self._take_snapshot()
        if self._snapshot_due():
            self._take_snapshot()

    def _snapshot_due(self) -> bool:
        return bool(self._interval) and not self._stop and time.monotonic() >= self._next_snapshot

    def _take_snapshot(self) -> None:
        """Capture on this thread (between items: consistent), write on another."""
        start = time.monotonic()
        if self._capture is None or self._writing.is_set():
            self._next_snapshot = start + (self._interval or 0)
            return  # the last one is still being written: skip this one
        try:
            with self.lock:
                data = self._capture()
        except Exception:
            logger.exception("cycleguard serve: periodic state snapshot failed")
            data = None
        took = time.monotonic() - start
        # Snapshots take at most a tenth of the worker's time, whatever the interval.
        self._next_snapshot = time.monotonic() + max(self._interval or 0, 9 * took)
        if data is None:
            return
        self._writing.set()
        self._writer = threading.Thread(
            target=self._write_snapshot, args=(data,), name="cycleguard-snapshot", daemon=True
        )
        self._writer.start()

    def _write_snapshot(self, data: Any) -> None:
        try:
            if self._write is not None:
                self._write(data)
            self.snapshots += 1
        except Exception:
            logger.exception("cycleguard serve: periodic state snapshot could not be written")
        finally:
            self._writing.clear()

    def process(self, spans: list[SpanData]) -> None:
        """Resolve and detect on one request's spans (runs on the worker thread).

        Span by span: one that raises (a value nothing expected, a bug) is skipped, counted
        and logged at most once a minute; its neighbours are processed as usual."""
        if len(spans) > 1:
            # An OTLP request groups spans by instrumentation scope (the client library's model
            # spans, then the agent's tool spans): back to the order they ended in, the agent's.
            spans = sorted(spans, key=_END_NS)
        skip = self._skip
        for r in self.resolver.resolve(spans, skip):
            try:
                self._detect(r)
            except Exception as exc:
                skip(r.span, exc)

    def _skip(self, span: SpanData, exc: Exception) -> None:
        self.skipped += 1
        if self._on_skipped is not None:
            self._on_skipped()
        self._skip_log.log(
            "cycleguard serve: span %s (%r, trace %s) skipped, its neighbours were processed: "
            "%s: %s (%d more skipped since the last line; cycleguard_service_spans_skipped_total)",
            span.span_id,
            span.name[:80],
            span.trace_id,
            type(exc).__name__,
            exc,
            exc_info=exc,
        )

    def _detect(self, r: Resolved) -> None:
        """One resolved span through the shared pipeline; an agent span ends its session."""
        span = r.span
        self.pipeline.process(span, r, SpanRef(span.trace_id, span.span_id, span.end_ns), r.role)


_END_NS = operator.attrgetter("end_ns")
