"""Which session, agent and profile a span's calls belong to, from its ancestors: one rule.

The span processor applies :func:`child_scope` as spans start (parents before children); the
offline replay applies it to exported spans, parents first, so ``cycleguard analyze`` puts
every call in the session, and under the profile, the live guard used. (The OTLP service only
sees spans as they end, children first, and resolves by other means: see
:mod:`otel_cycleguard.service.sessions`.)

The rules:

- a span's own session attribute (``gen_ai.conversation.id``, ``session.id``, Traceloop
  association properties) names its session; otherwise it inherits its parent's;
- an agent span under a tool span (inside an agent every tool may run a child agent; outside
  one, the configured delegating tools) is delegated work: its own session
  ``<parent session>/sub:<span id>`` and the ``subagent`` profile, unless it carries its own
  session id. The child's spans repeating the parent's id stay in the child's session;
- an agent span directly inside another, or under plain spans of one (framework wrappers such
  as OpenInference's "Agent workflow"), continues the outer run: same session, same profile;
- a root agent span with no session id gets none here: the caller keys it (baggage, then the
  trace id).

Pure: no OpenTelemetry imports, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_cycleguard import conventions
from otel_cycleguard.conventions import SpanRole

__all__ = ["SpanScope", "child_scope"]


class SpanScope:
    """What a span passes on to its descendants."""

    __slots__ = (
        "_descendants",
        "agent",
        "delegating",
        "in_agent",
        "outer",
        "session",
        "session_root",
        "subagent",
    )

    def __init__(
        self,
        session: str | None,
        agent: str | None,
        in_agent: bool,
        subagent: bool,
        delegating: bool,
        outer: str | None = None,
    ) -> None:
        self.session = session
        self.agent = agent
        self.in_agent = in_agent
        self.subagent = subagent
        # A tool span a child agent under it would be delegated by (inherited by descendants).
        self.delegating = delegating
        # For a sub-agent: the parent's session key, which its spans may still carry as a hint.
        self.outer = outer
        # An agent span that opened this session (its end is the end of the run).
        self.session_root = False
        self._descendants: SpanScope | None = None

    def for_descendants(self) -> SpanScope:
        """The scope a plain span under this one passes on: the same values, never a session
        root. Shared (spans read scopes, never change them), so a plain span costs no object."""
        if not self.session_root:
            return self
        shared = self._descendants
        if shared is None:
            shared = self._descendants = SpanScope(
                self.session, self.agent, self.in_agent, self.subagent, self.delegating, self.outer
            )
        return shared


_NONE = SpanScope(None, None, False, False, False)


def child_scope(
    role: str,
    name: str,
    attrs: Mapping[str, Any],
    parent: SpanScope | None,
    hint: str | None,
    span_id: int | str,
    delegating_tools: frozenset[str],
) -> SpanScope | None:
    """The scope of a span of ``role`` under ``parent`` (None: the span has no scope parent).

    ``hint`` is the span's own session id (or the caller's baggage). Returns None when the span
    passes nothing on (no agent, no session, not a delegating tool): keep no state for it. A
    root agent span without any session id comes back with ``session`` None and
    ``session_root`` set: the caller names the session. ``span_id`` (int, or hex already)
    names a sub-agent's session.
    """
    if role == SpanRole.AGENT:
        delegated = parent is not None and parent.delegating
        agent = conventions.agent_name(name, attrs) or (
            parent.agent if parent is not None else None
        )
        if delegated:
            subagent = True
            outer = parent.session if parent is not None else None
        else:
            subagent = parent.subagent if parent is not None else False
            outer = parent.outer if parent is not None else None
        if hint is not None and hint != outer:
            session = hint
        elif delegated and parent is not None and parent.session is not None:
            sid = f"{span_id:016x}" if isinstance(span_id, int) else span_id
            session = f"{parent.session}/sub:{sid}"
        elif parent is not None and parent.session is not None:
            session = parent.session
        else:
            session = None
        scope = SpanScope(session, agent, True, subagent, False, outer)
        scope.session_root = session is None or parent is None or parent.session != session
        return scope
    if (
        parent is None
        and hint is None
        and (
            role != SpanRole.TOOL
            or not conventions.is_delegating_tool(name, attrs, delegating_tools)
        )
    ):
        return None  # nothing to pass on: leave no state behind
    inherited = parent or _NONE
    if hint is None or (inherited.outer is not None and hint == inherited.outer):
        if parent is not None and role != SpanRole.TOOL:
            return parent.for_descendants()  # nothing of its own to pass on
        hint = inherited.session  # a sub-agent's spans repeating the parent's id
    return SpanScope(
        hint,
        inherited.agent,
        inherited.in_agent,
        inherited.subagent,
        # Inside an agent every tool call may run a child agent (agents as tools); outside one
        # only the configured delegating tools are tracked.
        role == SpanRole.TOOL or inherited.delegating,
        inherited.outer,
    )
