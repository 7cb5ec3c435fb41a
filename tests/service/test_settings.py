"""The service's settings are declared once: the CLI's defaults and the environment come from
``ServiceSettings`` (pydantic-settings), not from copies."""

from __future__ import annotations

import argparse

import pytest

pytest.importorskip("otel_cycleguard.service.app")

from otel_cycleguard.service.cli import _given, add_arguments
from otel_cycleguard.service.settings import ServiceSettings


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch):
    for name in ("CYCLEGUARD_SERVICE_TOKEN", "CYCLEGUARD_DECISION_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def test_options_not_given_leave_the_settings_defaults():
    assert ServiceSettings(**_given(_parse([]))) == ServiceSettings()


def test_the_help_shows_the_settings_defaults(capsys):
    with pytest.raises(SystemExit):
        _parse(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"(default: {ServiceSettings.model_fields['queue_spans'].default})" in text
    assert "(default: 14318)" in text


def test_the_environment_sets_what_the_command_line_does_not(monkeypatch):
    monkeypatch.setenv("CYCLEGUARD_SERVICE_QUEUE_SPANS", "5")
    monkeypatch.setenv("CYCLEGUARD_SERVICE_TOKEN", "from-env")
    monkeypatch.setenv("CYCLEGUARD_DECISION_TOKEN", "decide")
    settings = ServiceSettings(**_given(_parse([])))
    assert (settings.queue_spans, settings.token, settings.decision_token) == (
        5,
        "from-env",
        "decide",
    )
    assert ServiceSettings(**_given(_parse(["--queue-spans", "7"]))).queue_spans == 7


def test_off_and_empty_values_turn_features_off():
    settings = ServiceSettings(
        **_given(_parse(["--grpc-port", "off", "--state-file", "", "--snapshot-interval", "0"]))
    )
    assert (settings.grpc_port, settings.state_file, settings.snapshot_interval_s) == (
        None,
        None,
        None,
    )


def test_invalid_settings_are_refused_naming_the_field():
    with pytest.raises(ValueError, match="queue_spans"):
        ServiceSettings(queue_spans=0)
    with pytest.raises(ValueError, match="enable at least one"):
        ServiceSettings(http_port=None, grpc_port=None)
