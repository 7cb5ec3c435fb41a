"""Prometheus metrics for loop protection, so an SRE can alert on loop rates across a fleet.

Labels are low-cardinality by construction: agent and tool names are capped (values past the cap
are reported as ``other``), the enumerated labels (dimension, level, decision, reason, cause,
span_kind) only take their known values, and nothing ever carries a session id or arguments.

Every recording method is guarded by the package's one internal-error guard
(:func:`otel_cycleguard._errors.guarded`): a metrics bug must never reach the agent, because these
methods are called from inside span-processor hooks (see ARCHITECTURE.md). Odd input (a label
that is not text, a count that is not a number) is absorbed by the methods themselves, not by
the guard, so it is no internal error.
"""

from __future__ import annotations

import enum
import math
import threading
from collections.abc import Iterable
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client import start_http_server as _start_http_server

from otel_cycleguard._errors import guarded
from otel_cycleguard.detect.signals import RULES, Dimension, Level

__all__ = [
    "DECISIONS",
    "DROP_REASONS",
    "EVICTION_CAUSES",
    "OTHER",
    "PROCESSOR_SECONDS_BUCKETS",
    "SPAN_KINDS",
    "STEPS_TO_FIRST_CYCLE_BUCKETS",
    "TERMINATION_REASONS",
    "UNKNOWN",
    "CycleGuardMetrics",
]

OTHER = "other"
"""Label value for anything past a cap or outside an enumerated set."""
UNKNOWN = "unknown"
"""Label value for a missing agent or tool name."""

DIMENSIONS: tuple[str, ...] = tuple(d.value for d in Dimension)
LEVELS: tuple[str, ...] = tuple(level.value for level in Level)
DECISIONS: tuple[str, ...] = ("continue", "terminate", "modify", "timeout", "error")
TERMINATION_REASONS: tuple[str, ...] = (
    "cycle_detected",
    "error_streak_terminated",
    "budget_exceeded",
)
EVICTION_CAUSES: tuple[str, ...] = ("lru", "idle")
SPAN_KINDS: tuple[str, ...] = ("tool", "model", "other")
DROP_REASONS: tuple[str, ...] = ("queue_full", "open_spans")

STEPS_TO_FIRST_CYCLE_BUCKETS: tuple[float, ...] = (5, 10, 20, 50, 100, 200, 500, float("inf"))
"""Tool calls before a session's first TERM: healthy coding runs take hundreds of steps."""
PROCESSOR_SECONDS_BUCKETS: tuple[float, ...] = (
    1e-6,
    2.5e-6,
    5e-6,
    1e-5,
    2.5e-5,
    5e-5,
    1e-4,
    2.5e-4,
    5e-4,
    1e-3,
    2.5e-3,
    5e-3,
    1e-2,
    float("inf"),
)
"""The processor's own cost per span: a no-op processor costs ~0.1 µs, a batch exporter ~3 µs."""

_MAX_LABEL_LENGTH = 128


def _observation(value: object) -> float | None:
    """A non-negative number (not NaN) from ``value``; None for anything else (bools too)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if number >= 0 and number == number else None


def _count(value: object) -> int | None:
    """A finite number as a count (negatives read as 0); None for anything else (bools too)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return max(0, int(value))


def _text(value: object) -> str | None:
    """Plain label text from a str, a str-valued enum or anything printable; None if empty."""
    if value is None:
        return None
    if isinstance(value, enum.Enum):
        value = value.value
    text = value if isinstance(value, str) else str(value)
    text = text.strip()[:_MAX_LABEL_LENGTH]
    return text or None


def _enumerated(value: object, allowed: Iterable[str]) -> str:
    """Keep known values only, so a caller's typo cannot add a series."""
    text = _text(value)
    if text is None:
        return OTHER
    text = text.lower()
    return text if text in allowed else OTHER


class _CappedLabel:
    """Admits the first ``cap`` distinct values and maps later ones to ``other``."""

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def admit(self, value: object) -> tuple[str, bool]:
        """The label value to report, and whether it was seen for the first time."""
        text = _text(value) or UNKNOWN
        if text in self._seen:
            return text, False
        with self._lock:
            if text in self._seen:
                return text, False
            if len(self._seen) >= self._cap:
                text = OTHER
                if text in self._seen:
                    return text, False
            self._seen.add(text)
            return text, True


