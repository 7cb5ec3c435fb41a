"""docs/detection.md is the project's own account of the detection model, and stays true.

Every threshold table in it is compared with the built-in configuration, and nothing in the
repository cites a document the repository does not have.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from otel_cycleguard.config import BUDGET_PRESETS, load_config

ROOT = Path(__file__).resolve().parent.parent
DETECTION = ROOT / "docs" / "detection.md"
CITATION = re.compile(r"\bSPEC\b|\bseed 0\d\d\b|\bthe seeds?\b")
SCANNED = ("README.md", "docs", "otel_cycleguard", "quality", "grafana", "collector-config",
           "benchmarks", "tests")  # fmt: skip
PROFILES = ("general", "coding", "subagent")


def _table(heading_start: str, first_column: str) -> dict[str, list[str]]:
    """The Markdown table under the heading whose header starts with ``first_column``, as
    {first cell: the other cells}."""
    text = DETECTION.read_text(encoding="utf-8")
    section = text[text.index(f"## {heading_start}") :]
    section = section[section.index(f"| {first_column} |") :]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines()[2:]:  # past the header and its rule
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    assert rows, f"no table with a {first_column!r} column under {heading_start!r}"
    return rows


def _pair(cell: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", cell))


def test_no_citation_of_a_document_the_repository_lacks():
    hits = []
    for name in SCANNED:
        base = ROOT / name
        for path in [base] if base.is_file() else sorted(base.rglob("*")):
            if path.suffix not in (".py", ".md", ".yml", ".yaml", ".json", ".toml") or (
                path == DETECTION
            ):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if CITATION.search(line):
                    hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert hits == []


@pytest.mark.parametrize("profile", PROFILES)
def test_the_threshold_table_is_the_built_in_configuration(profile):
    config = load_config(environ={}).profiles[profile]
    column = PROFILES.index(profile)
    rows = _table("Thresholds per profile", "threshold")
    expected = {
        "`identical_call`": (config.identical_call.warn, config.identical_call.term),
        "`category_streak` exploration": (
            config.category_streak.exploration.warn,
            config.category_streak.exploration.term,
        ),
        "`category_streak` action": (
            config.category_streak.action.warn,
            config.category_streak.action.term,
        ),
        "`tool_pattern` (laps)": (config.tool_pattern.warn, config.tool_pattern.term),
        "`poll_no_progress`": (config.poll_no_progress.warn, config.poll_no_progress.term),
        "`error_streak`": (config.error_streak.warn, config.error_streak.term),
        "`text_loop`": (config.text_loop.warn, config.text_loop.term),
        "`state_hash` (visits in the last 50 states)": (
            config.state_hash.warn,
            config.state_hash.term,
        ),
        "`replay_cycle` (laps; partial laps TERM at)": (
            config.replay_cycle.warn,
            config.replay_cycle.term,
            config.replay_cycle.partial_term,
        ),
        "`near_duplicate_edit` (laps)": (
            config.near_duplicate_edit.warn,
            config.near_duplicate_edit.term,
        ),
        "`repeated_failure`": (config.repeated_failure.warn, config.repeated_failure.term),
        "`failed_lookups`": (config.failed_lookups.warn, config.failed_lookups.term),
        "`edit_without_effect` (rounds)": (
            config.edit_without_effect.warn,
            config.edit_without_effect.term,
        ),
        "`nothing_new` (calls in a row)": (config.nothing_new.warn, config.nothing_new.term),
    }
    for name in ("recurring_failure", "failure_density", "same_error"):
        rule = getattr(config, name)
        expected[f"`{name}` (in a window of)"] = (rule.warn, rule.term, rule.window)
    got = {name: _pair(cells[column]) for name, cells in rows.items() if name in expected}
    assert got == expected
    assert config.state_hash.window == 50


@pytest.mark.parametrize("profile", PROFILES)
def test_the_per_tool_override_table_is_the_built_in_configuration(profile):
    overrides = load_config(environ={}).profiles[profile].category_streak.tool_overrides
    column = PROFILES.index(profile)
    rows = _table("Thresholds per profile", "tool")
    got = {name.strip("`"): _pair(cells[column]) for name, cells in rows.items()}
    assert got == {name: (t.warn, t.term) for name, t in overrides.items()}


def test_the_budget_preset_table_is_the_built_in_one():
    rows = _table("Budgets", "preset")
    got = {name.strip("`"): _pair(" ".join(cells).replace(",", "")) for name, cells in rows.items()}
    assert got == {
        name: (p["tool_s"], p["session_s"], p["steps"], p["tokens"])
        for name, p in BUDGET_PRESETS.items()
    }


def test_every_rule_a_signal_can_name_is_documented():
    from otel_cycleguard.detect.signals import DIMENSIONS, RULES

    rows = _table("Real-world rules", "rule")
    assert {name.strip("`") for name in rows} == set(RULES) - set(DIMENSIONS)
