"""README examples work when pasted: config blocks load, code blocks compile, commands exist."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from otel_cycleguard import load_config
from otel_cycleguard.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, re.MULTILINE | re.DOTALL)


def test_every_yaml_block_is_a_valid_configuration(tmp_path: Path) -> None:
    found = blocks("yaml")
    assert found, "the README shows a YAML configuration"
    for index, text in enumerate(found):
        path = tmp_path / f"example{index}.yaml"
        path.write_text(text, encoding="utf-8")
        config = load_config(path, environ={})
        data = yaml.safe_load(text)
        assert config.profile == data.get("profile", "general")


def test_yaml_example_changes_only_what_it_names(tmp_path: Path) -> None:
    path = tmp_path / "example.yaml"
    path.write_text(blocks("yaml")[0], encoding="utf-8")
    config = load_config(path, environ={})
    coding = config.profiles["coding"]
    assert (coding.identical_call.warn, coding.identical_call.term) == (5, 8)
    assert coding.category_streak.exploration.term == 100  # untouched default
    assert config.profiles["general"].budget.enabled
    assert config.agents == {"triage-bot": "general"}


def test_every_python_block_compiles() -> None:
    found = blocks("python")
    assert len(found) >= 3
    for text in found:
        compile(text, "<README>", "exec")


def test_environment_examples_are_valid() -> None:
    names = re.findall(r"`(CYCLEGUARD_[A-Z_]+=[^`]+)`", README)
    assert names
    environ = dict(item.split("=", 1) for item in names if not item.startswith("CYCLEGUARD_CONFIG"))
    environ.pop("CYCLEGUARD_ENABLED", None)
    config = load_config(environ=environ)
    assert config.profile == "coding"


def test_quick_start_scripts_and_cli_commands_exist() -> None:
    for script in re.findall(r"^(scripts/\S+\.sh)", README, re.MULTILINE):
        assert (ROOT / script).is_file(), script
    commands = set(re.findall(r"cycleguard (analyze|demo|serve)\b", README))
    assert commands
    parser = build_parser()
    for command in commands:
        assert parser.parse_args([command, *_minimal(command)]).command == command


def _minimal(command: str) -> list[str]:
    return ["trace.json"] if command == "analyze" else []