class _SeriesCache:
    """The labelled series of one hot counter by the raw names its caller passes.

    ``Counter.labels()`` validates, joins and locks on every call, which made counting a tool
    call cost more than detecting a loop in it. The first call with given names takes that
    path (capping, enumerating); later ones find the series here. Only plain ``str`` / None
    names are kept (hashable, and what the guard passes), and at most ``limit`` of them: raw
    names are not capped (past the label cap they all map to ``other``), so past the limit
    calls simply take the slow path again and nothing grows.
    """

    __slots__ = ("_limit", "_series")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._series: dict[tuple[str | None, ...], Any] = {}

    def get(self, key: tuple[object, ...]) -> Any:
        for name in key:
            if name is not None and name.__class__ is not str:
                return None
        return self._series.get(key)  # type: ignore[arg-type]

    def put(self, key: tuple[object, ...], series: Any) -> Any:
        if len(self._series) < self._limit and all(
            name is None or name.__class__ is str for name in key
        ):
            self._series[key] = series  # type: ignore[index]
        return series


class CycleGuardMetrics:
    """The loop-protection counters, gauges and histograms, on one injectable registry.

    Follows client_python's convention: ``registry`` defaults to the global ``REGISTRY``;
    tests pass a fresh ``CollectorRegistry()``; ``None`` builds unregistered metrics.
    """

    def __init__(
        self,
        registry: CollectorRegistry | None = REGISTRY,
        *,
        max_agents: int = 50,
        max_tools: int = 200,
    ) -> None:
        if max_agents < 1 or max_tools < 1:
            raise ValueError("max_agents and max_tools must be at least 1")
        self.registry = registry
        self._agents = _CappedLabel(max_agents)
        self._tools = _CappedLabel(max_tools)
        # Raw (agent, tool) pairs seen: a few per label value, bounded all the same.
        self._tool_call_series = _SeriesCache(4 * max_agents * max_tools)
        self._model_turn_series = _SeriesCache(4 * max_agents)

        def counter(name: str, doc: str, labels: tuple[str, ...]) -> Counter:
            return Counter(name, doc, labels, registry=registry)

        self._tool_calls = counter(
            "cycleguard_tool_calls", "Tool-call spans observed.", ("agent", "tool")
        )
        self._model_turns = counter(
            "cycleguard_model_turns", "Model-turn spans observed.", ("agent",)
        )
        self._signals = counter(
            "cycleguard_signals",
            "Loop signals emitted, by dimension and level (warn/term).",
            ("agent", "dimension", "level"),
        )
        self._rule_signals = counter(
            "cycleguard_rule_signals",
            "Loop signals emitted, by the rule that fired inside its dimension (warn/term).",
            ("agent", "rule", "level"),
        )
        self._tool_signals = counter(
            "cycleguard_tool_signals",
            "Loop signals emitted on a tool call, by the tool that was repeating.",
            ("agent", "tool", "level"),
        )
        self._self_heals = counter(
            "cycleguard_self_heals",
            "Corrective messages queued after a dimension's first TERM.",
            ("agent", "dimension"),
        )
        self._breaks_succeeded = counter(
            "cycleguard_breaks_succeeded",
            "Self-heals after which the dimension did not reach TERM again.",
            ("agent", "dimension"),
        )
        self._human_escalations = counter(
            "cycleguard_human_escalations",
            "Escalations to a human (second TERM in a dimension).",
            ("agent", "dimension"),
        )
        self._hitl_decisions = counter(
            "cycleguard_hitl_decisions",
            "Outcomes of human escalations (continue|terminate|modify|timeout|error).",
            ("agent", "decision"),
        )
        self._terminations = counter(
            "cycleguard_terminations",
            "Runs terminated, by reason code.",
            ("agent", "reason"),
        )
        self._sessions_started = counter(
            "cycleguard_sessions_started", "Agent sessions first seen.", ("agent",)
        )
        self._sessions_with_cycle = counter(
            "cycleguard_sessions_with_cycle",
            "Sessions that reached TERM in any dimension at least once.",
            ("agent",),
        )
        self._sessions_evicted = counter(
            "cycleguard_sessions_evicted",
            "Session states dropped to bound memory (lru|idle).",
            ("cause",),
        )
        self._spans_dropped = counter(
            "cycleguard_spans_dropped",
            "Spans the processor could not keep: queue_full (background detection fell behind "
            "for longer than max_wait_s: not detected), open_spans (max_open_spans reached).",
            ("reason",),
        )
        self._sessions_active = Gauge(
            "cycleguard_sessions_active",
            "Sessions currently tracked by the detector.",
            registry=registry,
        )
        self._sessions_hibernated = Gauge(
            "cycleguard_sessions_hibernated",
            "Tracked sessions whose state is packed small until their next call (quiet past "
            "session_hibernate_after_s).",
            registry=registry,
        )
        self._steps_to_first_cycle = Histogram(
            "cycleguard_steps_to_first_cycle",
            "Tool calls a session made before its first TERM.",
            ("agent",),
            buckets=STEPS_TO_FIRST_CYCLE_BUCKETS,
            registry=registry,
        )
        self._processor_seconds = Histogram(
            "cycleguard_processor_seconds",
            "Time the span processor spent on one span (its own overhead).",
            ("span_kind",),
            buckets=PROCESSOR_SECONDS_BUCKETS,
            registry=registry,
        )
        # Series that exist from the start, so rates and alerts see the first increment.
        for cause in EVICTION_CAUSES:
            self._sessions_evicted.labels(cause=cause)
        for span_kind in SPAN_KINDS:
            self._processor_seconds.labels(span_kind=span_kind)
        for reason in DROP_REASONS:
            self._spans_dropped.labels(reason=reason)

    # -- label helpers ---------------------------------------------------------------------

    def _agent(self, agent: object) -> str:
        """The bounded agent label; a new agent gets its zero-valued series created."""
        label, new = self._agents.admit(agent)
        if new:
            self._init_agent(label)
        return label

    def _init_agent(self, agent: str) -> None:
        """Create an agent's series at 0 so ratios read 0 (not absent) and rate() sees the
        first event; bounded by max_agents × the enumerated label sets."""
        self._model_turns.labels(agent=agent)
        self._sessions_started.labels(agent=agent)
        self._sessions_with_cycle.labels(agent=agent)
        self._steps_to_first_cycle.labels(agent=agent)
        for dimension in DIMENSIONS:
            self._self_heals.labels(agent=agent, dimension=dimension)
            self._breaks_succeeded.labels(agent=agent, dimension=dimension)
            self._human_escalations.labels(agent=agent, dimension=dimension)
            for level in LEVELS:
                self._signals.labels(agent=agent, dimension=dimension, level=level)
        for rule in RULES:
            for level in LEVELS:
                self._rule_signals.labels(agent=agent, rule=rule, level=level)
        for decision in DECISIONS:
            self._hitl_decisions.labels(agent=agent, decision=decision)
        for reason in TERMINATION_REASONS:
            self._terminations.labels(agent=agent, reason=reason)

    def _tool(self, tool: object) -> str:
        return self._tools.admit(tool)[0]

    # -- what happened -----------------------------------------------------------------------

    @guarded()
    def tool_call(self, agent: str | None, tool: str | None) -> None:
        """A tool-call span was observed."""
        key = (agent, tool)
        series = self._tool_call_series.get(key)
        if series is None:
            series = self._tool_call_series.put(
                key, self._tool_calls.labels(agent=self._agent(agent), tool=self._tool(tool))
            )
        series.inc()

    @guarded()
    def model_turn(self, agent: str | None) -> None:
        """A model-turn span was observed."""
        key = (agent,)
        series = self._model_turn_series.get(key)
        if series is None:
            series = self._model_turn_series.put(
                key, self._model_turns.labels(agent=self._agent(agent))
            )
        series.inc()

    @guarded()
    def signal(
        self,
        agent: str | None,
        dimension: str | Dimension,
        level: str | Level,
        tool: str | None = None,
        rule: str | None = None,
    ) -> None:
        """A dimension fired (``rule``: what fired inside it, the dimension's own counter when
        None); ``tool`` (when the signal is on a tool call) feeds top-tools."""
        agent_label = self._agent(agent)
        level_label = _enumerated(level, LEVELS)
        dimension_label = _enumerated(dimension, DIMENSIONS)
        self._signals.labels(agent=agent_label, dimension=dimension_label, level=level_label).inc()
        self._rule_signals.labels(
            agent=agent_label, rule=_enumerated(rule or dimension_label, RULES), level=level_label
        ).inc()
        if tool is not None:
            self._tool_signals.labels(
                agent=agent_label, tool=self._tool(tool), level=level_label
            ).inc()

    @guarded()
    def self_heal(self, agent: str | None, dimension: str | Dimension) -> None:
        """A corrective message was queued (first TERM in a dimension)."""
        self._self_heals.labels(
            agent=self._agent(agent), dimension=_enumerated(dimension, DIMENSIONS)
        ).inc()

    @guarded()
    def break_succeeded(self, agent: str | None, dimension: str | Dimension) -> None:
        """A self-heal held: the dimension did not reach TERM again."""
        self._breaks_succeeded.labels(
            agent=self._agent(agent), dimension=_enumerated(dimension, DIMENSIONS)
        ).inc()

    @guarded()
    def human_escalation(self, agent: str | None, dimension: str | Dimension) -> None:
        """A human was asked (second TERM in a dimension)."""
        self._human_escalations.labels(
            agent=self._agent(agent), dimension=_enumerated(dimension, DIMENSIONS)
        ).inc()

    @guarded()
    def hitl_decision(self, agent: str | None, decision: str) -> None:
        """A human escalation ended: continue, terminate, modify, timeout or error."""
        self._hitl_decisions.labels(
            agent=self._agent(agent), decision=_enumerated(decision, DECISIONS)
        ).inc()

    @guarded()
    def termination(self, agent: str | None, reason: str) -> None:
        """A run was terminated with a reason code."""
        self._terminations.labels(
            agent=self._agent(agent), reason=_enumerated(reason, TERMINATION_REASONS)
        ).inc()

    @guarded()
    def session_started(self, agent: str | None) -> None:
        """A session was seen for the first time (the loop-rate denominator)."""
        self._sessions_started.labels(agent=self._agent(agent)).inc()

    @guarded()
    def session_with_cycle(self, agent: str | None, steps: float | None) -> None:
        """A session reached its first TERM after ``steps`` tool calls."""
        agent_label = self._agent(agent)
        self._sessions_with_cycle.labels(agent=agent_label).inc()
        value = _observation(steps)  # None, negative, NaN or not a number: not observed
        if value is not None:
            self._steps_to_first_cycle.labels(agent=agent_label).observe(value)

    @guarded()
    def session_evicted(self, cause: str) -> None:
        """A session's state was dropped to bound memory (lru or idle)."""
        self._sessions_evicted.labels(cause=_enumerated(cause, EVICTION_CAUSES)).inc()

    @guarded()
    def span_dropped(self, reason: str) -> None:
        """The span processor dropped a span (queue_full or open_spans)."""
        self._spans_dropped.labels(reason=_enumerated(reason, DROP_REASONS)).inc()

    @guarded()
    def set_sessions_active(self, n: int, hibernated: int | None = None) -> None:
        """How many sessions the detector tracks right now (and how many of them sleep)."""
        for gauge, value in ((self._sessions_active, n), (self._sessions_hibernated, hibernated)):
            count = _count(value)
            if count is not None:
                gauge.set(count)

    @guarded()
    def processor_cost(self, span_kind: str, seconds: float) -> None:
        """The processor spent ``seconds`` on one span of kind tool, model or other."""
        value = _observation(seconds)
        if value is not None:
            self._processor_seconds.labels(span_kind=_enumerated(span_kind, SPAN_KINDS)).observe(
                value
            )

    # -- serving -----------------------------------------------------------------------------

    def start_http_server(self, port: int, addr: str = "127.0.0.1") -> tuple[Any, threading.Thread]:
        """Serve this registry on ``addr:port`` (loopback by default; port 0 picks a free one).

        Returns ``(server, thread)``; ``server.server_port`` is the bound port and
        ``server.shutdown()`` stops it.
        """
        registry = self.registry if self.registry is not None else CollectorRegistry()
        return _start_http_server(port, addr=addr, registry=registry)
