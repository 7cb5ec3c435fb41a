"""Per-session mailboxes of directives the agent consumes at its enforcement points.

The span processor only observes; what it decides (inject a corrective message, pause for a
human, terminate) waits here until the agent's next model request or tool call picks it up.
Mailboxes are bounded (LRU over sessions, a cap on queued messages per session).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from cachetools import LRUCache

__all__ = ["CycleTerminated", "Directive", "Mailbox", "Mailboxes"]

Role = Literal["system", "user"]


@dataclass(frozen=True, slots=True)
class Directive:
    """A message to append to the agent's next model request (never editing earlier ones)."""

    role: Role
    content: str
    dimension: str | None = None


class CycleTerminated(RuntimeError):
    """Raised at an enforcement point once the guard has terminated the run.

    ``reason`` is ``cycle_detected``, ``error_streak_terminated`` or ``budget_exceeded``;
    ``progress_ref`` names the saved progress (load it with ``otel_cycleguard.resume``).
    """

    def __init__(
        self, session: str, reason: str, user_message: str, progress_ref: str | None
    ) -> None:
        super().__init__(
            f"{user_message} (session {session!r}, reason {reason}, progress {progress_ref})"
        )
        self.session = session
        self.reason = reason
        self.user_message = user_message
        self.progress_ref = progress_ref


@dataclass
class Mailbox:
    """One session's pending directives and run state (running, paused, terminated)."""

    session: str
    messages: list[Directive] = field(default_factory=list)
    paused_request: str | None = None
    paused_until: float | None = None
    terminated: CycleTerminated | None = None
    condition: threading.Condition = field(default_factory=threading.Condition)

    MAX_MESSAGES = 16


class Mailboxes:
    """All sessions' mailboxes; thread-safe, bounded by ``max_sessions`` (LRU)."""

    def __init__(
        self, max_sessions: int = 10_000, *, before_take: Callable[[], object] | None = None
    ) -> None:
        self._boxes: LRUCache[str, Mailbox] = LRUCache(maxsize=max(1, max_sessions))
        self._lock = threading.Lock()
        self.enforcement_seen = False
        # Called at the start of every take(): the span processor's drain in background mode.
        self.before_take = before_take

    def get(self, session: str, *, create: bool = True) -> Mailbox | None:
        """A session's mailbox. Readers (``create=False``: enforcement points peeking at the
        run state) first let background detection catch up, like :meth:`take`."""
        if not create and self.before_take is not None:
            self.before_take()
        with self._lock:
            box = self._boxes.get(session)  # a use: the least recently used box goes first
            if box is None and create:
                box = self._boxes[session] = Mailbox(session)
            return box

    def post(self, session: str, directive: Directive) -> None:
        box = self.get(session)
        assert box is not None
        with box.condition:
            if len(box.messages) >= Mailbox.MAX_MESSAGES:
                box.messages.pop(0)
            box.messages.append(directive)
            box.condition.notify_all()

    def pause(self, session: str, request_id: str, until: float) -> None:
        box = self.get(session)
        assert box is not None
        with box.condition:
            box.paused_request = request_id
            box.paused_until = until
            box.condition.notify_all()

    def resume(self, session: str) -> None:
        box = self.get(session, create=False)
        if box is None:
            return
        with box.condition:
            box.paused_request = None
            box.paused_until = None
            box.condition.notify_all()

    def terminate(self, session: str, error: CycleTerminated) -> None:
        box = self.get(session)
        assert box is not None
        with box.condition:
            box.terminated = error
            box.paused_request = None
            box.condition.notify_all()

    def take(self, session: str, *, wait: bool = True, grace_s: float = 1.0) -> list[Directive]:
        """At an enforcement point: raise if terminated, wait out a pause, return messages.

        A pause is waited on until the human decides or the escalation deadline (plus
        ``grace_s`` for the fail-closed termination to land) has passed.
        """
        self.enforcement_seen = True
        if self.before_take is not None:
            self.before_take()  # background detection: catch up before answering
        box = self.get(session, create=False)
        if box is None:
            return []
        with box.condition:
            while wait and box.paused_request is not None and box.terminated is None:
                remaining = (box.paused_until or time.time()) + grace_s - time.time()
                if remaining <= 0:
                    break
                box.condition.wait(timeout=min(remaining, 0.5))
            if box.terminated is not None:
                raise box.terminated
            messages, box.messages = box.messages, []
            return messages

    def is_terminated(self, session: str) -> bool:
        box = self.get(session, create=False)
        return box is not None and box.terminated is not None

    def __len__(self) -> int:
        return len(self._boxes)
