"""A log line at most once per interval, saying how many were held back since the last.

For events that can repeat per span (a span skipped, a span dropped): the first is logged at
once, so an operator sees it; a flood costs one line per interval, never one per span.
Thread-safe and cheap when suppressed (one lock, one clock read).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

__all__ = ["RateLimitedLog"]


class RateLimitedLog:
    """``log(msg, *args)`` writes to ``logger`` at most once per ``interval_s``."""

    def __init__(
        self, logger: logging.Logger, interval_s: float = 60.0, level: int = logging.WARNING
    ) -> None:
        self._logger = logger
        self._interval = interval_s
        self._level = level
        self._lock = threading.Lock()
        self._next = 0.0
        self._held = 0
        self.events = 0

    def log(self, msg: str, *args: Any, exc_info: Any = None) -> bool:
        """Count one event; log it (True) unless another was logged within the interval.

        ``msg`` is formatted with ``args`` and then ``held`` (events not logged since)."""
        now = time.monotonic()
        with self._lock:
            self.events += 1
            if now < self._next:
                self._held += 1
                return False
            held, self._held = self._held, 0
            self._next = now + self._interval
        self._logger.log(self._level, msg, *args, held, exc_info=exc_info)
        return True
