"""The core's plain settings and the validated configuration stay in step."""

from __future__ import annotations

import dataclasses

import pytest

from otel_cycleguard.config import _SETTINGS_OF, CycleGuardConfig, load_config
from otel_cycleguard.detect import Detector, DetectorSettings, ToolCall
from otel_cycleguard.detect.settings import ProfileSettings


@pytest.mark.parametrize("model", sorted(_SETTINGS_OF, key=lambda m: m.__name__))
def test_every_configuration_model_has_a_settings_class_with_the_same_fields(model):
    settings_class = _SETTINGS_OF[model]
    assert {f.name for f in dataclasses.fields(settings_class)} == set(model.model_fields)


def test_detector_settings_declares_only_fields_the_configuration_has():
    names = {f.name for f in dataclasses.fields(DetectorSettings)}
    assert names <= set(CycleGuardConfig.model_fields)


def test_compiled_settings_carry_every_profile_value():
    config = load_config(environ={}, profiles={"mine": {"identical_call": {"warn": 2, "term": 4}}})
    settings = config.detector_settings()
    assert set(settings.profiles) == set(config.profiles)
    mine = settings.profiles["mine"]
    assert isinstance(mine, ProfileSettings)
    assert (mine.identical_call.warn, mine.identical_call.term) == (2, 4)
    for name, profile in config.profiles.items():
        compiled = settings.profiles[name]
        assert (
            compiled.error_streak.exec_failure_patterns
            == profile.error_streak.exec_failure_patterns
        )
        assert dict(compiled.category_streak.tool_overrides).keys() == (
            profile.category_streak.tool_overrides.keys()
        )
        assert compiled.budget.call_seconds == profile.budget.call_seconds


def test_settings_are_frozen():
    settings = CycleGuardConfig().detector_settings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.profile = "coding"  # type: ignore[misc]


def test_detector_built_from_settings_or_configuration_fires_the_same_signals():
    config = load_config(environ={}, profile="coding")
    calls = [ToolCall("grep", {"pattern": "x"}, "nothing") for _ in range(8)]
    from_config = Detector(config).session("a")
    from_settings = Detector(config.detector_settings()).session("a")
    first = [s.level for c in calls for s in from_config.observe_tool_call(c)]
    second = [s.level for c in calls for s in from_settings.observe_tool_call(c)]
    assert first and first == second


def test_profile_for_picks_agent_then_subagent_then_default():
    settings = load_config(environ={}, agents={"coder": "coding"}).detector_settings()
    assert settings.profile_for("coder")[0] == "coding"
    assert settings.profile_for("other", subagent=True)[0] == settings.subagent_profile
    assert settings.profile_for(None)[0] == settings.profile
