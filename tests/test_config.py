"""Configuration: the built-in defaults, merging, files, environment, one-line validation errors."""

from __future__ import annotations

import json

import pytest

from otel_cycleguard.config import BUDGET_PRESETS, ConfigError, CycleGuardConfig, load_config

# docs/detection.md, "Thresholds per profile" (warn / term): general, coding, subagent.
BUILTIN_TABLE = {
    "identical_call": ((3, 5), (4, 7), (3, 5)),
    "category_streak.exploration": ((30, 50), (50, 100), (20, 30)),
    "category_streak.action": ((15, 25), (25, 50), (10, 15)),
    "tool_pattern": ((3, 5), (4, 7), (3, 5)),
    "poll_no_progress": ((10, 20), (10, 20), (5, 10)),
    "error_streak": ((5, 8), (8, 12), (4, 6)),
    "text_loop": ((3, 5), (3, 5), (3, 4)),
    "state_hash": ((3, 5), (3, 5), (3, 4)),
}
# docs/detection.md, per-tool overrides (general / coding).
BUILTIN_OVERRIDES = {
    "exec": ((15, 30), (30, 60)),
    "exec:readonly": ((25, 40), (25, 40)),
    "edit": ((10, 20), (30, 60)),
    "write": ((10, 20), (10, 20)),
    "apply_patch": ((10, 20), (10, 20)),
    "plan": ((8, 15), (8, 15)),
}


def pick(profile, dotted):
    node = profile
    for part in dotted.split("."):
        node = getattr(node, part)
    return node.warn, node.term


def cfg(**kwargs) -> CycleGuardConfig:
    return load_config(environ={}, **kwargs)


@pytest.mark.parametrize("dimension", BUILTIN_TABLE)
def test_builtin_profiles_have_spec_default_thresholds(dimension):
    config = cfg()
    got = tuple(pick(config.profiles[p], dimension) for p in ("general", "coding", "subagent"))
    assert got == BUILTIN_TABLE[dimension]


@pytest.mark.parametrize("tool", BUILTIN_OVERRIDES)
def test_builtin_per_tool_overrides_match_the_documented_table(tool):
    config = cfg()
    got = tuple(
        (o.warn, o.term)
        for o in (
            config.profiles[p].category_streak.tool_overrides[tool] for p in ("general", "coding")
        )
    )
    assert got == BUILTIN_OVERRIDES[tool]


def test_defaults_state_window_fifty_max_period_four_budget_off_and_general_profile():
    config = cfg()
    assert config.profile == "general" and config.subagent_profile == "subagent"
    for profile in config.profiles.values():
        assert profile.state_hash.window == 50
        assert profile.tool_pattern.max_period == 4
        assert profile.text_loop.similarity == 0.9
        assert profile.budget.enabled is False
    assert config.escalation.hitl_timeout_s == 60


def test_a_partial_user_profile_is_deep_merged_onto_the_builtin_one():
    config = cfg(
        profiles={
            "coding": {"identical_call": {"warn": 5}, "category_streak": {"action": {"term": 60}}}
        }
    )
    coding = config.profiles["coding"]
    assert (coding.identical_call.warn, coding.identical_call.term) == (5, 7)
    assert (coding.category_streak.action.warn, coding.category_streak.action.term) == (25, 60)
    assert (coding.category_streak.exploration.warn, coding.category_streak.exploration.term) == (
        50,
        100,
    )
    assert coding.category_streak.tool_overrides["edit"].term == 60
    assert config.profiles["general"].identical_call.warn == 3


def test_per_tool_overrides_can_be_added():
    config = cfg(
        profiles={
            "general": {"category_streak": {"tool_overrides": {"deploy": {"warn": 2, "term": 4}}}}
        }
    )
    overrides = config.profiles["general"].category_streak.tool_overrides
    assert (overrides["deploy"].warn, overrides["deploy"].term) == (2, 4)
    assert overrides["exec"].warn == 15  # the built-in ones stay


def test_a_new_profile_starts_from_general_and_extends_picks_another_base():
    config = cfg(profiles={"mine": {"text_loop": {"warn": 2}}, "strict": {"extends": "subagent"}})
    assert config.profiles["mine"].identical_call.term == 5
    assert config.profiles["mine"].text_loop.warn == 2
    assert config.profiles["strict"].error_streak.term == 6


def test_extends_may_name_a_user_profile_defined_later():
    config = cfg(
        profiles={
            "child": {"extends": "parent", "identical_call": {"warn": 2}},
            "parent": {"extends": "coding", "text_loop": {"warn": 2}},
        }
    )
    child = config.profiles["child"]
    assert (child.identical_call.warn, child.identical_call.term) == (2, 7)
    assert child.text_loop.warn == 2
    assert child.error_streak.term == 12


