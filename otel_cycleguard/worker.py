"""The one background worker: a daemon thread that runs a step when woken or when a wait ends.

Both queues that detect off the producer's thread use it: the span processor's background mode
(``otel/processor.py``: the agent's ``on_end`` appends to a deque, the worker drains it every
``flush_interval_s`` or when a producer waits for room) and the service's ingestion queue
(``service/ingest.py``: receivers offer a request's spans, the worker processes them in arrival
order and captures snapshots between items). The queues themselves stay with their owners on
purpose: the processor's is appended to without a lock on the host's hot path and drained by
any enforcement point on its own thread, the service's is bounded in spans under a condition
and refuses what does not fit; what they share is this loop, its wake-up, its stop with a
deadline and its restart after ``fork``.

The loop: wait for :meth:`wake` or ``timeout()`` seconds (``None``: until woken), then run
``step``. After :meth:`stop` the step runs once more, so whatever was queued before the stop is
seen (the step itself decides how much of it fits its deadline), and the thread ends. A step
that raises goes through the package's internal-error guard and the loop goes on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from otel_cycleguard._errors import internal_error

__all__ = ["Worker"]


class Worker:
    """One daemon thread running ``step`` on wake-up or after ``timeout()`` seconds."""

    def __init__(
        self,
        name: str,
        step: Callable[[], object],
        timeout: Callable[[], float | None] = lambda: None,
    ) -> None:
        self.name = name
        self._step = step
        self._timeout = timeout
        self._wakeup = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None

    @property
    def stopping(self) -> bool:
        """True once :meth:`stop` was called."""
        return self._stopping

    def start(self) -> None:
        """Start the thread (once; a stopped worker is not restarted)."""
        if self._thread is not None or self._stopping:
            return
        self._wakeup.clear()
        thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread = thread
        thread.start()

    def wake(self) -> None:
        """Run the step now instead of at the end of the current wait."""
        self._wakeup.set()

    def stop(self, join_timeout_s: float) -> bool:
        """Ask the thread to run its step a last time and end; wait up to ``join_timeout_s``.

        True when the thread has ended (or never ran). From the worker's own thread this
        only asks."""
        self._stopping = True
        self._wakeup.set()
        thread = self._thread
        if thread is None:
            return True
        if thread is not threading.current_thread():
            thread.join(join_timeout_s)
        return not thread.is_alive()

    def is_alive(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    def after_fork(self) -> None:
        """In a forked child: threads do not survive fork, so start a fresh one if one ran."""
        self._wakeup = threading.Event()
        ran, self._thread = self._thread is not None, None
        if ran and not self._stopping:
            self.start()

    def _run(self) -> None:
        wakeup = self._wakeup
        while True:
            wakeup.wait(self._timeout())
            wakeup.clear()
            last = self._stopping  # read before the step: what was queued before stop is seen
            try:
                self._step()
            except Exception as exc:  # a bug must not stop the worker
                internal_error(f"Worker({self.name}).step", exc)
            if last:
                return
