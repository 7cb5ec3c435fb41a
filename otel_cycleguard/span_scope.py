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

The rule runs in the compiled core (rust/cycleguard-core/src/span_scope.rs): the processor
applies it as every span of the host starts, the replay to every span it reads.

Pure: no OpenTelemetry imports, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from otel_cycleguard import _core, conventions

__all__ = ["SpanScope", "child_scope"]

#: What a span passes on to its descendants: ``session`` (settable: the caller keys a root
#: agent span), ``agent``, ``in_agent``, ``subagent``, ``delegating`` (a tool span a child
#: agent under it would be delegated by), ``outer`` (for a sub-agent: the parent's session
#: key, which its spans may still carry as a hint) and ``session_root`` (an agent span that
#: opened its session); ``for_descendants()`` is the scope a plain span under it passes on.
SpanScope = _core.SpanScope

#: ``child_scope(role, name, attrs, parent, hint, span_id, delegating_tools)``: the scope of a
#: span of ``role`` under ``parent`` (None: the span has no scope parent). ``hint`` is the
#: span's own session id (or the caller's baggage). Returns None when the span passes nothing
#: on (no agent, no session, not a delegating tool): keep no state for it. A root agent span
#: without any session id comes back with ``session`` None and ``session_root`` set: the
#: caller names the session. ``span_id`` (int, or hex already) names a sub-agent's session;
#: ``delegating_tools`` is a frozenset of lower-case tool names.
child_scope: Callable[
    [str, str, Mapping[str, Any], Any, str | None, int | str, frozenset[str]], Any
] = conventions.READER.child_scope
