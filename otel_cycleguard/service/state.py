"""The service's restart state: one JSON file, written atomically.

Format (``schema: cycleguard.service-state/v1``)::

    {
      "schema": "cycleguard.service-state/v1",
      "saved_at": 1718000000.0,              # unix time
      "sessions": [                          # CycleGuard.export_sessions(), oldest first
        {"key": ..., "agent": ..., "subagent": false, "first_term_step": 4, "extra": {...},
         "detector": {"v": 1, "tool_calls": 9, "dimensions": {...hashes and counters...}}}
      ],
      "traces": [[trace_id, session, agent], ...],   # session bindings, oldest first
      "escalation": {
        "ladders": {session: {"terminated": false, "rungs": {dimension: [terms, step, open]}}},
        "pending": [{"request": <webhook payload>, "signal": {...}, "accepted": true}]
      }
    }

Only hashes, counters, tool names and the escalation payloads (which are hashes and names
too) are stored: never raw arguments, results or model text. Written to ``<file>.tmp``,
fsynced, then renamed over the old file, so a crash mid-write leaves the previous snapshot.
An unreadable file is moved aside to ``<file>.corrupt`` and the service starts fresh.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["SCHEMA", "StateFile"]

SCHEMA = "cycleguard.service-state/v1"
logger = logging.getLogger("otel_cycleguard.service")


class StateFile:
    """Saves and loads the service state at ``path``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.saves = 0
        self._lock = threading.Lock()  # one writer of <file>.tmp at a time

    def save(self, state: dict[str, Any]) -> None:
        self.write(self.encode(state))

    @staticmethod
    def encode(state: dict[str, Any]) -> bytes:
        """The file's bytes for ``state`` (a snapshot is encoded where it is captured, so the
        writer never reads live objects)."""
        data = {"schema": SCHEMA, "saved_at": time.time(), **state}
        return json.dumps(data, separators=(",", ":"), ensure_ascii=True).encode("ascii")

    def write(self, body: bytes) -> None:
        """Write ``body`` atomically: ``<file>.tmp``, fsync, rename."""
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(self.path.name + ".tmp")
            with open(tmp, "wb") as fh:
                fh.write(body)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
            self.saves += 1

    def load(self) -> dict[str, Any] | None:
        try:
            body = self.path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            data = json.loads(body)
            if not isinstance(data, dict) or data.get("schema") != SCHEMA:
                raise ValueError(f"schema is not {SCHEMA}")
            return data
        except ValueError as exc:
            aside = self.path.with_name(self.path.name + ".corrupt")
            os.replace(self.path, aside)
            logger.error(
                "cycleguard serve: state file %s unreadable (%s); moved to %s, starting fresh",
                self.path,
                exc,
                aside,
            )
            return None
