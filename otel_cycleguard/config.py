"""Configuration: thresholds per dimension, the three built-in profiles, and where they load from.

Precedence, lowest first: built-in defaults (docs/detection.md) < a YAML/TOML file < ``CYCLEGUARD_*``
environment variables < keyword arguments. User profiles are deep-merged onto the built-in ones,
so ``profiles: {coding: {identical_call: {warn: 5}}}`` changes one number and keeps the rest.
Every validation problem becomes a one-line :class:`ConfigError` naming the field and the rule.

The environment is read by pydantic-settings (:class:`_EnvironmentSource`). Files are parsed
here (tomllib, PyYAML, json): pydantic-settings' file sources keep only the keys that name a
field, so a misspelt dimension in a file would vanish silently instead of failing with
"unknown field", and they skip a file that does not exist, where a named file must exist.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_settings import EnvSettingsSource
from pydantic_settings.exceptions import SettingsError
from pydantic_settings.sources.utils import parse_env_vars

from otel_cycleguard.detect import settings as _settings
from otel_cycleguard.detect.settings import (
    DEFAULT_EMPTY_RESULT_LOOKUPS,
    DEFAULT_EXEC_FAILURE_PATTERNS,
    DEFAULT_NON_FAILING_EXIT_CODES,
    DetectorSettings,
)

__all__ = [
    "BUDGET_PRESETS",
    "DEFAULT_EMPTY_RESULT_LOOKUPS",
    "DEFAULT_EXEC_FAILURE_PATTERNS",
    "DEFAULT_NON_FAILING_EXIT_CODES",
    "DEFAULT_PROGRESS_DIR",
    "BudgetConfig",
    "CategoryStreakConfig",
    "ConfigError",
    "CycleGuardConfig",
    "EditWithoutEffectConfig",
    "ErrorStreakConfig",
    "EscalationConfig",
    "FailedLookupsConfig",
    "FailureDensityConfig",
    "NearDuplicateEditConfig",
    "NothingNewConfig",
    "ProfileConfig",
    "RecurringFailureConfig",
    "RepeatedFailureConfig",
    "ReplayCycleConfig",
    "SameErrorConfig",
    "StateHashConfig",
    "TextLoopConfig",
    "Thresholds",
    "ToolPatternConfig",
    "load_config",
]

#: The one default place for saved progress, shared by the guard and ``otel_cycleguard.resume``.
DEFAULT_PROGRESS_DIR = ".cycleguard/progress"

ENV_PREFIX = "CYCLEGUARD_"
Category = Literal["exploration", "action"]


class ConfigError(ValueError):
    """A configuration problem, phrased as one line: ``field.path: what is wrong``."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


class Thresholds(_Strict):
    """A warn and a term threshold: a count at or above fires that level."""

    warn: int = Field(ge=1)
    term: int = Field(ge=1)

    @model_validator(mode="after")
    def _warn_not_above_term(self) -> Thresholds:
        if self.warn > self.term:
            raise ValueError(f"warn threshold ({self.warn}) must not exceed term ({self.term})")
        return self


class CategoryStreakConfig(_Strict):
    """Thresholds per tool category, and per-tool overrides that replace them."""

    exploration: Thresholds
    action: Thresholds
    tool_overrides: dict[str, Thresholds] = Field(default_factory=dict)


class ToolPatternConfig(Thresholds):
    """Laps of a repeating unit of ``2..max_period`` calls at the tail of the sequence."""

    max_period: int = Field(default=4, ge=2, le=8)


class TextLoopConfig(Thresholds):
    """Consecutive (near-)identical model texts; ``similarity`` is Jaccard over word shingles."""

    similarity: float = Field(default=0.9, gt=0.0, le=1.0)
    shingle_size: int = Field(default=3, ge=1, le=8)


class StateHashConfig(Thresholds):
    """Revisits of a state fingerprint within the last ``window`` states."""

    window: int = Field(default=50, ge=2, le=10_000)
    attribute: str = "cycleguard.state_hash"


