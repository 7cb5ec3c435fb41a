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

The stage runs in the compiled core (``_core.DerivedCalls``, rust/cycleguard-core/src/
derive.rs): every model span of every session passes through it. This module gives it its
Python helpers (the canonical form of unusual arguments, the capture hint and its log line).
"""

from __future__ import annotations

import logging

from otel_cycleguard import _core, conventions
from otel_cycleguard.detect.normalize import canonical_json
from otel_cycleguard.detect.records import ToolCall
from otel_cycleguard.model_messages import MESSAGE_READER, capture_hint

__all__ = ["DerivedCalls"]

logger = logging.getLogger("otel_cycleguard")

_logged_hints: set[str] = set()


def _log_missing(hint: str) -> None:
    """Log, once per hint, that an agent's tool calls cannot be read (capture is off)."""
    if hint not in _logged_hints:
        _logged_hints.add(hint)
        logger.warning(
            "otel-cycleguard: model spans carry no message content and no tool spans were "
            "seen, so this agent's tool calls cannot be read; to turn capture on: %s",
            hint,
        )


class DerivedCalls(_core.DerivedCalls):  # type: ignore[misc]
    """Derives tool calls from a session's model spans and drops those real tool spans cover.

    ``model_span(session, attributes, events=(), *, start_ns=0, end_ns=0, span_id=None)``
    returns the derived calls to observe before that model turn (may be empty);
    ``tool_span(session, attributes, call)`` tells it a real tool span ended (it covers one
    pending derived call); ``pending(session)`` says whether requested calls wait for their
    results. ``emitted`` and ``covered`` count derived calls observed and dropped as
    duplicates of real tool spans. ``notes`` counts the sessions whose model spans carried no
    message content while no tool span was seen either (the guard is blind to their tool
    calls), by the setting that turns capture on; the analyze report lists them. Sessions are
    kept least recently used first out, at most ``max_sessions``.
    """

    __slots__ = ()

    def __new__(cls, max_sessions: int = 10_000) -> DerivedCalls:
        return super().__new__(  # type: ignore[no-any-return]
            cls,
            MESSAGE_READER,
            conventions.READER,
            ToolCall,
            (canonical_json, capture_hint, _log_missing),
            max_sessions,
        )
