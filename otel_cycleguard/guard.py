"""The guard's runtime: a bounded table of sessions fed by any span source, with observers.

The span processor, the offline replay and the OTLP service all feed a :class:`CycleGuard`.
It owns the sessions (LRU with an idle TTL, both counted), serialises access to each session
under one short lock, and tells its observers (metrics, trace annotation, escalation) what
happened *outside* that lock. No OpenTelemetry or I/O here.

Sessions that go quiet are hibernated: after ``session_hibernate_after_s`` without a call a
session's state is packed into a few hundred bytes (the core's ``Session.hibernate``) and moves
from the awake table to the sleeping one; its next call wakes it, detection unchanged. Both
tables are in last-seen order and every sleeping session was seen before every awake one, so
the LRU and the TTL take the oldest from the sleeping table first. The sweep runs when a
session is created (the only time the tables grow) and in :meth:`CycleGuard.expire_idle`;
each session is packed once per quiet spell, so it costs nothing per call.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.detect import Detector, Dimension, ModelTurn, SessionDetector, Signal, ToolCall

__all__ = ["CycleGuard", "Observer", "ObserverList", "SessionEntry"]

logger = logging.getLogger("otel_cycleguard")


#: The evictions of an observation that made no session (shared, never changed).
_NO_EVICTIONS: list[tuple[SessionEntry, str]] = []


class SessionEntry:
    """One live session: its detector, when it was last seen, and room for collaborators."""

    __slots__ = ("agent", "detector", "extra", "first_term_step", "last_seen", "subagent")

    def __init__(
        self, detector: SessionDetector, agent: str | None, subagent: bool, now: float
    ) -> None:
        self.detector = detector
        self.agent = agent
        self.subagent = subagent
        self.last_seen = now
        self.first_term_step: int | None = None
        self.extra: dict[str, Any] | None = None

    @property
    def key(self) -> str:
        return self.detector.key


class Observer:
    """Receives what the guard saw. Every method is optional; none may block for long."""

    def session_started(self, entry: SessionEntry) -> None:
        """A new session was created."""

    def session_evicted(self, entry: SessionEntry, cause: str) -> None:
        """A session was dropped: ``cause`` is ``lru`` (table full) or ``idle`` (TTL)."""

    def session_ended(self, entry: SessionEntry) -> None:
        """The run that owns the session finished (its root agent span ended)."""

    def tool_call(self, entry: SessionEntry, call: ToolCall) -> None:
        """A tool call was observed (after detection)."""

    def model_turn(self, entry: SessionEntry, turn: ModelTurn) -> None:
        """A model turn was observed (after detection)."""

    def signals(self, entry: SessionEntry, signals: list[Signal], span_ref: Any) -> None:
        """Detection fired; ``span_ref`` is whatever the caller passed to identify the span."""


class ObserverList(list):  # type: ignore[type-arg]
    """The guard's observers: a list that counts its changes, so the guard can keep, per
    event, the methods that do something (an observer inherits a no-op for every event it
    does not handle; calling those costs more than the guard's own work on a span)."""

    version = 0

    def _changed(self) -> None:
        self.version += 1

    def append(self, item: Any) -> None:
        super().append(item)
        self._changed()

    def extend(self, items: Iterable[Any]) -> None:
        super().extend(items)
        self._changed()

    def insert(self, index: Any, item: Any) -> None:
        super().insert(index, item)
        self._changed()

    def remove(self, item: Any) -> None:
        super().remove(item)
        self._changed()

    def pop(self, index: Any = -1) -> Any:
        item = super().pop(index)
        self._changed()
        return item

    def clear(self) -> None:
        super().clear()
        self._changed()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        super().sort(*args, **kwargs)
        self._changed()

    def reverse(self) -> None:
        super().reverse()
        self._changed()

    def __setitem__(self, index: Any, value: Any) -> None:
        super().__setitem__(index, value)
        self._changed()

    def __delitem__(self, index: Any) -> None:
        super().__delitem__(index)
        self._changed()

    def __iadd__(self, items: Iterable[Any]) -> ObserverList:  # type: ignore[override]
        super().__iadd__(items)
        self._changed()
        return self


def _handlers(observers: list[Any], method: str) -> list[tuple[Any, Callable[..., Any]]]:
    """(observer, bound method) for the observers whose ``method`` is not the base no-op."""
    noop = getattr(Observer, method)
    out = []
    for observer in observers:
        bound = getattr(observer, method, None)
        if bound is None or getattr(bound, "__func__", None) is noop:
            continue
        out.append((observer, bound))
    return out


class CycleGuard:
    """Feeds records into per-session detectors and fans results out to observers."""

    def __init__(
        self,
        config: CycleGuardConfig | None = None,
        *,
        observers: Iterable[Observer] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config if config is not None else CycleGuardConfig()
        self.detector = Detector(self.config)
        self._handlers: dict[str, list[tuple[Any, Callable[..., Any]]]] = {}
        self._handlers_version = -1
        self.observers = list(observers)  # an ObserverList (see the property)
        self._clock = clock
        self._sessions: OrderedDict[str, SessionEntry] = OrderedDict()  # awake, oldest first
        self._sleeping: OrderedDict[str, SessionEntry] = OrderedDict()  # hibernated, oldest first
        self._lock = threading.Lock()
        self.evicted = {"lru": 0, "idle": 0}

    @property
    def observers(self) -> ObserverList:
        """Who hears what the guard saw, in order; add with ``append`` or assign a list.

        Each observer's methods are looked up when the list changes, not per event: a method
        replaced on an observer already in the list is heard once the list changes again."""
        return self._observers

    @observers.setter
    def observers(self, observers: Iterable[Observer]) -> None:
        self._observers = ObserverList(observers)
        self._handlers_version = -1  # a new list: its handlers are looked up afresh

    # -- feeding ---------------------------------------------------------------------------

    def observe_tool_call(
        self,
        session: str,
        call: ToolCall,
        *,
        agent: str | None = None,
        subagent: bool = False,
        span_ref: Any = None,
    ) -> list[Signal]:
        """Detect on one tool call of ``session``; observers hear about it after the lock."""
        with self._lock:
            entry = self._sessions.get(session)
            if entry is not None and (not agent or entry.agent is not None):
                # an awake session that learns nothing new: `_entry`'s first case, inlined
                self._sessions.move_to_end(session)
                entry.last_seen = self._clock()
                started, evicted = False, _NO_EVICTIONS
            else:
                entry, started, evicted = self._entry(session, agent, subagent)
            signals = entry.detector.observe_tool_call(call)
            if signals and entry.first_term_step is None:
                for signal in signals:
                    if signal.level.value == "term":
                        entry.first_term_step = signal.step
                        break
        if self._observers:  # without observers (the replay) there is no one to tell
            self._notify(entry, started, evicted, signals, span_ref, call=call)
        return signals

    def observe_model_turn(
        self,
        session: str,
        turn: ModelTurn,
        *,
        agent: str | None = None,
        subagent: bool = False,
        span_ref: Any = None,
    ) -> list[Signal]:
        """Detect on one model turn of ``session``."""
        with self._lock:
            entry = self._sessions.get(session)
            if entry is not None and (not agent or entry.agent is not None):
                self._sessions.move_to_end(session)  # as in observe_tool_call
                entry.last_seen = self._clock()
                started, evicted = False, _NO_EVICTIONS
            else:
                entry, started, evicted = self._entry(session, agent, subagent)
            signals = entry.detector.observe_model_turn(turn)
        if self._observers:
            self._notify(entry, started, evicted, signals, span_ref, turn=turn)
        return signals

    def reset(self, session: str, dimension: Dimension) -> bool:
        """Reset one dimension of one session (self-heal, a human's "continue")."""
        with self._lock:
            entry = self._find(session)
            if entry is None:
                return False
            entry.detector.reset(dimension)  # wakes a sleeping one; the next sweep packs it
            return True

    def end_session(self, session: str) -> None:
        """Tell observers a run finished. The session stays (a conversation may go on)."""
        with self._lock:
            entry = self._find(session)
        if entry is not None:
            self._tell("session_ended", entry)

    def get(self, session: str) -> SessionEntry | None:
        """The live entry of a session, if any (no LRU touch)."""
        with self._lock:
            return self._find(session)

    def counters(self, session: str) -> dict[str, int]:
        """A snapshot of a session's counters (empty when unknown)."""
        with self._lock:
            entry = self._find(session)
            return entry.detector.counters() if entry is not None else {}  # does not wake it

    def __len__(self) -> int:
        return len(self._sessions) + len(self._sleeping)

    @property
    def hibernated(self) -> int:
        """How many sessions are hibernated (their state packed until their next call)."""
        return len(self._sleeping)

    def expire_idle(self) -> int:
        """Drop sessions idle past the TTL and hibernate those quiet past
        ``session_hibernate_after_s``; returns how many were dropped. Also done lazily
        whenever a session is created."""
        with self._lock:
            now = self._clock()
            evicted = self._expire(now)
            self._hibernate_quiet(now)
        for entry in evicted:
            self._tell("session_evicted", entry, "idle")
        return len(evicted)

    def after_fork(self) -> None:
        """In a forked child: a fresh lock (the parent's may have been held at fork time)."""
        self._lock = threading.Lock()

    # -- internals -------------------------------------------------------------------------

    def _entry(
        self, session: str, agent: str | None, subagent: bool
    ) -> tuple[SessionEntry, bool, list[tuple[SessionEntry, str]]]:
        now = self._clock()
        entry = self._sessions.get(session)
        if entry is not None:
            self._sessions.move_to_end(session)
        else:
            entry = self._sleeping.pop(session, None)
            if entry is not None:  # its detector wakes on the observation the caller makes
                self._sessions[session] = entry
        if entry is not None:
            entry.last_seen = now
            if agent and entry.agent is None:
                entry.agent = agent
            return entry, False, []
        evicted = [(e, "idle") for e in self._expire(now)]
        self._hibernate_quiet(now)
        while len(self) >= self.config.max_sessions:
            evicted.append((self._pop_oldest(), "lru"))
            self.evicted["lru"] += 1
        entry = SessionEntry(
            self.detector.session(session, agent=agent, subagent=subagent), agent, subagent, now
        )
        self._sessions[session] = entry
        return entry, True, evicted

    def _find(self, session: str) -> SessionEntry | None:
        entry = self._sessions.get(session)
        return entry if entry is not None else self._sleeping.get(session)

    def _pop_oldest(self) -> SessionEntry:
        table = self._sleeping if self._sleeping else self._sessions
        return table.popitem(last=False)[1]

    def _expire(self, now: float) -> list[SessionEntry]:
        deadline = now - self.config.session_idle_ttl_s
        out = []
        for table in (self._sleeping, self._sessions):
            while table:
                oldest = next(iter(table.values()))
                if oldest.last_seen >= deadline:
                    break
                table.popitem(last=False)
                out.append(oldest)
        self.evicted["idle"] += len(out)
        return out

    def _hibernate_quiet(self, now: float) -> None:
        after = self.config.session_hibernate_after_s
        if after is None:
            return
        deadline = now - after
        awake, sleeping = self._sessions, self._sleeping
        moved = 0
        while awake:
            key, oldest = next(iter(awake.items()))
            if oldest.last_seen >= deadline:
                break
            awake.popitem(last=False)
            try:
                oldest.detector.hibernate()
            except Exception:  # in use outside the lock, say: it sleeps awake, still tracked
                logger.debug("otel-cycleguard: session %r not hibernated", key, exc_info=True)
            sleeping[key] = oldest
            moved += 1
        # An ordered dict keeps the room of its largest size: once most of the awake table has
        # gone to sleep, a copy gives that room back (the copy costs what is left awake).
        if moved > 1024 and len(awake) < moved // 4:
            self._sessions = OrderedDict(awake)

    def _notify(
        self,
        entry: SessionEntry,
        started: bool,
        evicted: list[tuple[SessionEntry, str]],
        signals: list[Signal],
        span_ref: Any,
        *,
        call: ToolCall | None = None,
        turn: ModelTurn | None = None,
    ) -> None:
        if not self.observers:
            return
        for gone, cause in evicted:
            self._tell("session_evicted", gone, cause)
        if started:
            self._tell("session_started", entry)
        if call is not None:
            self._tell("tool_call", entry, call)
        if turn is not None:
            self._tell("model_turn", entry, turn)
        if signals:
            self._tell("signals", entry, signals, span_ref)

    def _tell(self, method: str, *args: Any) -> None:
        observers = self._observers
        version = observers.version
        if version != self._handlers_version:
            self._handlers = {}
            self._handlers_version = version
        handlers = self._handlers.get(method)
        if handlers is None:
            handlers = self._handlers[method] = _handlers(observers, method)
        for observer, handler in handlers:
            try:
                handler(*args)
            except Exception:
                logger.exception(
                    "otel-cycleguard observer %r failed in %s; continuing", observer, method
                )

    # -- persistence (the OTLP service's restart state) -----------------------------------

    def export_sessions(self) -> list[dict[str, Any]]:
        """Every live session's detector state, oldest first (JSON-compatible, hashes only)."""
        with self._lock:
            entries = [*self._sleeping.values(), *self._sessions.values()]
            out = []
            for entry in entries:
                extra = entry.extra
                out.append(
                    {
                        "key": entry.key,
                        "agent": entry.agent,
                        "subagent": entry.subagent,
                        "first_term_step": entry.first_term_step,
                        "extra": {
                            k: v
                            for k, v in (extra or {}).items()
                            if isinstance(v, bool | int | float | str)
                        },
                        "detector": entry.detector.to_state(),
                    }
                )
        return out

    def restore_sessions(self, sessions: Iterable[dict[str, Any]]) -> int:
        """Re-create sessions saved by :meth:`export_sessions`; returns how many. Observers
        are not told (a restored session is not a new one). Bad entries are skipped."""
        restored = 0
        now = self._clock()
        for saved in sessions:
            try:
                key = str(saved["key"])
                agent = saved.get("agent")
                subagent = bool(saved.get("subagent"))
                detector = self.detector.session(key, agent=agent, subagent=subagent)
                detector.restore_state(saved["detector"])
            except Exception:
                logger.warning(
                    "otel-cycleguard: a saved session could not be restored; skipped", exc_info=True
                )
                continue
            entry = SessionEntry(detector, agent, subagent, now)
            entry.first_term_step = saved.get("first_term_step")
            entry.extra = dict(saved.get("extra") or {}) or None
            with self._lock:
                self._sleeping.pop(key, None)
                self._sessions[key] = entry
                self._sessions.move_to_end(key)
                while len(self) > self.config.max_sessions:
                    self._pop_oldest()
            restored += 1
        return restored