class ErrorStreakConfig(Thresholds):
    """Consecutive failures, across all tools and per tool.

    ``result_patterns`` mark a call failed when its result matches (regex, searched in the first
    ``max_scan_chars`` characters). ``non_failing_tools`` never count as failures even with an
    error status (e.g. a linter that exits non-zero whenever it reports anything).
    """

    result_patterns: tuple[str, ...] = ()
    non_failing_tools: tuple[str, ...] = ()
    max_scan_chars: int = Field(default=4096, ge=64)
    #: Result patterns checked for exec-like and search-like tools only (``exec``, ``python``,
    #: ``bash``, ``search_*``, ``find_file``...); ``()`` turns this off.
    exec_failure_patterns: tuple[str, ...] = DEFAULT_EXEC_FAILURE_PATTERNS
    #: command (first word of an exec call) -> exit codes that are findings, not failures.
    #: The exit code is read from the result (``<returncode>N</returncode>``, ``exit code N``).
    non_failing_exit_codes: dict[str, tuple[int, ...]] = Field(
        default_factory=lambda: dict(DEFAULT_NON_FAILING_EXIT_CODES)
    )
    #: "A search that finds nothing is a failed search": an exec call running one of these
    #: look-up commands with an empty output is a failure (``()`` turns this off), and so is
    #: an empty result of a search-like tool (``search_dir``, ``find_file``, ``grep``...)
    #: while this is not empty. An exit code that ``non_failing_exit_codes`` lists for the
    #: command (grep 1: no match) still makes it a finding: the harness reported the result.
    empty_result_lookups: tuple[str, ...] = DEFAULT_EMPTY_RESULT_LOOKUPS

    @field_validator("result_patterns", "exec_failure_patterns")
    @classmethod
    def _patterns_compile(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        return _check_regexes(patterns)


class ReplayCycleConfig(_Strict):
    """Laps of a call replayed with the same result at a constant distance (``2..max_gap``).

    A call (same tool, same arguments, same masked result) that recurs every ``gap`` calls is a
    lap of a cycle of length ``gap``, whatever the other calls in the lap do (their arguments may
    change, as when every lap edits something new and re-runs the same unchanged check). Reported
    under ``tool_pattern``. ``warn``/``term`` count laps when the whole lap is replayed, or when
    the calls that change every lap all fail (failed attempts bring nothing new);
    ``partial_term`` when only some of its calls are replayed and a changed call works. A lap
    in which a look answered something the session has not seen (and nothing failed) is news,
    and adds no lap.
    """

    enabled: bool = True
    warn: int = Field(default=3, ge=1)
    term: int = Field(default=3, ge=1)
    partial_term: int = Field(default=5, ge=1)
    max_gap: int = Field(default=8, ge=2, le=32)

    @model_validator(mode="after")
    def _warn_not_above_term(self) -> ReplayCycleConfig:
        if self.warn > min(self.term, self.partial_term):
            raise ValueError(f"warn threshold ({self.warn}) must not exceed term ({self.term})")
        return self


class NearDuplicateEditConfig(_Strict):
    """Consecutive calls of an edit-like tool whose arguments are equal once every number is
    masked (only the line range moved): the same edit re-applied, or two edits applied in turn
    (delete a line, re-insert the block; counted in laps). Reported under ``identical_call``.
    Results are not compared: a duplicated edit grows the file each time. Edits shorter than
    ``min_chars`` count only as half of a two-edit lap (deleting lines one by one is work)."""

    enabled: bool = True
    warn: int = Field(default=3, ge=1)  # = term: a retry that fails twice is not yet a signal
    term: int = Field(default=3, ge=1)
    tools: tuple[str, ...] = ("edit", "write", "apply_patch", "create")
    min_chars: int = Field(default=40, ge=0)

    @model_validator(mode="after")
    def _warn_not_above_term(self) -> NearDuplicateEditConfig:
        if self.warn > self.term:
            raise ValueError(f"warn threshold ({self.warn}) must not exceed term ({self.term})")
        return self


class RepeatedFailureConfig(_Strict):
    """The same failing call with the same (masked) failure, consecutively: reported under
    ``identical_call`` with these lower thresholds, since a repeated failure is no retry that
    can work (OpenHands stops at 3)."""

    enabled: bool = True
    warn: int = Field(default=3, ge=1)  # = term: a retry that fails twice is not yet a signal
    term: int = Field(default=3, ge=1)

    @model_validator(mode="after")
    def _warn_not_above_term(self) -> RepeatedFailureConfig:
        if self.warn > self.term:
            raise ValueError(f"warn threshold ({self.warn}) must not exceed term ({self.term})")
        return self


class _WindowCounts(_Strict):
    """A count among the last ``window`` calls with warn and term thresholds (the windowed
    rules); each subclass sets its defaults."""

    enabled: bool = True
    window: int = Field(default=16, ge=2, le=64)
    warn: int = Field(default=4, ge=1)
    term: int = Field(default=5, ge=1)

    @model_validator(mode="after")
    def _thresholds_fit_window(self) -> _WindowCounts:
        if self.warn > self.term:
            raise ValueError(f"warn threshold ({self.warn}) must not exceed term ({self.term})")
        if self.term > self.window:
            raise ValueError(
                f"term threshold ({self.term}) must not exceed the window ({self.window})"
            )
        return self


class RecurringFailureConfig(_WindowCounts):
    """The same failing call (same tool, arguments and masked error, whitespace aside: an
    ``old_str`` retried with other indentation is one call) recurring at least
    ``term`` (``warn``) times within the last ``window`` calls, whatever lies between: edit,
    re-run the same failing command, edit, re-run... (the edits change, the failure does not),
    or the same install timing out between mirror and network tweaks. Reported under
    ``identical_call``; silent while the recurrences are all consecutive (``repeated_failure``
    reports those). The built-in profiles: ``general`` 5 of 20, ``coding`` 6 of 24,
    ``subagent`` 4 of 12.
    """

    window: int = Field(default=20, ge=2, le=64)
    warn: int = Field(default=4, ge=2)
    term: int = Field(default=5, ge=2)


class SameErrorConfig(_WindowCounts):
    """The same (masked) error coming back from different calls: at least ``term`` (``warn``)
    failures with one output among the last ``window`` calls, counted since the last progress
    (``failure_density``'s definition: a successful edit, or an exec call that edits files).
    Reported under ``error_streak``: the agent hits one wall from every side (the same
    ``command not found``, the same install timing out, the same empty search) while the
    commands around it change, so neither the identical-call rules nor the consecutive streak
    see it. Silent while the failures are one streak of the identical call
    (``repeated_failure``'s). A failure the next call corrects (the same tool, for a shell the
    same command and first argument, now succeeding) is a slip, not a wall, and is not counted:
    an agent that keeps naming a file the search tool cannot find and then its full path is
    making progress each time. The built-in profiles: ``general`` 5 of 16, ``coding`` and
    ``subagent`` 3 of 16 and of 12 (on the development corpus no successful coding run
    repeats one error more than twice between edits).
    """


class FailureDensityConfig(_WindowCounts):
    """Failures that keep coming with only trivial successes in between: at least ``term``
    (``warn``) of the last ``window`` calls failed, counted since the last successful call of
    a ``progress_tools`` tool (an edit that went through is progress and starts the count
    over). Reported under ``error_streak``: the consecutive streak misses a run whose every
    few failures are interrupted by a call that "works" (``ls``, ``echo``, an index update)
    without getting the agent anywhere. The built-in profiles ask for about two thirds of
    the window (``general`` 8 of 12, ``coding`` 11 of 16, ``subagent`` 6 of 9). While the
    counted failures are all consecutive the rule is silent: that is the plain error streak,
    with its own thresholds.
    """

    window: int = Field(default=12, ge=2, le=64)
    warn: int = Field(default=6, ge=1)
    term: int = Field(default=8, ge=1)
    progress_tools: tuple[str, ...] = ("edit", "write", "apply_patch", "create")
    #: A successful exec call that edits files (``sed -i``, ``cat <<EOF > file``, ``tee``,
    #: ``patch``, ``git apply``/``checkout``...) is progress too: agents with a shell and no
    #: edit tool (mini-swe-agent) edit this way.
    progress_commands: bool = True


class FailedLookupsConfig(Thresholds):
    """Look-ups that fail or find nothing, in a row: a search with no match, a read of a file
    that is not there, a read-only command with an empty output, each query different.
    Reported under ``error_streak``, with thresholds below it: a look-up that finds nothing
    tells the agent nothing, and short runs (six steps of a ReAct agent) end before the
    streak's own TERM. Only tools known to read count (an unknown tool is no evidence)."""

    enabled: bool = True
    warn: int = Field(default=4, ge=1)
    term: int = Field(default=5, ge=1)


class EditWithoutEffectConfig(Thresholds):
    """Rounds of [edit, the same check command] whose masked output never changes: the agent
    rewrites the same file, re-runs the same script and gets what it got after the previous
    edit. Counted in rounds in a row (the first of them included); any new output is new
    information and starts over, so edit -> test -> new failure -> edit is never counted.
    Reported under ``tool_pattern``. ``edit_tools`` are the edit-like tools (by canonical
    name or tool name); shell commands that edit files count too."""

    enabled: bool = True
    warn: int = Field(default=3, ge=1)
    term: int = Field(default=4, ge=1)
    edit_tools: tuple[str, ...] = ("edit", "write", "apply_patch", "create")


class NothingNewConfig(Thresholds):
    """Calls in a row that each brought nothing new: every one repeats an earlier call of the
    session (the same tool and arguments) and gets the answer it got then (the same masked
    result). A re-walk of known rooms, the same searches and reads again in another order,
    a diagnostic sweep run once more: no single call is a loop, and no constant lap shows,
    but nothing the agent does tells it anything it has not been told. The session remembers
    its last 64 distinct calls with their answers. Any call it has not seen (a new argument, a
    changed answer) starts over; a poll, and a repeat of the call just before (``identical_call``'s
    loop), leave the count as it is. Whatever the tool, known or
    not: an exact repeat of call and answer is evidence about the run, not about the tool.
    Reported under ``tool_pattern``."""

    enabled: bool = True
    warn: int = Field(default=8, ge=1)
    term: int = Field(default=20, ge=1)


class BudgetConfig(_Strict):
    """Per-session limits, independent of repetition. Off by default (docs/detection.md, "Budgets").

    WARN fires at ``warn_fraction`` of a limit, TERM at the limit. ``call_seconds`` limits one
    call's duration per category (``exploration``, ``action``, or a tool name).
    """

    enabled: bool = False
    max_tool_calls: int | None = Field(default=None, ge=1)
    max_model_turns: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_wall_seconds: float | None = Field(default=None, gt=0)
    max_idle_seconds: float | None = Field(default=None, gt=0)
    call_seconds: dict[str, float] = Field(default_factory=dict)
    warn_fraction: float = Field(default=0.8, gt=0.0, le=1.0)

    @field_validator("call_seconds")
    @classmethod
    def _positive_limits(cls, limits: dict[str, float]) -> dict[str, float]:
        for name, seconds in limits.items():
            if seconds <= 0:
                raise ValueError(f"call_seconds[{name!r}] must be > 0, got {seconds}")
        return limits


class ProfileConfig(_Strict):
    """One complete set of thresholds: a built-in profile or a user's own."""

    identical_call: Thresholds
    category_streak: CategoryStreakConfig
    tool_pattern: ToolPatternConfig
    poll_no_progress: Thresholds
    error_streak: ErrorStreakConfig
    text_loop: TextLoopConfig
    state_hash: StateHashConfig
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    # Rules for loops met in real agent runs (rust/cycleguard-core/src/rules.rs); each reports
    # under one of the dimensions above and says which rule fired in its explanation.
    replay_cycle: ReplayCycleConfig = Field(default_factory=ReplayCycleConfig)
    near_duplicate_edit: NearDuplicateEditConfig = Field(default_factory=NearDuplicateEditConfig)
    repeated_failure: RepeatedFailureConfig = Field(default_factory=RepeatedFailureConfig)
    recurring_failure: RecurringFailureConfig = Field(default_factory=RecurringFailureConfig)
    failure_density: FailureDensityConfig = Field(default_factory=FailureDensityConfig)
    same_error: SameErrorConfig = Field(default_factory=SameErrorConfig)
    failed_lookups: FailedLookupsConfig = Field(default_factory=FailedLookupsConfig)
    edit_without_effect: EditWithoutEffectConfig = Field(default_factory=EditWithoutEffectConfig)
    nothing_new: NothingNewConfig = Field(default_factory=NothingNewConfig)


def _t(warn: int, term: int) -> dict[str, int]:
    return {"warn": warn, "term": term}


# Built-in thresholds (warn / term) and per-tool overrides; docs/detection.md has the tables.
BUILTIN_PROFILES: dict[str, dict[str, Any]] = {
    "general": {
        "identical_call": _t(3, 5),
        "category_streak": {
            "exploration": _t(30, 50),
            "action": _t(15, 25),
            "tool_overrides": {
                "exec": _t(15, 30),
                "exec:readonly": _t(25, 40),
                "edit": _t(10, 20),
                "write": _t(10, 20),
                "apply_patch": _t(10, 20),
                "plan": _t(8, 15),
            },
        },
        "tool_pattern": _t(3, 5),
        "poll_no_progress": _t(10, 20),
        "error_streak": _t(5, 8),
        "failure_density": {"window": 12, "warn": 6, "term": 8},
        "recurring_failure": {"window": 20, "warn": 4, "term": 5},
        "same_error": {"window": 16, "warn": 4, "term": 5},
        "failed_lookups": _t(4, 5),
        "edit_without_effect": _t(3, 4),
        "nothing_new": _t(8, 20),
        "text_loop": _t(3, 5),
        "state_hash": _t(3, 5),
    },
    "coding": {
        "identical_call": _t(4, 7),
        "category_streak": {
            "exploration": _t(50, 100),
            "action": _t(25, 50),
            "tool_overrides": {
                "exec": _t(30, 60),
                "exec:readonly": _t(25, 40),
                "edit": _t(30, 60),
                "write": _t(10, 20),
                "apply_patch": _t(10, 20),
                "plan": _t(8, 15),
            },
        },
        "tool_pattern": _t(4, 7),
        "poll_no_progress": _t(10, 20),
        "error_streak": _t(8, 12),
        "failure_density": {"window": 16, "warn": 8, "term": 11},
        "recurring_failure": {"window": 24, "warn": 4, "term": 6},
        "same_error": {"window": 16, "warn": 3, "term": 3},
        "failed_lookups": _t(6, 8),
        "edit_without_effect": _t(3, 4),
        "nothing_new": _t(8, 20),
        "text_loop": _t(3, 5),
        "state_hash": _t(3, 5),
    },
    "subagent": {
        "identical_call": _t(3, 5),
        "category_streak": {
            "exploration": _t(20, 30),
            "action": _t(10, 15),
            "tool_overrides": {
                "exec": _t(15, 30),
                "exec:readonly": _t(25, 40),
                "edit": _t(10, 20),
                "write": _t(10, 20),
                "apply_patch": _t(10, 20),
                "plan": _t(8, 15),
            },
        },
        "tool_pattern": _t(3, 5),
        "poll_no_progress": _t(5, 10),
        "error_streak": _t(4, 6),
        "failure_density": {"window": 9, "warn": 4, "term": 6},
        "recurring_failure": {"window": 12, "warn": 3, "term": 4},
        "same_error": {"window": 12, "warn": 3, "term": 3},
        "failed_lookups": _t(3, 4),
        "edit_without_effect": _t(3, 4),
        "nothing_new": _t(6, 15),
        "text_loop": _t(3, 4),
        "state_hash": _t(3, 4),
    },
}

# Budget presets (docs/detection.md, "Budgets"): tool timeout, session time, max steps, max tokens.
BUDGET_PRESETS: dict[str, dict[str, Any]] = {
    "simple_qa": {"tool_s": 10, "session_s": 60, "steps": 5, "tokens": 5_000},
    "tool_calling": {"tool_s": 30, "session_s": 300, "steps": 15, "tokens": 30_000},
    "complex_analysis": {"tool_s": 60, "session_s": 600, "steps": 30, "tokens": 80_000},
    "autonomous": {"tool_s": 120, "session_s": 1800, "steps": 50, "tokens": 200_000},
    "batch": {"tool_s": 300, "session_s": 7200, "steps": 100, "tokens": 500_000},
}


def budget_preset(name: str) -> BudgetConfig:
    """An enabled budget for one of the preset scenarios (idle timeout 120 s in each)."""
    try:
        preset = BUDGET_PRESETS[name]
    except KeyError:
        raise ConfigError(
            f"budget.preset: unknown preset {name!r}; choose one of {', '.join(BUDGET_PRESETS)}"
        ) from None
    return BudgetConfig(
        enabled=True,
        max_tool_calls=preset["steps"],
        max_model_turns=preset["steps"],
        max_tokens=preset["tokens"],
        max_wall_seconds=preset["session_s"],
        max_idle_seconds=120,
        call_seconds={"exploration": preset["tool_s"], "action": preset["tool_s"]},
    )


class EscalationConfig(_Strict):
    """The two-phase protocol's knobs (docs/detection.md, "The escalation protocol")."""

    hitl_timeout_s: float = Field(default=60.0, gt=0)
    break_window: int | None = Field(default=None, ge=1)
    soft_hint_on_warn: bool = False
    webhook_url: str | None = None
    webhook_secret: str | None = None
    include_raw: bool = False
    #: Where terminated runs' progress is saved; ``resume(ref)`` looks there too.
    progress_dir: str = DEFAULT_PROGRESS_DIR


class CycleGuardConfig(_Strict):
    """Everything the guard can be told. Build it with :func:`load_config`."""

    enabled: bool = True
    profile: str = "general"
    subagent_profile: str = "subagent"
    profiles: dict[str, ProfileConfig] = Field(default_factory=dict)
    agents: dict[str, str] = Field(default_factory=dict, description="agent name -> profile name")
    disabled_dimensions: tuple[str, ...] = ()
    extra_categories: dict[str, Category] = Field(default_factory=dict)
    read_only_tools: tuple[str, ...] = ()
    progress_aware_tools: tuple[str, ...] = ("edit", "write", "apply_patch", "exec")
    poll_tools: tuple[str, ...] = ()
    delegating_tools: tuple[str, ...] = ("delegate_task", "task", "spawn_agent", "run_subagent")
    mask_patterns: tuple[str, ...] = ()
    mask_defaults: bool = True
    result_fields: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    evidence_size: int = Field(default=5, ge=1, le=32)
    max_sessions: int = Field(default=10_000, ge=1)
    session_idle_ttl_s: float = Field(default=3600.0, gt=0)
    # A session quiet this long is packed small until its next call (None: never).
    session_hibernate_after_s: float | None = Field(default=60.0, gt=0)
    max_tool_label_values: int = Field(default=200, ge=1)
    escalation: EscalationConfig = Field(default_factory=EscalationConfig)

    @field_validator("profiles", mode="before")
    @classmethod
    def _merge_builtin_profiles(cls, value: Any) -> Any:
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            return value
        merged: dict[str, Any] = copy.deepcopy(BUILTIN_PROFILES)
        for name in _extends_order(value):
            body = value[name]
            if isinstance(body, ProfileConfig):
                merged[name] = body
                continue
            if isinstance(body, Mapping):
                body = dict(body)
                extends = body.pop("extends", None)
                if extends is not None and str(extends) not in merged:
                    raise ValueError(
                        f"{name}.extends: unknown profile {extends!r}; known: {', '.join(merged)}"
                    )
                base = merged.get(str(extends) if extends else name, merged["general"])
                if isinstance(base, ProfileConfig):
                    base = base.model_dump()
                if "budget" in body and isinstance(body["budget"], Mapping):
                    budget = dict(body["budget"])
                    preset = budget.pop("preset", None)
                    if preset is not None:
                        body["budget"] = {**budget_preset(str(preset)).model_dump(), **budget}
                merged[name] = _deep_merge(base, body)
            else:
                merged[name] = body
        return merged

    @field_validator("disabled_dimensions")
    @classmethod
    def _known_dimensions(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        from otel_cycleguard.detect.signals import DIMENSIONS

        for name in names:
            if name not in DIMENSIONS:
                raise ValueError(f"unknown dimension {name!r}; known: {', '.join(DIMENSIONS)}")
        return names

    @field_validator("mask_patterns")
    @classmethod
    def _masks_compile(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        return _check_regexes(patterns)

    @model_validator(mode="after")
    def _profiles_exist(self) -> CycleGuardConfig:
        for field_name, name in (
            ("profile", self.profile),
            ("subagent_profile", self.subagent_profile),
        ):
            if name not in self.profiles:
                raise ValueError(
                    f"{field_name}: unknown profile {name!r}; known: {', '.join(self.profiles)}"
                )
        for agent, name in self.agents.items():
            if name not in self.profiles:
                raise ValueError(f"agents.{agent}: unknown profile {name!r}")
        return self

    def detector_settings(self) -> DetectorSettings:
        """This configuration compiled to the detection core's plain settings (once per
        detector; the core never reads the pydantic models)."""
        return _compile(self, DetectorSettings)

    def profile_for(
        self, agent: str | None = None, *, subagent: bool = False
    ) -> tuple[str, ProfileConfig]:
        """The profile name and thresholds for one session: agent override > subagent > default."""
        name = _settings.profile_name_for(self, agent, subagent=subagent)
        return name, self.profiles[name]

    def with_overrides(
        self, assignments: Sequence[str], profile: str | None = None
    ) -> CycleGuardConfig:
        """Apply ``dimension.field=value`` overrides (the CLI's ``--set``) to one profile.

        Keys that name a top-level field (``profile=coding``) set that field instead.
        """
        data = self.model_dump()
        target = profile or self.profile
        for assignment in assignments:
            key, sep, raw = assignment.partition("=")
            if not sep or not key.strip():
                raise ConfigError(f"--set {assignment!r}: expected dimension.field=value")
            path = [part for part in key.strip().split(".") if part]
            value = _parse_scalar(raw.strip())
            if path[0] in CycleGuardConfig.model_fields and path[0] != "profiles":
                _assign(data, path, value)
            else:
                _assign(data, ["profiles", target, *path], value)
        return _validate(data)


# Each validated model and the core's settings class it compiles to (same field names).
_SETTINGS_OF: dict[type[BaseModel], type] = {
    Thresholds: _settings.ThresholdSettings,
    CategoryStreakConfig: _settings.CategoryStreakSettings,
    ToolPatternConfig: _settings.ToolPatternSettings,
    TextLoopConfig: _settings.TextLoopSettings,
    StateHashConfig: _settings.StateHashSettings,
    ErrorStreakConfig: _settings.ErrorStreakSettings,
    ReplayCycleConfig: _settings.ReplayCycleSettings,
    NearDuplicateEditConfig: _settings.NearDuplicateEditSettings,
    RepeatedFailureConfig: _settings.RepeatedFailureSettings,
    RecurringFailureConfig: _settings.RecurringFailureSettings,
    SameErrorConfig: _settings.SameErrorSettings,
    FailureDensityConfig: _settings.FailureDensitySettings,
    FailedLookupsConfig: _settings.FailedLookupsSettings,
    EditWithoutEffectConfig: _settings.EditWithoutEffectSettings,
    NothingNewConfig: _settings.NothingNewSettings,
    BudgetConfig: _settings.BudgetSettings,
    ProfileConfig: _settings.ProfileSettings,
}


def _compile(model: BaseModel, target: type) -> Any:
    """``model`` as an instance of the settings class ``target``: the fields ``target``
    declares, nested models compiled to their own settings classes."""

    def value_of(value: Any) -> Any:
        if isinstance(value, BaseModel):
            return _compile(value, _SETTINGS_OF[type(value)])
        if isinstance(value, Mapping):
            return {key: value_of(item) for key, item in value.items()}
        return value

    fields = dataclasses.fields(target)
    return target(**{f.name: value_of(getattr(model, f.name)) for f in fields})


def _extends_order(profiles: Mapping[str, Any]) -> list[str]:
    """User profile names, each after the user profile it ``extends`` (cycles: ConfigError)."""
    order: list[str] = []
    state: dict[str, int] = {}  # 1: in progress, 2: done

    def visit(name: str) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            raise ValueError(f"{name}.extends: profiles extend each other in a cycle")
        state[name] = 1
        body = profiles[name]
        parent = body.get("extends") if isinstance(body, Mapping) else None
        if parent is not None and str(parent) != name and str(parent) in profiles:
            visit(str(parent))
        state[name] = 2
        order.append(name)

    for name in profiles:
        visit(name)
    return order


def _check_regexes(patterns: tuple[str, ...]) -> tuple[str, ...]:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
    return patterns


def _deep_merge(base: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _assign(data: dict[str, Any], path: list[str], value: Any) -> None:
    node = data
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[path[-1]] = value


def _parse_scalar(raw: str) -> Any:
    """Environment and ``--set`` values: JSON when it parses (numbers, bools, lists), else text."""
    lowered = raw.lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    try:
        return json.loads(raw)
    except ValueError:
        if "," in raw and not raw.startswith(("{", "[")):
            return [item.strip() for item in raw.split(",") if item.strip()]
        return raw


def _format_error(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        loc = ".".join(str(part) for part in error["loc"]) or "config"
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = (
                "unknown field (check the spelling; dimensions are "
                + ", ".join(BUILTIN_PROFILES["general"])
                + ", budget)"
            )
        elif (
            isinstance(error.get("input"), str | int | float | bool)
            and len(repr(error["input"])) <= 60
        ):  # the value as given names the culprit when several sources set fields
            message += f" (got {error['input']!r})"
        # A whole-model rule's message already names its fields ("profile: unknown ...").
        problems.append(f"{loc}: {message}" if error["loc"] else message)
    return "; ".join(problems)


def _validate(data: Mapping[str, Any]) -> CycleGuardConfig:
    try:
        return CycleGuardConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_error(exc)) from None


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"config file {path}: cannot read ({exc.strerror or exc})") from None
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            try:
                import tomllib
            except ModuleNotFoundError:  # Python 3.10
                import tomli as tomllib  # type: ignore[no-redef]
            data = tomllib.loads(text)
        elif suffix in (".yaml", ".yml"):
            try:
                import yaml
            except ModuleNotFoundError:
                raise ConfigError(
                    f"config file {path}: YAML needs PyYAML (pip install 'otel-cycleguard[yaml]')"
                ) from None
            data = yaml.safe_load(text) or {}
        elif suffix == ".json":
            data = json.loads(text)
        else:
            raise ConfigError(
                f"config file {path}: unknown type {suffix!r}; use .yaml, .toml or .json"
            )
    except ConfigError:
        raise
    except Exception as exc:  # each parser has its own error type
        detail = " ".join(str(exc).split())  # parser messages span lines; ours are one line
        raise ConfigError(
            f"config file {path}: not valid {suffix[1:].upper()} ({detail})"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: the top level must be a mapping")
    return data.get("cycleguard", data) if isinstance(data.get("cycleguard"), dict) else data


class _EnvironmentSource(EnvSettingsSource):
    """``CYCLEGUARD_*`` variables read by pydantic-settings: ``CYCLEGUARD_PROFILE=coding``,
    ``CYCLEGUARD_PROFILES__CODING__IDENTICAL_CALL__WARN=5`` (``__`` descends, names are
    case-insensitive). Only configuration fields are read, so other ``CYCLEGUARD_*`` variables
    (``CYCLEGUARD_CONFIG``, ``CYCLEGUARD_RAISE_INTERNAL_ERRORS``, the service's) never fail
    validation. Two things are added to the library's reading: the variables may come from a
    mapping other than ``os.environ`` (``load_config(environ=...)``: tests, embedders), and a
    list may be written comma-separated (``budget,state_hash``) as well as in JSON."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(
            CycleGuardConfig,  # type: ignore[arg-type]  # a model, read for its fields only
            case_sensitive=False,
            env_prefix=ENV_PREFIX,
            env_nested_delimiter="__",
        )

    def _load_env_vars(self) -> Mapping[str, str | None]:
        # The library's one hook for where variables come from (it reads os.environ).
        return parse_env_vars(self._environ, case_sensitive=False)

    def decode_complex_value(self, field_name: str, field: Any, value: Any) -> Any:
        try:
            return super().decode_complex_value(field_name, field, value)
        except ValueError as exc:
            if isinstance(value, str) and not value.lstrip().startswith(("{", "[")):
                return [item.strip() for item in value.split(",") if item.strip()]
            raise ConfigError(
                f"environment: {field_name} is not valid JSON ({' '.join(str(exc).split())})"
            ) from None


def _from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """The configuration fields the environment sets (see :class:`_EnvironmentSource`)."""
    try:
        return _EnvironmentSource(environ)()
    except SettingsError as exc:
        if isinstance(exc.__cause__, ConfigError):
            raise exc.__cause__ from None
        raise ConfigError(f"environment: {' '.join(str(exc).split())}") from None


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    **overrides: Any,
) -> CycleGuardConfig:
    """Build a configuration from a file (or ``$CYCLEGUARD_CONFIG``), the environment and kwargs.

    Raises :class:`ConfigError` with a one-line message naming the field on any problem.
    """
    env = os.environ if environ is None else environ
    data: dict[str, Any] = {}
    file_path = path if path is not None else env.get(ENV_PREFIX + "CONFIG")
    if file_path:
        data = _read_file(Path(file_path))
    data = _deep_merge(data, _from_env(env))
    data = _deep_merge(data, overrides)
    return _validate(data)
