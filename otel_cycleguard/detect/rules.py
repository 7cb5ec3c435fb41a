"""Rules for loops that real agents fall into, on top of the eight dimensions.

Each rule reports under one of the dimensions (docs/detection.md) (so the ladder, metrics and reports stay as
they are) with its own thresholds (``ProfileSettings.replay_cycle``, ``near_duplicate_edit``,
``repeated_failure``, ...) and says in the signal's explanation which rule fired and why:

- ``replay_cycle`` (identical_call: the same call with the same result, every few calls): a call, same tool, arguments and masked result, that recurs
  at a constant distance of 2..``max_gap`` calls. Every recurrence is a lap of a cycle of that
  length, whatever the other calls of the lap do: a cycle of seven searches replayed with the
  same answers, or an [edit, run] cycle whose edits change every lap while the run's output
  never does. A recurrence at another distance starts over, so re-running tests now and then,
  or re-reading a file, is not a lap. A lap replayed whole TERMs at ``term`` laps; a lap of
  which only some calls replay (the others change) needs ``partial_term`` laps.
- ``near_duplicate_edit`` (identical_call): consecutive calls of an edit-like tool whose
  arguments are equal once every digit is dropped (only the line range moved): the same edit
  re-applied while the file grows, or two edits applied in turn (delete a line, re-insert the
  block, one line higher each lap), counted in laps. Results are not compared (they differ
  each time).
- ``repeated_failure`` (identical_call): the same call failing with the same masked result,
  consecutively, with thresholds below ``identical_call``'s: a retry that cannot work.
- ``recurring_failure`` (identical_call): the same failing call (tool, arguments, masked
  error) recurring ``term`` times within the last ``window`` calls, whatever lies between:
  edit, re-run the same failing command, edit, ... in laps of changing length (which
  ``replay_cycle`` starts over on), or one install retried between unrelated tweaks. Silent
  while the recurrences are one consecutive streak (``repeated_failure``'s).
- ``failure_density`` (error_streak): at least ``term`` of the last ``window`` calls failed,
  counted since the last successful edit-like call (``progress_tools``): the run keeps failing
  and the calls that "work" in between (``ls``, ``echo``, a package-index update) are trivial,
  so the consecutive error streak keeps starting over and never reaches its TERM.
- ``same_error`` (error_streak): one failing output (masked) coming back ``term`` times within
  the last ``window`` calls since the last progress, from calls that change: the same
  ``command not found`` whatever prose the agent pastes, the same empty ``find`` in one
  directory after another. Silent while the failures are one streak of the identical call.

Progress, for ``failure_density`` and ``same_error``: a successful call of a
``progress_tools`` tool, or a successful exec call that edits files
(:func:`~otel_cycleguard.detect.categories.edits_files`: how shell-only agents edit).

:func:`refine_failure` decides failures from results for exec-like and search-like tools:
exit codes a command uses for findings (``grep`` 1, ``pylint`` 16) are not failures; known
failure lines (``command not found``, ``E:`` from a package manager, an execution timeout, no
search matches) are; and a look-up that finds nothing is a failed search: an exec call whose
command is a look-up (``find``, ``grep``, ``which``... ``empty_result_lookups``) with an
empty output, or a search tool with an empty result. State is hashes and small integers;
nothing raw is kept.
"""

from __future__ import annotations

import re
from array import array
from typing import Any, NamedTuple

from otel_cycleguard.detect.categories import (
    ACTION,
    EXPLORATION,
    ToolKind,
    argument_map,
    changes_environment,
    command_text,
    command_words,
    edits_files,
)
from otel_cycleguard.detect.dimensions import CallRing, Layout, _lowered, check_lane, clear_lane
from otel_cycleguard.detect.normalize import hash_bytes
from otel_cycleguard.detect.settings import (
    DEFAULT_EXEC_FAILURE_PATTERNS,
    ErrorStreakSettings,
    ProfileSettings,
)
from otel_cycleguard.detect.signals import Dimension, Level

__all__ = [
    "REFINED_KINDS",
    "RealWorldRules",
    "RuleHit",
    "command_exit",
    "failure_fold",
    "recurrences",
    "refine_failure",
]

