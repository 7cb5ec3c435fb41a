"""The Grafana dashboard is well-formed, its queries are valid PromQL on metrics that exist."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.cog.plugins import register_default_plugins
from grafana_foundation_sdk.cog.runtime import UnknownDataquery
from grafana_foundation_sdk.models import dashboard as sdk
from grafana_foundation_sdk.models import prometheus as sdk_prometheus
from prom import DASHBOARD, dashboard_queries, load_dashboard, promtool, recording_rule_names
from prometheus_client import CollectorRegistry

from otel_cycleguard.metrics import CycleGuardMetrics

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


@pytest.fixture(name="dashboard")
def fixture_dashboard() -> dict[str, Any]:
    return load_dashboard()


def exported_metric_names() -> set[str]:
    """Series names a CycleGuardMetrics registry exposes, once every method has been used."""
    registry = CollectorRegistry()
    metrics = CycleGuardMetrics(registry)
    metrics.session_started("a")
    metrics.tool_call("a", "t")
    metrics.signal("a", "identical_call", "term", tool="t")
    return {sample.name for family in registry.collect() for sample in family.samples}


class TestStructure:
    def test_dashboard_is_json_with_a_fixed_uid_and_schema(self, dashboard: dict) -> None:
        """A stable uid keeps links and provisioning stable; schemaVersion 39 is Grafana 10/11."""
        assert dashboard["uid"] == "cycleguard-loops"
        assert dashboard["schemaVersion"] == 39
        assert json.loads(DASHBOARD.read_text()) == dashboard

    def test_datasource_and_agent_are_template_variables(self, dashboard: dict) -> None:
        """Any Prometheus can be chosen, and every agent or a subset."""
        variables = {v["name"]: v for v in dashboard["templating"]["list"]}

        assert variables["datasource"]["type"] == "datasource"
        assert variables["datasource"]["query"] == "prometheus"
        agent = variables["agent"]
        assert agent["type"] == "query"
        assert agent["datasource"] == DATASOURCE
        assert agent["multi"] and agent["includeAll"] and agent["allValue"] == ".*"
        assert "label_values(cycleguard_sessions_started_total, agent)" in str(agent["query"])

    def test_every_panel_queries_the_chosen_datasource(self, dashboard: dict) -> None:
        """Each panel has at least one PromQL target, all on ${datasource}."""
        for panel in dashboard["panels"]:
            assert panel["datasource"] == DATASOURCE, panel["title"]
            assert panel["targets"], panel["title"]
            for target in panel["targets"]:
                assert target["datasource"] == DATASOURCE, panel["title"]
                assert target["expr"].strip(), panel["title"]
            ref_ids = [t["refId"] for t in panel["targets"]]
            assert len(set(ref_ids)) == len(ref_ids), panel["title"]

    def test_panel_ids_are_unique_and_panels_do_not_overlap(self, dashboard: dict) -> None:
        """Overlapping gridPos would hide panels behind one another."""
        panels = dashboard["panels"]
        assert len({p["id"] for p in panels}) == len(panels)
        cells: dict[tuple[int, int], str] = {}
        for panel in panels:
            pos = panel["gridPos"]
            assert pos["x"] + pos["w"] <= 24, panel["title"]
            for x in range(pos["x"], pos["x"] + pos["w"]):
                for y in range(pos["y"], pos["y"] + pos["h"]):
                    assert (x, y) not in cells, (panel["title"], cells.get((x, y)))
                    cells[(x, y)] = panel["title"]

    @pytest.mark.parametrize(
        "needle",
        [
            "cycle_detected",
            "break_success",
            "human_escalation",
            "cycleguard_signals_total",
            "cycleguard_self_heals_total",
            "cycleguard_terminations_total",
            "topk(",
            "cycleguard_steps_to_first_cycle_bucket",
            "cycleguard_processor_seconds_bucket",
            "cycleguard_hitl_decisions_total",
        ],
    )
    def test_the_required_views_are_present(self, needle: str) -> None:
        """Loop rates, funnel, top agents/tools, steps to cycle, overhead, outcomes."""
        assert any(needle in q.expr for q in dashboard_queries())


class TestQueries:
    def test_every_panel_query_is_valid_promql(self, tmp_path: Path) -> None:
        """promtool parses each query (template variables substituted) as a recording rule."""
        queries = dashboard_queries()
        rules = {
            "groups": [
                {
                    "name": "dashboard",
                    "rules": [
                        {"record": f"dashboard:query_{i}:check", "expr": q.resolved}
                        for i, q in enumerate(queries)
                    ],
                }
            ]
        }
        path = tmp_path / "dashboard_rules.yml"
        path.write_text(yaml.safe_dump(rules))

        result = promtool("check", "rules", path)

        assert result.returncode == 0, result.stdout + result.stderr
        assert f"{len(queries)} rules found" in result.stdout

    def test_every_referenced_series_exists(self) -> None:
        """Queries only use metrics the plugin exports or rules we record: no typos."""
        known = exported_metric_names() | set(recording_rule_names())
        pattern = re.compile(r"\b(?:cycleguard_\w+|(?:agent|fleet):cycleguard_\w+:\w+)")
        for query in dashboard_queries():
            names = set(pattern.findall(query.expr))
            assert names, query
            assert names <= known, (query.panel, names - known)

    def test_the_agent_filter_applies_wherever_the_metric_has_an_agent(self) -> None:
        """A query on a per-agent metric without agent=~"$agent" would ignore the selector."""
        unfiltered = {"cycleguard_sessions_active", "cycleguard_processor_seconds_bucket"}
        unfiltered |= {"cycleguard_sessions_evicted_total"}
        for query in dashboard_queries():
            for selector in re.finditer(
                r"(?<![\w:])((?:(?:agent|fleet):)?cycleguard_\w+(?::\w+)?)(\{[^}]*\})?", query.expr
            ):
                name, labels = selector.group(1), selector.group(2) or ""
                if name in unfiltered or name.startswith("fleet:"):
                    continue
                assert 'agent=~"$agent"' in labels, (query.panel, selector.group(0))


class TestFoundationSdk:
    """grafana-foundation-sdk's generated models decode the dashboard without losing anything.

    ``Dashboard.from_json`` only copies keys its schema knows and silently ignores the rest, so
    decoding alone proves little. The checks: every panel decodes to a ``Panel``, its options to
    the panel plugin's own ``Options`` class, every target to the Prometheus ``Dataquery`` (not
    the ``UnknownDataquery`` fallback), and encoding the models back gives every key and value
    of the file (a dropped key means the schema does not know it: a typo or a wrong field).
    """

    @pytest.fixture(name="decoded")
    def fixture_decoded(self, dashboard: dict) -> sdk.Dashboard:
        register_default_plugins()
        return sdk.Dashboard.from_json(dashboard)

    def test_panels_options_and_targets_decode_to_typed_models(
        self, decoded: sdk.Dashboard
    ) -> None:
        """Typed decoding means the panel types and the Prometheus targets are recognised."""
        assert decoded.schema_version == 39
        assert decoded.panels
        for panel in decoded.panels:
            assert isinstance(panel, sdk.Panel)
            assert type(panel.options).__name__ == "Options", (panel.title, panel.type_val)
            assert type(panel.options).__module__.endswith(f".{panel.type_val}"), panel.title
            for target in panel.targets or []:
                assert not isinstance(target, UnknownDataquery), panel.title
                assert isinstance(target, sdk_prometheus.Dataquery), panel.title
                assert target.expr

    def test_round_trip_through_the_models_keeps_every_key(
        self, dashboard: dict, decoded: sdk.Dashboard
    ) -> None:
        """Every key and value in the file survives decode + encode by the SDK models."""
        encoded = json.loads(json.dumps(decoded, cls=JSONEncoder))

        assert lost(dashboard, encoded) == []


def lost(original: Any, encoded: Any, path: str = "") -> list[str]:
    """Paths of the original that are missing or different in the encoded copy."""
    if isinstance(original, dict):
        if not isinstance(encoded, dict):
            return [path]
        return [
            missing
            for key, value in original.items()
            for missing in (
                lost(value, encoded[key], f"{path}/{key}") if key in encoded else [f"{path}/{key}"]
            )
        ]
    if isinstance(original, list):
        if not isinstance(encoded, list) or len(original) != len(encoded):
            return [path]
        pairs = enumerate(zip(original, encoded, strict=True))
        return [m for i, (a, b) in pairs for m in lost(a, b, f"{path}[{i}]")]
    return [] if original == encoded else [path]
