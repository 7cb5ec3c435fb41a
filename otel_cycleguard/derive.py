"""Tool calls derived from model spans, never counted twice: the one stage all span sources use.

The live processor, the offline replay and the OTLP service each hand this stage every tool
span and every model span of a session, in the order the agent made them. For a model span it
returns the tool calls to observe *before* that model turn: the calls the previous model span
of the session asked for, each paired with the result this span's input sent back (matched by
tool-call id, else by order). So a derived call is known one model turn late: the result of the
call the model asked for in turn N is only seen in turn N+1's request.

Never twice: when the agent (or its framework) also traced its tools, those real tool spans
arrive between the two model spans. Each real call cancels one pending derived call: by
tool-call id, else by name and arguments, else by name, within that turn. What remains is
derived.

Bounded: sessions (LRU), pending calls and real calls per session (:data:`MAX_CALLS`). Model
messages are parsed only for model spans, and a missing-content hint is logged once per
instrumentation. Never raises into the caller's span hook (callers guard it too).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

from otel_cycleguard.detect.normalize import canonical_json
from otel_cycleguard.detect.records import ToolCall, new_tool_call
from otel_cycleguard.model_messages import (
    MAX_CALLS,
    RequestedCall,
    ReturnedResult,
    capture_hint,
    has_content,
    requested_calls,
    returned_results,
)

__all__ = ["DerivedCalls", "tool_call_id"]

logger = logging.getLogger("otel_cycleguard")

_CALL_ID_KEYS = ("gen_ai.tool.call.id", "tool_call.id", "tool.call.id", "tool_call_id")
_logged_hints: set[str] = set()


def tool_call_id(attributes: Mapping[str, Any]) -> str | None:
    """The tool-call id a real tool span names (OTel GenAI ``gen_ai.tool.call.id`` and kin)."""
    for key in _CALL_ID_KEYS:
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None


class _Session:
    """One session's pending requests (from its last model span) and this turn's real calls."""

    __slots__ = ("bare", "pending", "pending_end_s", "real", "tools")

    def __init__(self) -> None:
        self.pending: list[RequestedCall] = []
        self.pending_end_s: float | None = None
        self.real: list[tuple[str | None, str, bytes]] = []  # (call id, name, canonical args)
        self.tools = False  # a real tool span was seen: its tools are traced
        self.bare = 0  # model spans without message content


class DerivedCalls:
    """Derives tool calls from a session's model spans and drops those real tool spans cover.

    ``emitted`` and ``covered`` count derived calls observed and dropped as duplicates of real
    tool spans. ``notes`` counts the sessions whose model spans carried no message content while no tool
    span was seen either (the guard is blind to their tool calls), by the setting that turns
    capture on; the analyze report lists them.
    """

    def __init__(self, max_sessions: int = 10_000) -> None:
        # An OrderedDict rather than cachetools' LRUCache: every model and tool span looks its
        # session up here, and the C OrderedDict's get + move_to_end costs a fifth as much.
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._max_sessions = max(1, max_sessions)
        self._lock = threading.Lock()  # the processor's on_end may run on many threads
        self.notes: dict[str, int] = {}
        self.emitted = 0  # derived calls handed to the detector
        self.covered = 0  # derived calls dropped: a real tool span described the same call

    def _session(self, key: str, create: bool) -> _Session | None:
        """The session's state (a use: least recently used sessions are dropped first)."""
        sessions = self._sessions
        state = sessions.get(key)
        if state is not None:
            sessions.move_to_end(key)
        elif create:
            state = sessions[key] = _Session()
            if len(sessions) > self._max_sessions:
                sessions.popitem(last=False)
        return state

    def tool_span(self, session: str, attributes: Mapping[str, Any], call: ToolCall) -> None:
        """A real tool span of ``session`` ended: it covers one pending derived call."""
        with self._lock:
            state = self._session(session, create=True)
            assert state is not None
            state.tools = True
            if not state.pending or len(state.real) >= MAX_CALLS:
                return  # nothing pending: nothing to cancel
            state.real.append((tool_call_id(attributes), call.tool, canonical_json(call.arguments)))

    def pending(self, session: str) -> bool:
        """Whether ``session`` has requested calls waiting for their results."""
        state = self._session(session, create=False)
        return state is not None and bool(state.pending)

    def model_span(
        self,
        session: str,
        attributes: Mapping[str, Any],
        events: Iterable[tuple[str, Mapping[str, Any]]] = (),
        *,
        start_ns: int = 0,
        end_ns: int = 0,
        span_id: str | None = None,
    ) -> list[ToolCall]:
        """The derived calls to observe before this model turn (may be empty)."""
        events = list(events) if events else []
        if not has_content(attributes, events):
            with self._lock:
                state = self._session(session, create=True)
                assert state is not None
                state.pending, state.real = [], []
                state.bare += 1
                blind = state.bare == 2 and not state.tools
            if blind:  # a second bare turn and no tool span: this session's calls are unseen
                self._note_missing(attributes)
            return []
        requested = requested_calls(attributes, events)  # parsed outside the lock
        with self._lock:
            state = self._session(session, create=True)
            assert state is not None
            pending = state.pending
        derived: list[ToolCall] = []
        results = returned_results(attributes, events) if pending else []
        if results:
            with self._lock:
                derived = self._pair(state, results, start_ns, span_id)
        elif pending and not requested:
            # Neither answers nor asks: a side call (a guardrail, a summary) between the two
            # turns of the agent; the calls stay pending for the turn that answers them.
            return []
        with self._lock:
            state.pending = requested
            state.pending_end_s = end_ns / 1e9 if end_ns else None
            state.real = []
        return derived

    def _pair(
        self, state: _Session, results: list[ReturnedResult], start_ns: int, span_id: str | None
    ) -> list[ToolCall]:
        """Pending calls with their results (by id, else by order), minus the real ones."""
        by_id = {r.id: r for r in results if r.id is not None}
        asked = {p.id for p in state.pending}
        unclaimed = [r for r in results if r.id is None or r.id not in asked]
        real = list(state.real)
        out: list[ToolCall] = []
        end_s = start_ns / 1e9 if start_ns else None
        for request in state.pending:
            result = by_id.get(request.id) if request.id is not None else None
            if result is None:
                if not unclaimed:
                    continue  # no result came back for it: the agent did not run it
                result = unclaimed.pop(0)
            if real and _covered(request, real):
                self.covered += 1
                continue
            out.append(
                new_tool_call(  # ToolCall's fields, in order
                    request.name,
                    request.arguments,
                    result.content,
                    result.error,
                    state.pending_end_s,
                    end_s,
                    None,  # read_only: unknown
                    None,  # state_fingerprint
                    span_id,
                )
            )
        self.emitted += len(out)
        return out

    def _note_missing(self, attributes: Mapping[str, Any]) -> None:
        hint = capture_hint(attributes)
        self.notes[hint] = self.notes.get(hint, 0) + 1
        if hint not in _logged_hints:
            _logged_hints.add(hint)
            logger.warning(
                "otel-cycleguard: model spans carry no message content and no tool spans were "
                "seen, so this agent's tool calls cannot be read; to turn capture on: %s",
                hint,
            )

    def after_fork(self) -> None:
        """In a forked child: a fresh lock (the parent's may have been held at fork time)."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)


def _covered(request: RequestedCall, real: list[tuple[str | None, str, bytes]]) -> bool:
    """Whether a real call covers ``request`` (and consume it): id, else name+args, else name."""
    if request.id is not None:
        for index, (call_id, _name, _args) in enumerate(real):
            if call_id == request.id:
                del real[index]
                return True
    arguments = canonical_json(request.arguments)
    for index, (call_id, name, args) in enumerate(real):
        if name == request.name and args == arguments and call_id in (None, request.id):
            del real[index]
            return True
    for index, (call_id, name, _args) in enumerate(real):
        if name == request.name and call_id is None:
            del real[index]
            return True
    return False
