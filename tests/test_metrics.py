"""CycleGuardMetrics: exact values on a fresh registry, bounded labels, never raising."""

from __future__ import annotations

import math
import urllib.request

import pytest
from prometheus_client import CollectorRegistry

from otel_cycleguard.detect.signals import Dimension, Level
from otel_cycleguard.metrics import CycleGuardMetrics


@pytest.fixture(name="registry")
def fixture_registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture(name="metrics")
def fixture_metrics(registry: CollectorRegistry) -> CycleGuardMetrics:
    return CycleGuardMetrics(registry, max_agents=3, max_tools=2)


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


class TestCounting:
    def test_tool_calls_are_counted_per_agent_and_tool(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """Each tool call adds one to its (agent, tool) series only."""
        metrics.tool_call("coder", "read")
        metrics.tool_call("coder", "read")
        metrics.tool_call("coder", "edit")

        assert value(registry, "cycleguard_tool_calls_total", agent="coder", tool="read") == 2.0
        assert value(registry, "cycleguard_tool_calls_total", agent="coder", tool="edit") == 1.0

    def test_model_turns_are_counted_per_agent(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """Model turns count per agent."""
        metrics.model_turn("coder")
        metrics.model_turn("coder")
        metrics.model_turn("planner")

        assert value(registry, "cycleguard_model_turns_total", agent="coder") == 2.0
        assert value(registry, "cycleguard_model_turns_total", agent="planner") == 1.0

    def test_signals_are_counted_by_dimension_and_level(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """Signals accept strings or the detector's enums and count by dimension and level."""
        metrics.signal("coder", "identical_call", "warn")
        metrics.signal("coder", Dimension.IDENTICAL_CALL, Level.TERM, tool="read")
        metrics.signal("coder", "IDENTICAL_CALL", "TERM", tool="read")

        name = "cycleguard_signals_total"
        assert value(registry, name, agent="coder", dimension="identical_call", level="warn") == 1
        assert value(registry, name, agent="coder", dimension="identical_call", level="term") == 2
        assert (
            value(
                registry, "cycleguard_tool_signals_total", agent="coder", tool="read", level="term"
            )
            == 2
        )

    def test_escalation_steps_are_counted_per_dimension(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """Self-heal, break success and human escalation each have their own counter."""
        metrics.self_heal("coder", "error_streak")
        metrics.self_heal("coder", "error_streak")
        metrics.break_succeeded("coder", "error_streak")
        metrics.human_escalation("coder", Dimension.ERROR_STREAK)

        labels = {"agent": "coder", "dimension": "error_streak"}
        assert value(registry, "cycleguard_self_heals_total", **labels) == 2.0
        assert value(registry, "cycleguard_breaks_succeeded_total", **labels) == 1.0
        assert value(registry, "cycleguard_human_escalations_total", **labels) == 1.0

    def test_hitl_decisions_and_terminations_are_counted_by_outcome(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """Decisions count by outcome, terminations by reason code."""
        metrics.hitl_decision("coder", "timeout")
        metrics.hitl_decision("coder", "continue")
        metrics.hitl_decision("coder", "timeout")
        metrics.termination("coder", "cycle_detected")

        name = "cycleguard_hitl_decisions_total"
        assert value(registry, name, agent="coder", decision="timeout") == 2.0
        assert value(registry, name, agent="coder", decision="continue") == 1.0
        assert value(registry, name, agent="coder", decision="modify") == 0.0
        reason = "cycle_detected"
        assert value(registry, "cycleguard_terminations_total", agent="coder", reason=reason) == 1
        assert (
            value(
                registry, "cycleguard_terminations_total", agent="coder", reason="budget_exceeded"
            )
            == 0.0
        )

    def test_sessions_with_cycle_observe_steps_to_first_cycle(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """A session's first TERM counts it and puts its step count in the histogram."""
        metrics.session_started("coder")
        metrics.session_started("coder")
        metrics.session_with_cycle("coder", 12)

        assert value(registry, "cycleguard_sessions_started_total", agent="coder") == 2.0
        assert value(registry, "cycleguard_sessions_with_cycle_total", agent="coder") == 1.0
        name = "cycleguard_steps_to_first_cycle"
        assert value(registry, f"{name}_count", agent="coder") == 1.0
        assert value(registry, f"{name}_sum", agent="coder") == 12.0
        assert value(registry, f"{name}_bucket", agent="coder", le="10.0") == 0.0
        assert value(registry, f"{name}_bucket", agent="coder", le="20.0") == 1.0

    def test_sessions_gauge_and_evictions(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """The active and hibernated gauges are set, not added; evictions count by cause."""
        metrics.set_sessions_active(7, 5)
        metrics.set_sessions_active(4, 3)
        metrics.set_sessions_active(4)  # hibernated unknown: left as it was
        metrics.session_evicted("lru")

        assert value(registry, "cycleguard_sessions_active") == 4.0
        assert value(registry, "cycleguard_sessions_hibernated") == 3.0
        assert value(registry, "cycleguard_sessions_evicted_total", cause="lru") == 1.0
        assert value(registry, "cycleguard_sessions_evicted_total", cause="idle") == 0.0

    def test_processor_cost_lands_in_fine_buckets(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """A 3 µs span lands between the 2.5 µs and 5 µs buckets."""
        metrics.processor_cost("tool", 3e-6)

        name = "cycleguard_processor_seconds_bucket"
        assert value(registry, name, span_kind="tool", le="2.5e-06") == 0.0
        assert value(registry, name, span_kind="tool", le="5e-06") == 1.0
        assert value(registry, "cycleguard_processor_seconds_count", span_kind="model") == 0.0


class TestZeroSeries:
    def test_a_new_agent_starts_with_zero_valued_series(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """Ratios and rate() need both series to exist before the first event."""
        metrics.session_started("coder")

        assert value(registry, "cycleguard_sessions_with_cycle_total", agent="coder") == 0.0
        assert (
            value(registry, "cycleguard_self_heals_total", agent="coder", dimension="text_loop")
            == 0.0
        )
        assert (
            value(registry, "cycleguard_hitl_decisions_total", agent="coder", decision="error")
            == 0.0
        )


class TestBoundedLabels:
    def test_agents_past_the_cap_are_reported_as_other(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """With max_agents=3, the fourth distinct agent becomes 'other'; known ones stay."""
        for agent in ("a", "b", "c", "d", "e"):
            metrics.model_turn(agent)
        metrics.model_turn("a")

        assert value(registry, "cycleguard_model_turns_total", agent="a") == 2.0
        assert value(registry, "cycleguard_model_turns_total", agent="c") == 1.0
        assert value(registry, "cycleguard_model_turns_total", agent="d") is None
        assert value(registry, "cycleguard_model_turns_total", agent="other") == 2.0

    def test_tools_past_the_cap_are_reported_as_other(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """With max_tools=2, the third distinct tool becomes 'other'."""
        for tool in ("read", "edit", "exec", "grep"):
            metrics.tool_call("coder", tool)

        assert value(registry, "cycleguard_tool_calls_total", agent="coder", tool="edit") == 1.0
        assert value(registry, "cycleguard_tool_calls_total", agent="coder", tool="exec") is None
        assert value(registry, "cycleguard_tool_calls_total", agent="coder", tool="other") == 2.0

    def test_counting_stays_exact_and_bounded_past_many_raw_names(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """Hot counters remember the series of the raw names they saw, but only a bounded
        number of them: 5,000 distinct tool names leave that memory small and every call
        counted under the capped label."""
        for index in range(5_000):
            metrics.tool_call("coder", f"tool_{index}")
        metrics.tool_call("coder", "tool_0")

        name = "cycleguard_tool_calls_total"
        assert value(registry, name, agent="coder", tool="tool_0") == 2.0
        assert value(registry, name, agent="coder", tool="tool_1") == 1.0
        assert value(registry, name, agent="coder", tool="other") == 4_998.0
        assert len(metrics._tool_call_series._series) <= 4 * 3 * 2

    def test_missing_agent_is_unknown(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """Agent None is reported as 'unknown'."""
        metrics.model_turn(None)

        assert value(registry, "cycleguard_model_turns_total", agent="unknown") == 1.0

    def test_values_outside_an_enumerated_label_become_other(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """A typo in a decision or reason cannot create a new series."""
        metrics.hitl_decision("coder", "maybe")
        metrics.termination("coder", "session-1234")

        assert value(registry, "cycleguard_hitl_decisions_total", agent="coder", decision="other")
        assert (
            value(registry, "cycleguard_hitl_decisions_total", agent="coder", decision="maybe")
            is None
        )
        assert value(registry, "cycleguard_terminations_total", agent="coder", reason="other") == 1

    def test_no_metric_has_a_session_label(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """Session ids are unbounded, so no metric may carry them, whatever was recorded."""
        exercise_everything(metrics)

        allowed = {"agent", "tool", "dimension", "rule", "level", "decision", "reason", "cause"}
        allowed |= {"span_kind", "le"}
        seen: set[str] = set()
        for family in registry.collect():
            for sample in family.samples:
                seen |= set(sample.labels)
        assert seen <= allowed
        assert not any("session" in label for label in seen)
        assert "agent" in seen


def exercise_everything(metrics: CycleGuardMetrics) -> None:
    metrics.session_started("coder")
    metrics.tool_call("coder", "read")
    metrics.model_turn("coder")
    metrics.signal("coder", "tool_pattern", "term", tool="read")
    metrics.self_heal("coder", "tool_pattern")
    metrics.break_succeeded("coder", "tool_pattern")
    metrics.human_escalation("coder", "tool_pattern")
    metrics.hitl_decision("coder", "modify")
    metrics.termination("coder", "error_streak_terminated")
    metrics.session_with_cycle("coder", 42)
    metrics.session_evicted("idle")
    metrics.set_sessions_active(1)
    metrics.processor_cost("model", 1e-5)


class TestNeverRaises:
    @pytest.mark.parametrize(
        "odd",
        [None, "", "   ", 12, 3.5, object(), b"bytes", "x" * 10_000, "\n\x00", ["a"], {"a": 1}],
    )
    def test_odd_input_never_raises(self, metrics: CycleGuardMetrics, odd: object) -> None:
        """Metrics run inside span hooks: any input must be absorbed, never raised."""
        metrics.tool_call(odd, odd)  # type: ignore[arg-type]
        metrics.model_turn(odd)  # type: ignore[arg-type]
        metrics.signal(odd, odd, odd, tool=odd)  # type: ignore[arg-type]
        metrics.self_heal(odd, odd)  # type: ignore[arg-type]
        metrics.break_succeeded(odd, odd)  # type: ignore[arg-type]
        metrics.human_escalation(odd, odd)  # type: ignore[arg-type]
        metrics.hitl_decision(odd, odd)  # type: ignore[arg-type]
        metrics.termination(odd, odd)  # type: ignore[arg-type]
        metrics.session_started(odd)  # type: ignore[arg-type]
        metrics.session_with_cycle(odd, odd)  # type: ignore[arg-type]
        metrics.session_evicted(odd)  # type: ignore[arg-type]
        metrics.set_sessions_active(odd)  # type: ignore[arg-type]
        metrics.processor_cost(odd, odd)  # type: ignore[arg-type]

    def test_a_failing_method_goes_through_the_one_internal_error_guard(
        self,
        metrics: CycleGuardMetrics,
        monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """A metrics bug is swallowed and logged once per site in production, raised in ours."""
        from otel_cycleguard import _errors

        class Broken:
            def labels(self, **_labels: str) -> Broken:
                raise RuntimeError("metrics bug")

        monkeypatch.setattr(metrics, "_model_turns", Broken())
        with pytest.raises(RuntimeError, match="metrics bug"):
            metrics.model_turn("coder")  # this suite asks for internal errors to be raised

        monkeypatch.setenv("CYCLEGUARD_RAISE_INTERNAL_ERRORS", "0")
        monkeypatch.setattr(_errors, "_seen", set())
        before = _errors.internal_error_count()
        with caplog.at_level("ERROR", logger="otel_cycleguard"):
            assert metrics.model_turn("coder") is None
            assert metrics.model_turn("coder") is None
        assert _errors.internal_error_count() == before + 2
        logged = [r for r in caplog.records if "CycleGuardMetrics.model_turn" in r.getMessage()]
        assert len(logged) == 1

    def test_negative_and_nan_observations_are_dropped(
        self, metrics: CycleGuardMetrics, registry: CollectorRegistry
    ) -> None:
        """Nonsense durations and step counts do not corrupt the histograms."""
        metrics.processor_cost("tool", -1.0)
        metrics.processor_cost("tool", math.nan)
        metrics.session_with_cycle("coder", -3)

        assert value(registry, "cycleguard_processor_seconds_count", span_kind="tool") == 0.0
        assert value(registry, "cycleguard_steps_to_first_cycle_count", agent="coder") == 0.0
        assert value(registry, "cycleguard_sessions_with_cycle_total", agent="coder") == 1.0

    def test_bad_caps_are_rejected_at_construction(self, registry: CollectorRegistry) -> None:
        """Configuration errors surface early, as ValueError, not in the hot path."""
        with pytest.raises(ValueError, match="max_agents"):
            CycleGuardMetrics(registry, max_agents=0)


class TestServing:
    def test_http_server_serves_the_injected_registry(self, metrics: CycleGuardMetrics) -> None:
        """The exposition endpoint on loopback shows this registry's samples."""
        metrics.tool_call("coder", "read")
        server, _thread = metrics.start_http_server(0)
        try:
            url = f"http://127.0.0.1:{server.server_port}/metrics"
            with urllib.request.urlopen(url, timeout=10) as response:
                body = response.read().decode()
        finally:
            server.shutdown()
            server.server_close()

        assert 'cycleguard_tool_calls_total{agent="coder",tool="read"} 1.0' in body