_DIGITS = b"0123456789"
_EXIT = re.compile(
    r"<returncode>\s*(-?\d+)\s*</returncode>|\bexit(?:ed with)? (?:code|status)[ :=]+(-?\d+)"
    r'|"exit_code"\s*:\s*(-?\d+)',
    re.I,
)
_SEGMENTS = re.compile(r"\|\|?|&&|;|\n")
_LIST_ITEMS = re.compile(r"\|\||&&|;|\n")
_STDERR_REDIRECT = re.compile(r"\d?>&\d|2>>?\s*\S+")
_WRAPPED_OUTPUT = re.compile(
    r"^\s*<returncode>-?\d+</returncode>\s*(?:<output>(.*?)</output>)?\s*$", re.S
)
_WHEREIS_EMPTY = re.compile(r"^(?:[^\s:]+:\s*)*$")
# Pipeline stages after a look-up that pass its (empty) output on: still a failed look-up.
_FILTERS = frozenset(
    {
        "head",
        "tail",
        "sort",
        "uniq",
        "cut",
        "tr",
        "awk",
        "sed",
        "xargs",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "less",
        "more",
        "cat",
        "column",
        "nl",
    }
)
_GREPS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack"})
_GREP_QUIET = frozenset({"-q", "--quiet", "--silent", "-qs", "-sq"})
_FIND_ACTIONS = frozenset(
    {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fls", "-fprintf", "-fprint0"}
)
_EMPTY_SEARCH_RESULTS = frozenset({""})
_EXEC_CANONICAL = frozenset({"exec"})
_SEARCH_CANONICAL = frozenset(
    {"search_dir", "search_file", "find_file", "grep", "search", "search_files", "find", "glob"}
)

# A literal each default failure pattern needs (substring tests are C-speed; the multi-line
# regex costs ~1 µs per pattern per 200 characters). Kept beside the patterns' test.
_DEFAULT_FAILURE_LITERALS = (
    "command not found",
    "No such file or directory",
    "syntax error",
    "Traceback (most recent call last):",
    "E: ",
    "EXECUTION TIMED OUT",
    ": unrecognized service",
    "No matches found for ",
    "dpkg-query: no packages found matching ",
    "WARNING: Package(s) not found: ",
)

#: Tool kinds whose failures :func:`refine_failure` reads from the result.
REFINED_KINDS = _EXEC_CANONICAL | _SEARCH_CANONICAL

RuleHit = tuple[Dimension, Level, int, int, tuple[str, ...], str, str]


def command_exit(arguments: Any, result_text: str | None) -> tuple[str | None, int | None]:
    """(the command whose exit code the shell reports, that exit code) or Nones.

    The command is the first word of the last segment of the command line (after ``|``,
    ``&&``, ``;``), as :func:`command_words` reads it (``sudo``, ``env``, ``time``, ``nohup``,
    ``!`` and ``VAR=value`` prefixes skipped, its directory dropped); the exit code is read from
    the result (``<returncode>N</returncode>``, ``exit code N``, ``"exit_code": N``).
    """
    if not result_text:
        return None, None
    head = result_text[:512]
    if head.isascii():
        # Every alternative needs "<returncode>" or "exit" (any case): two C-speed substring
        # tests on the lowered head spare the case-insensitive regex (~5 us per 200 chars) on
        # the usual output. ASCII only: under re.I, "ı" (U+0131) also matches "i".
        lowered = head.lower()
        if "exit" not in lowered and "<returncode>" not in lowered:
            return None, None
    match = _EXIT.search(head)
    if match is None:
        return None, None
    code = int(next(g for g in match.groups() if g is not None))
    line = command_text(arguments)
    if not line:
        return None, code
    segments = [s for s in _SEGMENTS.split(line) if s.strip()]
    if not segments:
        return None, code
    words = command_words(segments[-1])
    return (words[0], code) if words else (None, code)


def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    return _PATTERN_CACHE.get(patterns) or _compile(patterns)


_PATTERN_CACHE: dict[tuple[str, ...], re.Pattern[str] | None] = {}


def _compile(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    # Multi-line: ``^`` and ``$`` anchor at every line of the result.
    value = re.compile("|".join(f"(?:{p})" for p in patterns), re.M) if patterns else None
    if len(_PATTERN_CACHE) > 64:
        _PATTERN_CACHE.clear()
    _PATTERN_CACHE[patterns] = value
    return value


def _is_lookup(words: list[str], lookups: frozenset[str]) -> bool:
    name = words[0]
    if len(words) > 1 and f"{name} {words[1]}" in lookups:
        return True
    if name not in lookups:
        return False
    if name in _GREPS:
        return not any(w in _GREP_QUIET for w in words[1:])
    if name == "find":
        return not any(w in _FIND_ACTIONS for w in words[1:])
    if name == "printenv":
        return len(words) > 1  # bare printenv prints the environment
    return True


def empty_lookup(arguments: Any, result_text: str, lookups: tuple[str, ...]) -> bool:
    """True when an exec call ran a look-up command (``lookups``) and its output is empty:
    "a search that finds nothing is a failed search" (see ``ErrorStreakSettings``)."""
    body = result_text
    if body.startswith("<returncode>") or body.lstrip().startswith("<returncode>"):
        wrapped = _WRAPPED_OUTPUT.match(body)
        if wrapped is None:
            return False
        body = wrapped.group(1) or ""
    body = body.strip()
    line = command_text(arguments)
    if not line:
        return False
    if body and "whereis" not in line:
        # An output is a failed look-up only from whereis ("name:" when it finds nothing,
        # see the end): without it in the line, skip the parsing below (most calls).
        return False
    items = [i for i in _LIST_ITEMS.split(line) if i.strip()]
    if not items:
        return False
    item = _STDERR_REDIRECT.sub(" ", items[-1])
    if ">" in item:
        return False  # output redirected away: empty by construction
    stages = [command_words(s) for s in item.split("|")]
    wanted = frozenset(lookups)
    for words in reversed(stages):
        if not words:
            return False
        if words[0] == "xargs":
            rest = [w for w in words[1:] if not w.startswith("-")]
            if rest and _is_lookup(command_words(" ".join(rest)), wanted):
                break
        if _is_lookup(words, wanted):
            break
        if words[0] not in _FILTERS:
            return False
    else:
        return False
    if not body:
        return True
    # whereis prints "name:" and nothing else when it finds nothing
    return words[0] == "whereis" and _WHEREIS_EMPTY.match(body) is not None


def is_exec_or_search(canonical: str) -> tuple[bool, bool]:
    return canonical in _EXEC_CANONICAL, canonical in _SEARCH_CANONICAL


def refine_failure(
    tool: str,
    canonical: str,
    arguments: Any,
    result_text: str | None,
    failed: bool,
    config: ErrorStreakSettings,
) -> bool:
    """The failure flag after the result has been read (see the module docstring)."""
    is_exec, is_search = is_exec_or_search(canonical)
    if not (is_exec or is_search) or tool.lower() in _lowered(config.non_failing_tools):
        return failed
    if is_exec and config.non_failing_exit_codes and (failed or config.empty_result_lookups):
        # an exit code the command uses for a finding (grep 1: no match, diff 1) is no failure,
        # even with an empty output: the harness said how the look-up ended
        command, code = command_exit(arguments, result_text)
        if command is not None and code is not None:
            allowed = config.non_failing_exit_codes.get(command)
            if allowed and code in allowed:
                return False
    if not failed and config.empty_result_lookups and result_text is not None:
        if is_search and result_text.strip() in _EMPTY_SEARCH_RESULTS:
            return True
        if (
            is_exec
            and len(result_text) < 256
            and empty_lookup(arguments, result_text, config.empty_result_lookups)
        ):
            return True
    if not failed and result_text and config.exec_failure_patterns:
        head = result_text[: config.max_scan_chars]
        if config.exec_failure_patterns == DEFAULT_EXEC_FAILURE_PATTERNS and not any(
            literal in head for literal in _DEFAULT_FAILURE_LITERALS
        ):
            return failed  # none of the defaults' required words: skip the (slow) regex
        pattern = _compiled(config.exec_failure_patterns)
        if pattern is not None and pattern.search(head):
            return True
    return failed


# Replay bits of a call-ring info word (bit 0 is the ring's FAILED flag). Per call: whether it
# can still be replayed (LIVE: not a poll, not yet replayed, not before a reset), the distance
# it replayed at (0: none; for a poll call, the value the full-lap test reads, see _replay),
# and the laps of its cycle.
_LIVE = 2
_GAP_SHIFT = 2
_GAP_MASK = 0x3F  # gaps are at most 32 (ReplayCycleConfig.max_gap)
_LAPS_SHIFT = 8
# Info words without a gap (failed or not, live or not, 0 or 1 lap): no cycle runs through them.
_NO_GAP_INFOS = frozenset(
    failed | live | (laps << _LAPS_SHIFT)
    for failed in (0, CallRing.FAILED)
    for live in (0, _LIVE)
    for laps in (0, 1)
)

# What the last lap of a replayed cycle was: every call came back at the cycle's distance;
# the calls that did not all failed (a lap of failed attempts brings nothing new, so it counts
# as replayed: ``term``); some changed call worked (``partial_term``).
_REPLAYED_LAP, _FAILED_LAP, _PARTIAL_LAP = 0, 1, 2
_LAP_WORDS = {
    _REPLAYED_LAP: "the whole lap was replayed with the same results",
    _FAILED_LAP: "the other calls of the lap changed and every one of them failed",
    _PARTIAL_LAP: "the other calls of the lap changed, this one's result never did",
}

_RULES = "rules"
_STALENESS = "staleness"
_LOOKUPS = "failed_lookups"
_NO_EFFECT = "edit_without_effect"
_FOLDS = 8
_MASK64 = (1 << 64) - 1
_PATH_KEYS = ("path", "file", "file_path", "filename", "file_name", "target_file")


def _hit(
    rule: str,
    dimension: Dimension,
    level: Level,
    count: int,
    warn: int,
    term: int,
    unit: tuple[str, ...],
    explanation: str,
) -> RuleHit:
    """A rule's crossing, with the threshold of the level it reached."""
    threshold = term if level is Level.TERM else warn
    return dimension, level, count, threshold, unit, explanation, rule


class RuleLanes(NamedTuple):
    """The gates of the rules (two bits of a session's word 0 each), by rule."""

    replay: int
    edit: int
    fail: int
    recur: int
    density: int
    same: int
    lookup: int
    effect: int


class RealWorldRules:
    """The rules' logic for every session of one profile; a session's state is words of its
    state array (and tables of recent failures, created on the first failure).

    Not thread-safe (each session is serialised)."""

    __slots__ = (
        "check_key",
        "check_laps",
        "check_result",
        "density_bits",
        "density_calls",
        "density_run",
        "edit_count",
        "edit_key",
        "edit_key2",
        "edit_long",
        "edit_run2",
        "edit_target",
        "edits_since",
        "failed_action",
        "fold_next",
        "folds",
        "lanes",
        "lap_target",
        "layout",
        "lookup_run",
        "ring",
        "stale_bits",
    )

    def __init__(self, layout: Layout, ring: CallRing) -> None:
        self.layout = layout
        self.ring = ring
        self.edit_key = layout.words(_RULES, "edit_key")  # the last call's, if an edit
        self.edit_count = layout.words(_RULES, "edit_count")
        self.edit_key2 = layout.words(_RULES, "edit_key2")  # the edit before it
        self.edit_long = layout.words(_RULES, "edit_long")  # bit 0: the last edit was long...
        self.edit_run2 = layout.words(_RULES, "edit_run2")  # edits equal to the one 2 back
        self.density_bits = layout.words(_RULES, "density_bits")  # bit j: the call j ago failed
        self.density_calls = layout.words(_RULES, "density_calls")  # since the last progress
        self.density_run = layout.words(_RULES, "density_run")  # consecutive failures at the end
        # same_error: what the last failure recorded did (``_action_hash``)
        self.failed_action = layout.words(_RULES, "failed_action")
        # gates of replay_cycle, near_duplicate_edit, repeated_failure, recurring_failure,
        # failure_density, same_error
        lanes = [layout.lane(_RULES) for _ in range(6)]
        # Groups of their own (a state saved before they existed loads; they start fresh).
        # Staleness: bit j of stale_bits, the failure j observations ago repeated the output
        # (masked, digits dropped) of one of the last _FOLDS distinct failures kept in folds.
        self.stale_bits = layout.words(_STALENESS, "stale_bits")
        self.folds = layout.words(_STALENESS, "folds", _FOLDS)
        self.fold_next = layout.words(_STALENESS, "fold_next")
        self.lookup_run = layout.words(_LOOKUPS, "run")
        lanes.append(layout.lane(_LOOKUPS))
        # edit_without_effect: the check command followed, its last output, the rounds in a
        # row it gave that output, edits since it last ran, and the file they touched.
        self.check_key = layout.words(_NO_EFFECT, "check_key")
        self.check_result = layout.words(_NO_EFFECT, "check_result")
        self.check_laps = layout.words(_NO_EFFECT, "rounds")
        self.edits_since = layout.words(_NO_EFFECT, "edits_since")
        self.edit_target = layout.words(_NO_EFFECT, "edit_target")
        self.lap_target = layout.words(_NO_EFFECT, "lap_target")
        lanes.append(layout.lane(_NO_EFFECT))
        self.lanes = RuleLanes(*lanes)

    # -- staleness: whether failures bring new information ---------------------------------

    def note_failure_output(self, words: array, failed: bool, fold: int) -> bool:
        """Shift the staleness bits by one observation; True when it is a failure whose
        ``fold`` (its output masked, digits dropped: :func:`failure_fold`) is one of the last
        distinct failures' (no new information: the same wall again)."""
        bits = (words[self.stale_bits] << 1) & _MASK64
        stale = False
        if failed:
            base = self.folds
            stale = fold in words[base : base + _FOLDS]
            if not stale:
                slot = words[self.fold_next]
                words[base + slot] = fold
                words[self.fold_next] = (slot + 1) % _FOLDS
            bits |= stale
        words[self.stale_bits] = bits
        return stale

    def stale_failures(self, words: array, observations: int) -> int:
        """Stale failures among the last ``observations`` (at most 64)."""
        n = min(max(observations, 0), 64)
        return (words[self.stale_bits] & ((1 << n) - 1)).bit_count()

    def no_new_information(self, words: array, failures: int, observations: int) -> bool:
        """Evidence of no progress for a failure rule: at least half of the ``failures``
        counted over the last ``observations`` repeated an earlier failure's output. A run
        whose failures keep telling it something new is exploring, not looping."""
        return 2 * self.stale_failures(words, observations) >= failures

    def observe(
        self,
        words: array,
        recur: array | None,
        same: array | None,
        profile: ProfileSettings,
        step: int,
        tool: str,
        kind: ToolKind,
        key: int,
        result: int,
        arguments: Any,
        canonical_args: bytes,
        failed: bool,
        identical_count: int,
        recent_tools,
    ) -> tuple[list[RuleHit], array | None, array | None]:
        """Feed one call (already in the call ring); returns the rule crossings (dimension,
        level, count, threshold, unit, explanation, rule) and the tables of recent failures
        (``recur``: recurring_failure's, ``same``: same_error's; see :func:`recurrences`).
        ``canonical_args``: the arguments' canonical JSON (:meth:`Normalizer.call_key`)."""
        hits: list[RuleHit] = []
        (
            replay_lane,
            edit_lane,
            fail_lane,
            recur_lane,
            density_lane,
            same_lane,
            lookup_lane,
            effect_lane,
        ) = self.lanes
        canonical, is_poll = kind.canonical, kind.is_poll
        cfg = profile.replay_cycle
        if cfg.enabled:
            if is_poll:
                self._skip_replay(words, step, cfg.max_gap)
                count, gap, lap = 0, 0, _PARTIAL_LAP
            else:
                count, gap, lap = self._replay(words, step, key, result, cfg.max_gap)
            term = cfg.partial_term if lap == _PARTIAL_LAP else cfg.term
            level = check_lane(words, replay_lane, count, min(cfg.warn, term), term)
            if level is not None:
                unit = tuple(recent_tools(gap)) if gap else (tool,)
                what = _LAP_WORDS[lap]
                hits.append(
                    _hit(
                        "replay_cycle",
                        Dimension.TOOL_PATTERN,
                        level,
                        count,
                        cfg.warn,
                        term,
                        unit,
                        f"replay_cycle: a call came back with the same arguments and the same "
                        f"result every {gap} calls, {count} laps of {' -> '.join(unit)} ({what})",
                    )
                )
        cfg_e = profile.near_duplicate_edit
        if cfg_e.enabled:
            count, period = self._edit(words, tool, canonical, canonical_args, cfg_e)
            level = check_lane(words, edit_lane, count, cfg_e.warn, cfg_e.term)
            if level is not None:
                what = (
                    f"re-applied the same change {count} times in a row"
                    if period == 1
                    else f"re-applied the same two changes in turn, {count} laps"
                )
                hits.append(
                    _hit(
                        "near_duplicate_edit",
                        Dimension.IDENTICAL_CALL,
                        level,
                        count,
                        cfg_e.warn,
                        cfg_e.term,
                        (tool,) * period,
                        f"near_duplicate_edit: {tool} {what} (arguments equal except for "
                        "numbers such as the line range)",
                    )
                )
        cfg_f = profile.repeated_failure
        if cfg_f.enabled:
            count = identical_count if failed and not is_poll else 0
            level = check_lane(words, fail_lane, count, cfg_f.warn, cfg_f.term)
            if level is not None:
                hits.append(
                    _hit(
                        "repeated_failure",
                        Dimension.IDENTICAL_CALL,
                        level,
                        count,
                        cfg_f.warn,
                        cfg_f.term,
                        (tool,),
                        f"repeated_failure: {tool} failed {count} times in a row with the same "
                        "arguments and the same (masked) error",
                    )
                )
        cfg_r = profile.recurring_failure
        if cfg_r.enabled:
            pair = hash_bytes(b"f%d:%d" % (key, result)) if failed and not is_poll else 0
            if pair or recur is not None:
                count, recur = recurrences(recur, step, pair, cfg_r.window)
            else:
                count = 0  # no failure to record and none to forget: spare the call
            # only on failures, and not while the recurrences are one consecutive streak
            # (repeated_failure's); the count is the most recurrences of any failing call
            if pair and count > identical_count:
                level = check_lane(words, recur_lane, count, cfg_r.warn, cfg_r.term)
                if level is not None:
                    hits.append(
                        _hit(
                            "recurring_failure",
                            Dimension.IDENTICAL_CALL,
                            level,
                            count,
                            cfg_r.warn,
                            cfg_r.term,
                            (tool,),
                            f"recurring_failure: a call failed {count} times with the same "
                            f"arguments and the same (masked) error within the last "
                            f"{cfg_r.window} calls (what was done in between changed nothing)",
                        )
                    )
        is_exec = canonical in _EXEC_CANONICAL
        cfg_n = profile.edit_without_effect
        cfg_d = profile.failure_density
        # Whether a shell command edits files, read once (a regex pass over the command line)
        # and only where an answer is needed: by edit_without_effect on every shell call, by
        # the progress test on a successful one while there are failures to forget.
        to_forget = bool(words[self.density_bits] or same)  # failures a progress would clear
        shell_edit = (
            is_exec
            and (cfg_n.enabled or (not failed and cfg_d.progress_commands and to_forget))
            and edits_files(arguments)
        )
        progress = not failed and self._progress(tool, canonical, shell_edit and to_forget, cfg_d)
        if cfg_d.enabled:
            # For the density of failures, a command that changed the environment (an install
            # or a build step that went through) is progress too: a setup agent rarely edits.
            # Not for same_error: the same wall coming back says the install did not help.
            moved = progress or (
                not failed
                and is_exec
                and words[self.density_bits] != 0
                and cfg_d.progress_commands
                and changes_environment(arguments)
            )
            count, seen = self._density(words, failed, moved, cfg_d.window)
            # Failures that are all consecutive are the error streak's to report (with its
            # own thresholds); this rule speaks only when successes came in between. TERM
            # also needs evidence of no progress: the failures repeat what failed before.
            covered = count <= words[self.density_run]
            if (
                not covered
                and count >= cfg_d.term
                and not self.no_new_information(words, count, seen)
            ):
                count = cfg_d.term - 1
            level = (
                None if covered else check_lane(words, density_lane, count, cfg_d.warn, cfg_d.term)
            )
            if level is not None:
                names = tuple(dict.fromkeys(recent_tools(seen)))[:4] if seen else (tool,)
                hits.append(
                    _hit(
                        "failure_density",
                        Dimension.ERROR_STREAK,
                        level,
                        count,
                        cfg_d.warn,
                        cfg_d.term,
                        names,
                        f"failure_density: {count} of the last {seen} calls failed, with no "
                        f"successful {'/'.join(cfg_d.progress_tools) or 'progress'} call in "
                        "between and the failures repeating earlier ones (the run keeps "
                        "failing; the calls that worked in between were no progress)",
                    )
                )
        cfg_s = profile.same_error
        if cfg_s.enabled:
            output = (result or 1) if failed and not is_poll else 0
            if progress:
                count, same = 0, None  # the failures before the progress are forgotten
            elif output or same is not None:
                if output:
                    words[self.failed_action] = _action_hash(tool, canonical, arguments)
                elif (
                    same is not None
                    and same[-2] == step - 1
                    and not failed
                    and words[self.failed_action] == _action_hash(tool, canonical, arguments)
                ):
                    # The same action failed just before and works now: that failure was a
                    # slip this retry corrected (a retry that succeeds is not a wall), as when
                    # a search names a file the tool cannot find and the next names its path.
                    same = same[:-2] or None
                count, same = recurrences(same, step, output, cfg_s.window)
            else:
                count = 0  # no failure to record and none to forget: spare the call
            # only on failures, and not while they are one streak of the identical call
            if output and count > identical_count:
                level = check_lane(words, same_lane, count, cfg_s.warn, cfg_s.term)
                if level is not None:
                    hits.append(
                        _hit(
                            "same_error",
                            Dimension.ERROR_STREAK,
                            level,
                            count,
                            cfg_s.warn,
                            cfg_s.term,
                            (tool,),
                            f"same_error: the same (masked) error came back {count} times "
                            f"within the last {cfg_s.window} calls with no successful edit in "
                            "between (one wall: what the agent changed around it did not help)",
                        )
                    )
        cfg_l = profile.failed_lookups
        if cfg_l.enabled:
            # A look-up that fails or finds nothing tells the agent nothing: no staleness
            # test, and a known read-only tool (search, read, a read-only command) only.
            lookup = failed and not is_poll and kind.known and kind.category == EXPLORATION
            run = words[self.lookup_run] + 1 if lookup else 0
            words[self.lookup_run] = run
            level = check_lane(words, lookup_lane, run, cfg_l.warn, cfg_l.term)
            if level is not None:
                hits.append(
                    _hit(
                        "failed_lookups",
                        Dimension.ERROR_STREAK,
                        level,
                        run,
                        cfg_l.warn,
                        cfg_l.term,
                        tuple(dict.fromkeys(recent_tools(run)))[:4],
                        f"failed_lookups: {run} look-ups in a row failed or found nothing "
                        "(each query changed, none got an answer)",
                    )
                )
        if cfg_n.enabled:
            edit_names = _lowered(cfg_n.edit_tools)
            is_edit = shell_edit or canonical in edit_names or tool.lower() in edit_names
            rounds = self._edit_round(
                words,
                is_edit,
                is_exec and kind.category == ACTION and not is_poll,
                key,
                result,
                arguments,
            )
            level = check_lane(words, effect_lane, rounds, cfg_n.warn, cfg_n.term)
            if level is not None:
                hits.append(
                    _hit(
                        "edit_without_effect",
                        Dimension.TOOL_PATTERN,
                        level,
                        rounds,
                        cfg_n.warn,
                        cfg_n.term,
                        (tool,),
                        f"edit_without_effect: edited, then ran the same check {rounds} times "
                        "in a row, and its (masked) output never changed (the edits changed "
                        "nothing the agent can observe)",
                    )
                )
        return hits, recur, same

    def _edit_round(
        self,
        words: array,
        is_edit: bool,
        is_check: bool,
        key: int,
        result: int,
        arguments: Any,
    ) -> int:
        """Rounds in a row of [edits, the same check] whose check output did not change
        (0 while there is no such repeat). An edit counts toward the next round (its file
        is remembered); a check (a shell command that is not an edit or a read) closes the
        round: the same command with the same output after edits of the same file is one
        more round without effect, a new output (new information) or another file starts
        over. Reads and re-runs without an edit in between leave the count as it is."""
        if is_edit:
            words[self.edits_since] = min(words[self.edits_since] + 1, 1 << 16)
            target = _edit_target(arguments)
            if target:
                words[self.edit_target] = target
            return words[self.check_laps]
        if not is_check or not words[self.edits_since]:
            return words[self.check_laps]
        words[self.edits_since] = 0
        target = words[self.edit_target]
        if key == words[self.check_key]:
            unchanged = result == words[self.check_result] and target == words[self.lap_target]
            rounds = (words[self.check_laps] or 1) + 1 if unchanged else 0
        else:
            words[self.check_key] = key
            rounds = 0
        words[self.check_result] = result
        words[self.lap_target] = target
        words[self.check_laps] = rounds
        return rounds

    @staticmethod
    def _progress(tool: str, canonical: str, shell_edit: bool, cfg) -> bool:
        """A successful call that changes the work: a ``progress_tools`` tool, or (with
        ``progress_commands``) a shell command that edits files (``shell_edit``, read by the
        caller only while there are failures to forget)."""
        names = _lowered(cfg.progress_tools)
        return canonical in names or tool.lower() in names or (cfg.progress_commands and shell_edit)

    def _density(self, words: array, failed: bool, progress: bool, window: int) -> tuple[int, int]:
        """(failures among the last ``window`` calls since the last progress, calls counted)."""
        if progress:
            words[self.density_bits] = words[self.density_calls] = words[self.density_run] = 0
            return 0, 0
        words[self.density_run] = words[self.density_run] + 1 if failed else 0
        bits = ((words[self.density_bits] << 1) | int(failed)) & ((1 << window) - 1)
        words[self.density_bits] = bits
        calls = words[self.density_calls] = min(words[self.density_calls] + 1, window)
        return bits.bit_count(), calls

    def _replay(
        self, words: array, step: int, key: int, result: int, max_gap: int
    ) -> tuple[int, int, int]:
        """(laps, the cycle's length, what the last lap was: ``_REPLAYED_LAP``,
        ``_FAILED_LAP`` or ``_PARTIAL_LAP``) after the call at ``step``, which is already in
        the call ring.

        A call replays the live call with the same key and result at most ``max_gap`` calls
        back (there is at most one: a replayed call stops being live); the count is the most
        laps of any call whose cycle is still running (seen within its gap). Ties go to the
        call whose step is smallest modulo ``max_gap + 1``: the order of the ring this replaced.
        """
        ring = self.ring
        base, slots = ring.base, ring.size  # the ring's offsets, inlined: the hottest loop
        span = min(max_gap, step)
        gap, laps = 0, 1
        # Most calls match no earlier call: one C-level count over the ring's key words (an
        # array slice with a stride; this call's own key is one of them) spares the walk back.
        if words[base : base + 3 * slots : 3].count(key) > 1:
            for back in range(1, span + 1):
                at = base + 3 * ((step - back) % slots)
                info = words[at + 2]
                if info & _LIVE and words[at] == key and words[at + 1] == result:
                    if back >= 2:
                        same_gap = back == (info >> _GAP_SHIFT) & _GAP_MASK
                        gap, laps = back, ((info >> _LAPS_SHIFT) + 1 if same_gap else 2)
                    words[at + 2] = info & ~_LIVE  # replayed: this step carries the cycle on
                    break
        at = base + 3 * (step % slots) + 2
        words[at] = (
            (words[at] & CallRing.FAILED) | _LIVE | (gap << _GAP_SHIFT) | (laps << _LAPS_SHIFT)
        )
        size = max_gap + 1
        best = unit = 0
        best_slot = size
        # Only a call with a gap can carry a running cycle. When every info word of the ring
        # is one of the gapless values (the usual case: no cycle runs), one C-level set test
        # spares the walk below.
        if set(words[base + 2 : base + 3 * slots : 3]) <= _NO_GAP_INFOS:
            return 0, 0, False
        for back in range(span + 1):
            info = words[base + 3 * ((step - back) % slots) + 2]
            if info & _LIVE:
                slot_gap = (info >> _GAP_SHIFT) & _GAP_MASK
                if slot_gap >= 2 and back <= slot_gap:  # a cycle still running
                    slot_laps, slot = info >> _LAPS_SHIFT, (step - back) % size
                    if slot_laps > best or (slot_laps == best and slot < best_slot):
                        best, unit, best_slot = slot_laps, slot_gap, slot
        # Whole lap: each of the last ``unit`` calls came back at that same distance, or
        # changed and failed. A lap whose only new calls are failed attempts tells the agent
        # nothing it can build on (three commands round and round, the changed one failing
        # against the same wall), so it counts as replayed; a changed call that works (an
        # edit, a toggle, a new successful read) keeps the lap partial.
        if not unit:
            return best, 0, _PARTIAL_LAP
        lap = _REPLAYED_LAP
        for j in range(unit):
            info = words[base + 3 * ((step - j) % slots) + 2]
            if (info >> _GAP_SHIFT) & _GAP_MASK != unit:
                if not info & CallRing.FAILED:
                    return best, unit, _PARTIAL_LAP
                lap = _FAILED_LAP
        return best, unit, lap

    def _skip_replay(self, words: array, step: int, max_gap: int) -> None:
        """A poll call takes no part in replay_cycle. The full-lap test reads, at its place,
        what it read there before: the gap of the call ``max_gap`` steps earlier (the ring of
        gaps this replaced had ``max_gap`` slots and a poll call left its slot untouched)."""
        if step < max_gap:
            return
        ring = self.ring
        earlier = (words[ring.at(step - max_gap) + 2] >> _GAP_SHIFT) & _GAP_MASK
        words[ring.at(step) + 2] |= earlier << _GAP_SHIFT

    def _edit(self, words: array, tool: str, canonical: str, raw: bytes, cfg) -> tuple[int, int]:
        """(count, period) of edit-like calls re-applied with equal digit-less arguments
        (``raw``: the call's canonical JSON), in a row: period 1, the same edit again and
        again (only edits of at least ``min_chars`` count: deleting one line after another
        is work); period 2, two edits in turn (delete a line, re-insert the block; counted in
        laps, and at least one of the two must be ``min_chars`` long). Any other call ends
        the run."""
        names = _lowered(cfg.tools)
        if canonical not in names and tool.lower() not in names:
            words[self.edit_count] = words[self.edit_run2] = 0
            words[self.edit_key] = words[self.edit_key2] = words[self.edit_long] = 0
            return 0, 1
        long = len(raw) >= cfg.min_chars
        # Deleting the ASCII digits (what rb"\d+" matches in bytes) with bytes.translate: C
        # speed, against ~9 ns per byte for the regex engine's scan.
        folded = hash_bytes(
            tool.encode("utf-8", "replace") + b"\x00" + raw.translate(None, _DIGITS)
        )
        previous, before = words[self.edit_key], words[self.edit_key2]
        count = words[self.edit_count]
        count = (count + 1 if count and folded == previous else 1) if long else 0
        run2 = words[self.edit_run2]
        run2 = run2 + 1 if before and folded == before and folded != previous else 0
        lap_is_long = long or bool(words[self.edit_long] & 1)
        words[self.edit_key2], words[self.edit_key] = previous, folded
        words[self.edit_long] = ((words[self.edit_long] << 1) | long) & 3
        words[self.edit_count], words[self.edit_run2] = count, run2
        laps = (run2 + 2) // 2 if run2 and lap_is_long else 0
        return (laps, 2) if laps > count else (count, 1)

    def reset(self, words: array, dimension: Dimension) -> None:
        """Self-heal of a dimension: its rules count from zero again (the caller drops the
        tables of recent failures: ``recur`` on an identical_call reset, ``same`` on an
        error_streak reset)."""
        lanes = self.lanes
        if dimension is Dimension.ERROR_STREAK:
            words[self.density_bits] = words[self.density_calls] = words[self.density_run] = 0
            words[self.lookup_run] = 0
            for lane in (lanes.density, lanes.same, lanes.lookup):
                clear_lane(words, lane)
        if dimension is Dimension.TOOL_PATTERN:
            ring = self.ring
            for at in range(ring.base + 2, ring.base + 3 * ring.size, 3):
                words[at] &= CallRing.FAILED  # no call before the reset can be replayed
            words[self.check_laps] = words[self.check_key] = words[self.edits_since] = 0
            clear_lane(words, lanes.replay)
            clear_lane(words, lanes.effect)
        if dimension is Dimension.IDENTICAL_CALL:
            words[self.edit_count] = words[self.edit_run2] = 0
            for lane in (lanes.edit, lanes.fail, lanes.recur):
                clear_lane(words, lane)


def failure_fold(masked_text: str) -> int:
    """What makes two failures the same for staleness: the masked output with every digit
    dropped (the same error at another line number tells the agent nothing new)."""
    return hash_bytes(masked_text.encode("utf-8", "replace").translate(None, _DIGITS)) or 1


def _edit_target(arguments: Any) -> int:
    """A hash of the file an edit names (``path``, ``file``...), 0 when it names none (a shell
    edit, an editor working on the file it has open)."""
    args = argument_map(arguments)
    if args is None:
        return 0
    for name in _PATH_KEYS:
        value = args.get(name)
        if isinstance(value, str) and value:
            return hash_bytes(value.encode("utf-8", "replace")) or 1
    return 0


def _action_hash(tool: str, canonical: str, arguments: Any) -> int:
    """What kind of action a call is: its tool, and for a shell the command it runs and its first
    argument (``apt-get install``, not ``apt-get``)."""
    name = tool
    if canonical in _EXEC_CANONICAL:
        text = command_text(arguments)
        words = command_words(text) if text else []
        name = "\x00".join([tool, *words[:2]])
    return hash_bytes(name.encode("utf-8", "replace")) or 1


def recurrences(
    table: array | None, step: int, value: int, window: int
) -> tuple[int, array | None]:
    """Record this step's failing value (0: none; a call's hash or its output's) in ``table``,
    the flat ``[step, value, ...]`` list of the failures among the last ``window`` steps (None:
    there are none). Returns the most occurrences of any value in the window (0 when this call
    did not fail: unused) and the updated table: a few failures in a window of 20, not a
    20-slot ring per session."""
    if table is not None:
        first = 0
        while first < len(table) and table[first] <= step - window:
            first += 2
        if first:
            table = table[first:] or None
    if not value:
        return 0, table
    entry = array("Q", (step, value))
    table = entry if table is None else table + entry
    values = table[1::2]
    return max(values.count(v) for v in set(values)), table