def test_agents_map_to_profiles_and_subagents_use_the_subagent_profile():
    config = cfg(agents={"coder": "coding"}, subagent_profile="coding")
    assert config.profile_for("coder")[0] == "coding"
    assert config.profile_for("other")[0] == "general"
    assert config.profile_for(None, subagent=True)[0] == "coding"
    assert cfg().profile_for("x", subagent=True)[0] == "subagent"


def test_budget_preset_fills_the_budget_from_the_documented_table():
    config = cfg(profiles={"general": {"budget": {"preset": "tool_calling"}}})
    budget = config.profiles["general"].budget
    preset = BUDGET_PRESETS["tool_calling"]
    assert budget.enabled is True
    assert budget.max_tool_calls == preset["steps"] == 15
    assert budget.max_tokens == preset["tokens"]
    assert budget.max_wall_seconds == preset["session_s"]
    assert budget.call_seconds == {"exploration": 30, "action": 30}
    assert config.profiles["coding"].budget.enabled is False


@pytest.mark.parametrize("preset", sorted(BUDGET_PRESETS))
def test_every_budget_preset_loads(preset):
    assert (
        cfg(profiles={"general": {"budget": {"preset": preset}}}).profiles["general"].budget.enabled
    )


# -- files and environment ---------------------------------------------------------------


BODY = {
    "profile": "coding",
    "agents": {"helper": "subagent"},
    "profiles": {"coding": {"identical_call": {"warn": 6, "term": 9}}},
    "poll_tools": ["check_ci"],
}


def check_body(config):
    assert config.profile == "coding"
    assert config.agents == {"helper": "subagent"}
    assert (
        config.profiles["coding"].identical_call.warn,
        config.profiles["coding"].identical_call.term,
    ) == (6, 9)
    assert config.poll_tools == ("check_ci",)


def test_yaml_file(tmp_path):
    path = tmp_path / "cycleguard.yaml"
    path.write_text(
        "profile: coding\nagents: {helper: subagent}\n"
        "profiles:\n  coding:\n    identical_call: {warn: 6, term: 9}\npoll_tools: [check_ci]\n"
    )
    check_body(load_config(path, environ={}))


def test_toml_file(tmp_path):
    path = tmp_path / "cycleguard.toml"
    path.write_text(
        'profile = "coding"\npoll_tools = ["check_ci"]\n[agents]\nhelper = "subagent"\n'
        "[profiles.coding.identical_call]\nwarn = 6\nterm = 9\n"
    )
    check_body(load_config(path, environ={}))


def test_json_file(tmp_path):
    path = tmp_path / "cycleguard.json"
    path.write_text(json.dumps(BODY))
    check_body(load_config(path, environ={}))


def test_file_may_nest_everything_under_a_cycleguard_key(tmp_path):
    path = tmp_path / "app.json"
    path.write_text(json.dumps({"cycleguard": BODY}))
    check_body(load_config(path, environ={}))


def test_config_file_from_the_environment(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(BODY))
    check_body(load_config(environ={"CYCLEGUARD_CONFIG": str(path)}))


def test_environment_variables_override_the_file(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"profile": "general"}))
    config = load_config(
        path,
        environ={
            "CYCLEGUARD_PROFILE": "coding",
            "CYCLEGUARD_PROFILES__CODING__IDENTICAL_CALL__WARN": "5",
            "CYCLEGUARD_DISABLED_DIMENSIONS": "budget,state_hash",
            "UNRELATED": "x",
        },
    )
    assert config.profile == "coding"
    assert config.profiles["coding"].identical_call.warn == 5
    assert config.profiles["coding"].identical_call.term == 7
    assert config.disabled_dimensions == ("budget", "state_hash")


def test_environment_lists_may_be_json_or_comma_separated_at_any_depth():
    config = load_config(
        environ={
            "CYCLEGUARD_READ_ONLY_TOOLS": '["probe", "peek"]',
            "CYCLEGUARD_PROFILES__CODING__NEAR_DUPLICATE_EDIT__TOOLS": "edit, patch",
            "cycleguard_mask_defaults": "off",
        }
    )
    assert config.read_only_tools == ("probe", "peek")
    assert config.profiles["coding"].near_duplicate_edit.tools == ("edit", "patch")
    assert config.mask_defaults is False


def test_environment_json_that_does_not_parse_is_one_line_naming_the_field():
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"CYCLEGUARD_AGENTS": "{bad"})
    assert str(caught.value).startswith("environment: agents is not valid JSON (")
    assert "\n" not in str(caught.value)


def test_environment_variables_of_other_parts_are_not_configuration():
    config = load_config(
        environ={"CYCLEGUARD_RAISE_INTERNAL_ERRORS": "1", "CYCLEGUARD_SERVICE_TOKEN": "t"}
    )
    assert config == load_config(environ={})


