"""The detection core's settings: plain, frozen data it receives and never validates.

The core depends on nothing else in the package. ``otel_cycleguard.config`` validates what a
user writes (files, environment, keyword arguments; pydantic) and compiles it once into these
classes with :meth:`CycleGuardConfig.detector_settings`; a compiled core (or a test) can build
them directly. The field names are the configuration's, one class per configuration model, so
``profile.error_streak.term`` reads the same on both sides (``tests/detect/test_core_settings.py``
keeps the two in step). Defaults live in one place, the configuration; the detection knowledge
that both sides need (the built-in failure patterns and look-up commands) lives here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "DEFAULT_EMPTY_RESULT_LOOKUPS",
    "DEFAULT_EXEC_FAILURE_PATTERNS",
    "DEFAULT_NON_FAILING_EXIT_CODES",
    "BudgetSettings",
    "CategoryStreakSettings",
    "DetectorSettings",
    "EditWithoutEffectSettings",
    "ErrorStreakSettings",
    "FailedLookupsSettings",
    "FailureDensitySettings",
    "NearDuplicateEditSettings",
    "NothingNewSettings",
    "ProfileSettings",
    "RecurringFailureSettings",
    "RepeatedFailureSettings",
    "ReplayCycleSettings",
    "SameErrorSettings",
    "StateHashSettings",
    "SupportsDetectorSettings",
    "TextLoopSettings",
    "ThresholdSettings",
    "ToolPatternSettings",
    "profile_name_for",
]

# Result patterns that mark an exec-like or search-like call failed even when its span says ok
# (SWE-agent-style environments flag few of these). Searched, multi-line (``^``/``$`` anchor at
# every line), in the first ``max_scan_chars`` characters.
DEFAULT_EXEC_FAILURE_PATTERNS: tuple[str, ...] = (
    r"^(?:/bin/\w*sh: (?:line \d+: )?|sudo: |bash: )?\S+: command not found",
    r"^\S.*: No such file or directory$",
    r"syntax error(?: near unexpected token| at line|: unexpected)",
    r"^Traceback \(most recent call last\):",
    r"^E: ",
    r"^EXECUTION TIMED OUT",
    r": unrecognized service$",
    r"^No matches found for ",
    r"^dpkg-query: no packages found matching ",
    r"^WARNING: Package\(s\) not found: ",
)

# Look-up commands whose empty output (after stripping whitespace; for ``whereis`` a bare
# ``name:``) means "nothing found": a failed search. The first word of the last pipeline stage
# (or of an earlier stage followed only by filters such as ``head``/``sort``); entries of two
# words (``apt-cache search``) match the first two words. Not counted: output redirected
# away (``> file``), ``grep -q``, ``find -delete``/``-exec``, bare ``printenv``, and a result
# whose exit code ``non_failing_exit_codes`` lists for the command (``grep`` 1: a finding).
DEFAULT_EMPTY_RESULT_LOOKUPS: tuple[str, ...] = (
    "find",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "git grep",
    "fd",
    "fdfind",
    "locate",
    "plocate",
    "mlocate",
    "which",
    "whereis",
    "command -v",
    "printenv",
    "apt-cache search",
    "apt-file search",
    "dpkg -S",
)

# Commands whose non-zero exit is a finding, not a failure (grep: no match; diff: files
# differ; linters: messages reported, pylint's bit-field exit 1..31 such as 16).
DEFAULT_NON_FAILING_EXIT_CODES: Mapping[str, tuple[int, ...]] = {
    "grep": (1,),
    "egrep": (1,),
    "fgrep": (1,),
    "rg": (1,),
    "diff": (1,),
    "cmp": (1,),
    "test": (1,),
    "[": (1,),
    "pylint": tuple(range(1, 32)),
    "flake8": (1,),
    "ruff": (1,),
    "mypy": (1,),
    "pycodestyle": (1,),
    "pyflakes": (1,),
    "eslint": (1,),
    "shellcheck": (1,),
}

_FROZEN = {"frozen": True, "slots": True, "kw_only": True}


@dataclass(**_FROZEN)
class ThresholdSettings:
    """A warn and a term threshold: a count at or above fires that level."""

    warn: int
    term: int


@dataclass(**_FROZEN)
class CategoryStreakSettings:
    exploration: ThresholdSettings
    action: ThresholdSettings
    tool_overrides: Mapping[str, ThresholdSettings]


@dataclass(**_FROZEN)
class ToolPatternSettings(ThresholdSettings):
    max_period: int


@dataclass(**_FROZEN)
class TextLoopSettings(ThresholdSettings):
    similarity: float
    shingle_size: int


@dataclass(**_FROZEN)
class StateHashSettings(ThresholdSettings):
    window: int
    attribute: str


@dataclass(**_FROZEN)
class ErrorStreakSettings(ThresholdSettings):
    result_patterns: tuple[str, ...]
    non_failing_tools: tuple[str, ...]
    max_scan_chars: int
    exec_failure_patterns: tuple[str, ...]
    non_failing_exit_codes: Mapping[str, tuple[int, ...]]
    empty_result_lookups: tuple[str, ...]


@dataclass(**_FROZEN)
class ReplayCycleSettings:
    enabled: bool
    warn: int
    term: int
    partial_term: int
    max_gap: int


@dataclass(**_FROZEN)
class NearDuplicateEditSettings:
    enabled: bool
    warn: int
    term: int
    tools: tuple[str, ...]
    min_chars: int


@dataclass(**_FROZEN)
class RepeatedFailureSettings:
    enabled: bool
    warn: int
    term: int


@dataclass(**_FROZEN)
class _WindowCountSettings:
    enabled: bool
    window: int
    warn: int
    term: int


@dataclass(**_FROZEN)
class RecurringFailureSettings(_WindowCountSettings):
    pass


@dataclass(**_FROZEN)
class SameErrorSettings(_WindowCountSettings):
    pass


@dataclass(**_FROZEN)
class FailureDensitySettings(_WindowCountSettings):
    progress_tools: tuple[str, ...]
    progress_commands: bool


@dataclass(**_FROZEN)
class FailedLookupsSettings(ThresholdSettings):
    enabled: bool


@dataclass(**_FROZEN)
class EditWithoutEffectSettings(ThresholdSettings):
    enabled: bool
    edit_tools: tuple[str, ...]


@dataclass(**_FROZEN)
class NothingNewSettings(ThresholdSettings):
    enabled: bool


@dataclass(**_FROZEN)
class BudgetSettings:
    enabled: bool
    max_tool_calls: int | None
    max_model_turns: int | None
    max_tokens: int | None
    max_wall_seconds: float | None
    max_idle_seconds: float | None
    call_seconds: Mapping[str, float]
    warn_fraction: float


@dataclass(**_FROZEN)
class ProfileSettings:
    """One complete set of thresholds (a profile), as the sessions of that profile read it."""

    identical_call: ThresholdSettings
    category_streak: CategoryStreakSettings
    tool_pattern: ToolPatternSettings
    poll_no_progress: ThresholdSettings
    error_streak: ErrorStreakSettings
    text_loop: TextLoopSettings
    state_hash: StateHashSettings
    budget: BudgetSettings
    replay_cycle: ReplayCycleSettings
    near_duplicate_edit: NearDuplicateEditSettings
    repeated_failure: RepeatedFailureSettings
    recurring_failure: RecurringFailureSettings
    failure_density: FailureDensitySettings
    same_error: SameErrorSettings
    failed_lookups: FailedLookupsSettings
    edit_without_effect: EditWithoutEffectSettings
    nothing_new: NothingNewSettings


@dataclass(**_FROZEN)
class DetectorSettings:
    """What the detector reads of a configuration: the profiles, which session gets which,
    and the normalisation and categorisation knobs shared by all of them."""

    profile: str
    subagent_profile: str
    profiles: Mapping[str, ProfileSettings]
    agents: Mapping[str, str]
    disabled_dimensions: tuple[str, ...]
    extra_categories: Mapping[str, str]
    read_only_tools: tuple[str, ...]
    progress_aware_tools: tuple[str, ...]
    poll_tools: tuple[str, ...]
    mask_patterns: tuple[str, ...]
    mask_defaults: bool
    result_fields: Mapping[str, tuple[str, ...]]
    evidence_size: int

    def profile_for(
        self, agent: str | None = None, *, subagent: bool = False
    ) -> tuple[str, ProfileSettings]:
        """The profile name and thresholds for one session: agent override > subagent > default."""
        name = profile_name_for(self, agent, subagent=subagent)
        return name, self.profiles[name]


class _ProfileChoice(Protocol):
    profile: str
    subagent_profile: str
    agents: Mapping[str, str]


def profile_name_for(choice: _ProfileChoice, agent: str | None, *, subagent: bool) -> str:
    """Which profile a session gets (the one rule, for the settings and the configuration):
    the agent's own (``agents``), else the subagent profile for a child agent, else the
    default."""
    if agent is not None and agent in choice.agents:
        return choice.agents[agent]
    return choice.subagent_profile if subagent else choice.profile


class SupportsDetectorSettings(Protocol):
    """Anything that compiles to :class:`DetectorSettings` (``CycleGuardConfig`` does)."""

    def detector_settings(self) -> DetectorSettings: ...
