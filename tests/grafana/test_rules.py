"""The Prometheus rules are valid and behave as their promtool unit tests say."""

from __future__ import annotations

import re

import pytest
import yaml
from prom import (
    ALERT_RULES,
    GRAFANA_DIR,
    RULE_FILES,
    RULE_TESTS,
    find_tool,
    promtool,
    recording_rule_names,
)

LOOP_RATES = ("cycle_detected", "break_success", "human_escalation")


class TestPromtool:
    def test_a_missing_binary_fails_the_test_with_the_install_hint(self) -> None:
        """No silent skip: without promtool the rule tests fail and say how to get it."""
        with pytest.raises(pytest.fail.Exception, match="test command installs it"):
            find_tool("promtool-that-does-not-exist")

    @pytest.mark.parametrize("rule_file", RULE_FILES, ids=lambda p: p.name)
    def test_rule_files_pass_promtool_check(self, rule_file) -> None:
        """promtool accepts every rule file (syntax, PromQL, names)."""
        result = promtool("check", "rules", rule_file)

        assert result.returncode == 0, result.stdout + result.stderr

    def test_rule_unit_tests_pass(self) -> None:
        """Every alert fires on its synthetic series and recording rules give exact values."""
        assert RULE_TESTS, "no promtool unit tests found"

        result = promtool("test", "rules", *RULE_TESTS)

        assert result.returncode == 0, result.stdout + result.stderr


class TestNaming:
    def test_recording_rules_follow_level_metric_operations(self) -> None:
        """Names are level:metric:operations with level agent or fleet."""
        for name in recording_rule_names():
            assert re.fullmatch(r"(agent|fleet):cycleguard_[a-z_]+:[a-z_0-9]+", name), name

    @pytest.mark.parametrize("rate", LOOP_RATES)
    def test_each_spec_rate_is_recorded_per_agent_and_fleet_wide(self, rate: str) -> None:
        """The three loop rates exist at both levels, and the README maps them."""
        names = recording_rule_names()
        readme = (GRAFANA_DIR / "README.md").read_text()

        for level in ("agent", "fleet"):
            matches = [n for n in names if n.startswith(f"{level}:cycleguard_{rate}:ratio_")]
            assert len(matches) == 1, (level, rate, names)
            assert f"`{matches[0]}`" in readme


class TestAlertMetadata:
    @pytest.fixture(name="alerts")
    def fixture_alerts(self) -> list[dict]:
        groups = yaml.safe_load(ALERT_RULES.read_text())["groups"]
        return [rule for group in groups for rule in group["rules"]]

    def test_every_alert_has_severity_and_annotations(self, alerts: list[dict]) -> None:
        """On-call needs a severity, a summary, a description and a runbook for each alert."""
        assert len(alerts) == 5
        for alert in alerts:
            assert alert["labels"]["severity"] in {"info", "warning", "critical"}, alert["alert"]
            assert {"summary", "description", "runbook_url"} <= set(alert["annotations"])

    def test_every_runbook_url_points_at_a_readme_section(self, alerts: list[dict]) -> None:
        """Each runbook_url anchor is the GitHub slug of a heading in grafana/README.md."""
        readme = (GRAFANA_DIR / "README.md").read_text()
        slugs = {
            re.sub(r"[^a-z0-9 _-]", "", heading.strip().lower()).replace(" ", "-")
            for heading in re.findall(r"^#+ (.+)$", readme, flags=re.MULTILINE)
        }
        for alert in alerts:
            path, _, anchor = alert["annotations"]["runbook_url"].partition("#")
            assert path == "grafana/README.md"
            assert anchor == f"runbook-{alert['alert'].lower()}"
            assert anchor in slugs, anchor


class TestExampleConfig:
    def test_example_prometheus_config_is_valid_and_loads_the_rules(self) -> None:
        """The shipped prometheus.yml passes promtool and finds both rule files."""
        result = promtool("check", "config", GRAFANA_DIR / "prometheus" / "prometheus.yml")

        assert result.returncode == 0, result.stdout + result.stderr
        assert "2 rule files found" in result.stdout