def test_keyword_arguments_override_the_environment():
    config = load_config(environ={"CYCLEGUARD_PROFILE": "coding"}, profile="subagent")
    assert config.profile == "subagent"


def test_with_overrides_sets_one_profile_field_or_a_top_level_field():
    base = cfg()
    changed = base.with_overrides(["identical_call.warn=4", "profile=general"])
    assert changed.profiles["general"].identical_call.warn == 4
    assert base.profiles["general"].identical_call.warn == 3
    coding = base.with_overrides(["error_streak.term=20"], profile="coding")
    assert coding.profiles["coding"].error_streak.term == 20
    with pytest.raises(ConfigError, match="identical_call"):
        base.with_overrides(["identical_call.warn=9"])
    with pytest.raises(ConfigError):
        base.with_overrides(["no-equals-sign"])


# -- validation: one line naming the field and the rule --------------------------------


def error_of(**kwargs) -> str:
    with pytest.raises(ConfigError) as info:
        cfg(**kwargs)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_warn_above_term_is_rejected():
    message = error_of(profiles={"general": {"identical_call": {"warn": 9}}})
    assert "profiles.general.identical_call" in message
    assert "warn" in message and "term" in message


def test_unknown_dimension_in_a_profile_is_rejected():
    message = error_of(profiles={"general": {"identical_calls": {"warn": 1, "term": 2}}})
    assert "profiles.general.identical_calls" in message and "unknown" in message


def test_unknown_dimension_in_disabled_dimensions_is_rejected():
    message = error_of(disabled_dimensions=["loops"])
    assert "disabled_dimensions" in message and "'loops'" in message


def test_negative_limit_is_rejected():
    message = error_of(profiles={"general": {"budget": {"max_tool_calls": -1}}})
    assert "profiles.general.budget.max_tool_calls" in message
    assert "greater than" in message
    message = error_of(profiles={"general": {"budget": {"call_seconds": {"exec": -2}}}})
    assert "call_seconds" in message and "> 0" in message


def test_zero_threshold_is_rejected():
    message = error_of(profiles={"general": {"text_loop": {"warn": 0}}})
    assert "profiles.general.text_loop.warn" in message


def test_bad_regex_is_rejected_in_masks_and_result_patterns():
    message = error_of(mask_patterns=["("])
    assert "mask_patterns" in message and "regular expression" in message
    message = error_of(profiles={"general": {"error_streak": {"result_patterns": ["[a-"]}}})
    assert "result_patterns" in message and "regular expression" in message


def test_unknown_profile_is_rejected():
    assert "profile" in error_of(profile="nope") and "'nope'" in error_of(profile="nope")
    assert "agents.bot" in error_of(agents={"bot": "nope"})
    assert "subagent_profile" in error_of(subagent_profile="nope")
    message = error_of(profiles={"x": {"extends": "nope"}})
    assert "extends" in message and "'nope'" in message


def test_extends_cycle_is_rejected():
    message = error_of(profiles={"a": {"extends": "b"}, "b": {"extends": "a"}})
    assert "extends" in message and "cycle" in message


def test_unknown_budget_preset_is_rejected():
    with pytest.raises(ConfigError, match="preset"):
        cfg(profiles={"general": {"budget": {"preset": "nope"}}})


def test_unknown_top_level_field_is_rejected():
    assert "profil" in error_of(profil="coding")


def test_bad_file_errors_are_one_line(tmp_path):
    for name, text in (
        ("bad.yaml", "a: [1,\n b: 2\n"),
        ("bad.toml", "a = [\n"),
        ("bad.json", "{\n"),
        ("list.json", "[1]"),
        ("bad.ini", "x"),
    ):
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(ConfigError) as info:
            load_config(path, environ={})
        assert "\n" not in str(info.value)
        assert str(path) in str(info.value)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml", environ={})


def test_bad_environment_value_names_the_variable_path():
    with pytest.raises(ConfigError) as info:
        load_config(environ={"CYCLEGUARD_PROFILES__GENERAL__IDENTICAL_CALL__WARN": "lots"})
    assert "profiles.general.identical_call.warn" in str(info.value)


def test_a_bad_value_is_named_with_its_field_and_what_was_given():
    """One line: the field's path, the rule and the value, so the culprit is found at once."""
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"CYCLEGUARD_ESCALATION__HITL_TIMEOUT_S": "-1"})
    # The environment holds text: the value is shown as it was written.
    assert str(caught.value) == (
        "escalation.hitl_timeout_s: Input should be greater than 0 (got '-1')"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"CYCLEGUARD_PROFILE": "nope"})
    assert str(caught.value) == "profile: unknown profile 'nope'; known: general, coding, subagent"
