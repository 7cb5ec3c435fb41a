"""Rules for loops that real agents fall into, on top of the SPEC §2 dimensions.

Each rule reports under one of the SPEC dimensions (so the ladder, metrics and reports stay as
they are) with its own thresholds (``ProfileConfig.replay_cycle``, ``near_duplicate_edit``,
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
  re-applied while the file grows. Results are not compared (they differ each time).
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
from typing import Any

from otel_cycleguard.config import (
    DEFAULT_EXEC_FAILURE_PATTERNS,
    ErrorStreakConfig,
    ProfileConfig,
)
from otel_cycleguard.detect.categories import command_text, edits_files
from otel_cycleguard.detect.dimensions import _lowered, crossing
from otel_cycleguard.detect.normalize import canonical_json, hash_bytes
from otel_cycleguard.detect.signals import Dimension, Level

__all__ = ["REFINED_KINDS", "RealWorldRules", "RuleHit", "command_exit", "refine_failure"]

_DIGITS = re.compile(rb"\d+")
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
_ASSIGN = re.compile(r"^\w+=")
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

RuleHit = tuple[Dimension, Level, int, int, tuple[str, ...], str]


def command_exit(arguments: Any, result_text: str | None) -> tuple[str | None, int | None]:
    """(the command whose exit code the shell reports, that exit code) or Nones.

    The command is the first word of the last segment of the command line (after ``|``,
    ``&&``, ``;``), skipping ``sudo`` and ``VAR=value`` prefixes; the exit code is read from
    the result (``<returncode>N</returncode>``, ``exit code N``, ``"exit_code": N``).
    """
    if not result_text:
        return None, None
    match = _EXIT.search(result_text[:512])
    if match is None:
        return None, None
    code = int(next(g for g in match.groups() if g is not None))
    line = command_text(arguments)
    if not line:
        return None, code
    segments = [s for s in _SEGMENTS.split(line) if s.strip()]
    if not segments:
        return None, code
    words = segments[-1].split()
    while words and (words[0] in ("sudo", "env", "time", "!") or _ASSIGN.match(words[0])):
        words = words[1:]
    if not words:
        return None, code
    return words[0].rsplit("/", 1)[-1], code


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


def _stage_words(stage: str) -> list[str]:
    words = stage.split()
    while words and (words[0] in ("sudo", "env", "time", "!", "nohup") or _ASSIGN.match(words[0])):
        words = words[1:]
    if words:
        words[0] = words[0].rsplit("/", 1)[-1]
    return words


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
    "a search that finds nothing is a failed search" (see ``ErrorStreakConfig``)."""
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
    items = [i for i in _LIST_ITEMS.split(line) if i.strip()]
    if not items:
        return False
    item = _STDERR_REDIRECT.sub(" ", items[-1])
    if ">" in item:
        return False  # output redirected away: empty by construction
    stages = [_stage_words(s) for s in item.split("|")]
    wanted = frozenset(lookups)
    for words in reversed(stages):
        if not words:
            return False
        if words[0] == "xargs":
            rest = [w for w in words[1:] if not w.startswith("-")]
            if rest and _is_lookup(_stage_words(" ".join(rest)), wanted):
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
    config: ErrorStreakConfig,
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


_REPLAY, _EDIT, _FAIL, _RECUR, _DENSITY, _SAME = _GATES = range(6)


def _check(gates: array, index: int, count: int, warn: int, term: int) -> Level | None:
    """:func:`crossing` on one slot of a gate-state array."""
    gates[index], level = crossing(gates[index], count, warn, term)
    return level


class RealWorldRules:
    """One session's state for the rules. Not thread-safe (the session is serialised)."""

    __slots__ = (
        "density_bits",
        "density_calls",
        "density_run",
        "edit_count",
        "edit_key",
        "edit_step",
        "gates",
        "recur_counts",
        "recur_ring",
        "replay",
        "replay_count",
        "replay_full",
        "replay_gaps",
        "replay_meta",
        "replay_unit",
        "same_counts",
        "same_ring",
    )

    def __init__(self) -> None:
        # The five rules' gate states in one small array (memory per idle session), indexed by
        # _REPLAY, _EDIT, _FAIL, _RECUR, _DENSITY; same once-per-crossing logic as Gate.
        self.gates = array("b", bytes(len(_GATES)))
        self.replay: array | None = None  # ring of (key, result) pair hashes
        self.replay_meta: array | None = None  # per ring slot: last step, gap, laps
        self.replay_count = 0
        self.replay_unit = 0
        self.replay_full = False
        self.replay_gaps: array | None = None  # per recent step: the gap it replayed at
        self.edit_key = 0
        self.edit_step = -2
        self.edit_count = 0
        self.recur_ring: array | None = None  # per recent step: its failing pair hash, or 0
        self.recur_counts: dict[int, int] = {}  # failing pair -> occurrences in the ring
        self.density_bits = 0  # bit j set: the call j calls ago failed
        self.density_calls = 0  # calls counted since the last progress (or reset)
        self.density_run = 0  # consecutive failures at the end
        self.same_ring: array | None = None  # per recent step: its failing output hash, or 0
        self.same_counts: dict[int, int] = {}  # failing output -> occurrences in the ring

    def observe(
        self,
        profile: ProfileConfig,
        step: int,
        tool: str,
        canonical: str,
        is_poll: bool,
        key: int,
        result: int,
        arguments: Any,
        failed: bool,
        identical_count: int,
        recent_tools,
    ) -> list[RuleHit]:
        """Feed one call; returns the rule crossings (dimension, level, count, threshold,
        unit, explanation)."""
        hits: list[RuleHit] = []
        cfg = profile.replay_cycle
        if cfg.enabled:
            pair = hash_bytes(b"%d:%d" % (key, result))
            count = 0 if is_poll else self._replay(step, pair, cfg.max_gap)
            full = self.replay_full
            term = cfg.term if full else cfg.partial_term
            level = _check(self.gates, _REPLAY, count, min(cfg.warn, term), term)
            if level is not None:
                gap = self.replay_unit
                unit = tuple(recent_tools(gap)) if gap else (tool,)
                what = (
                    "the whole lap was replayed with the same results"
                    if full
                    else "the other calls of the lap changed, this one's result never did"
                )
                hits.append(
                    (
                        Dimension.IDENTICAL_CALL,
                        level,
                        count,
                        term if level is Level.TERM else cfg.warn,
                        unit,
                        f"replay_cycle: a call came back with the same arguments and the same "
                        f"result every {gap} calls, {count} laps of {' -> '.join(unit)} ({what})",
                    )
                )
        cfg_e = profile.near_duplicate_edit
        if cfg_e.enabled:
            count = self._edit(step, tool, canonical, arguments, cfg_e)
            level = _check(self.gates, _EDIT, count, cfg_e.warn, cfg_e.term)
            if level is not None:
                hits.append(
                    (
                        Dimension.IDENTICAL_CALL,
                        level,
                        count,
                        cfg_e.term if level is Level.TERM else cfg_e.warn,
                        (tool,),
                        f"near_duplicate_edit: {tool} re-applied the same change {count} times "
                        "in a row (arguments equal except for numbers such as the line range)",
                    )
                )
        cfg_f = profile.repeated_failure
        if cfg_f.enabled:
            count = identical_count if failed and not is_poll else 0
            level = _check(self.gates, _FAIL, count, cfg_f.warn, cfg_f.term)
            if level is not None:
                hits.append(
                    (
                        Dimension.IDENTICAL_CALL,
                        level,
                        count,
                        cfg_f.term if level is Level.TERM else cfg_f.warn,
                        (tool,),
                        f"repeated_failure: {tool} failed {count} times in a row with the same "
                        "arguments and the same (masked) error",
                    )
                )
        cfg_r = profile.recurring_failure
        if cfg_r.enabled:
            pair = hash_bytes(b"f%d:%d" % (key, result)) if failed and not is_poll else 0
            count = self._recur(step, pair, cfg_r.window)
            # only on failures, and not while the recurrences are one consecutive streak
            # (repeated_failure's); the count is the most recurrences of any failing call
            if pair and count > identical_count:
                level = _check(self.gates, _RECUR, count, cfg_r.warn, cfg_r.term)
                if level is not None:
                    hits.append(
                        (
                            Dimension.IDENTICAL_CALL,
                            level,
                            count,
                            cfg_r.term if level is Level.TERM else cfg_r.warn,
                            (tool,),
                            f"recurring_failure: a call failed {count} times with the same "
                            f"arguments and the same (masked) error within the last "
                            f"{cfg_r.window} calls (what was done in between changed nothing)",
                        )
                    )
        cfg_d = profile.failure_density
        progress = not failed and self._progress(tool, canonical, arguments, cfg_d)
        if cfg_d.enabled:
            count, seen = self._density(failed, progress, cfg_d.window)
            # Failures that are all consecutive are the SPEC error streak's to report (with
            # its own thresholds); this rule speaks only when successes came in between.
            covered = count <= self.density_run
            level = None if covered else _check(self.gates, _DENSITY, count, cfg_d.warn, cfg_d.term)
            if level is not None:
                names = tuple(dict.fromkeys(recent_tools(seen)))[:4] if seen else (tool,)
                hits.append(
                    (
                        Dimension.ERROR_STREAK,
                        level,
                        count,
                        cfg_d.term if level is Level.TERM else cfg_d.warn,
                        names,
                        f"failure_density: {count} of the last {seen} calls failed, with no "
                        f"successful {'/'.join(cfg_d.progress_tools) or 'progress'} call in "
                        "between (the run keeps failing; the calls that worked in between "
                        "were no progress)",
                    )
                )
        cfg_s = profile.same_error
        if cfg_s.enabled:
            output = (result or 1) if failed and not is_poll else 0
            count = self._same(step, output, progress, cfg_s.window)
            # only on failures, and not while they are one streak of the identical call
            if output and count > identical_count:
                level = _check(self.gates, _SAME, count, cfg_s.warn, cfg_s.term)
                if level is not None:
                    hits.append(
                        (
                            Dimension.ERROR_STREAK,
                            level,
                            count,
                            cfg_s.term if level is Level.TERM else cfg_s.warn,
                            (tool,),
                            f"same_error: the same (masked) error came back {count} times "
                            f"within the last {cfg_s.window} calls with no successful edit in "
                            "between (one wall: what the agent changed around it did not help)",
                        )
                    )
        return hits

    def _progress(self, tool: str, canonical: str, arguments: Any, cfg) -> bool:
        """A successful call that changes the work: a ``progress_tools`` tool, or (with
        ``progress_commands``) an exec call that edits files. The command line is read only
        while there are failures to forget."""
        names = _lowered(cfg.progress_tools)
        if canonical in names or tool.lower() in names:
            return True
        return bool(
            (self.density_bits or self.same_counts)
            and cfg.progress_commands
            and canonical in _EXEC_CANONICAL
            and edits_files(arguments)
        )

    def _density(self, failed: bool, progress: bool, window: int) -> tuple[int, int]:
        """(failures among the last ``window`` calls since the last progress, calls counted)."""
        if progress:
            self.density_bits = self.density_calls = self.density_run = 0
            return 0, 0
        self.density_run = self.density_run + 1 if failed else 0
        self.density_bits = ((self.density_bits << 1) | int(failed)) & ((1 << window) - 1)
        self.density_calls = min(self.density_calls + 1, window)
        return self.density_bits.bit_count(), self.density_calls

    def _recur(self, step: int, pair: int, window: int) -> int:
        """Record this step's failing pair (0: none); the most occurrences of any failing pair
        among the last ``window`` steps."""
        ring, counts = self.recur_ring, self.recur_counts
        if ring is None or len(ring) != window:
            ring = self.recur_ring = array("Q", bytes(8 * window))
            counts.clear()
        slot = step % window
        old = ring[slot]
        if old:
            left = counts[old] - 1
            if left:
                counts[old] = left
            else:
                del counts[old]
        ring[slot] = pair
        if pair:
            counts[pair] = counts.get(pair, 0) + 1
        return max(counts.values()) if counts else 0

    def _same(self, step: int, output: int, progress: bool, window: int) -> int:
        """Record this step's failing output hash (0: none); the most occurrences of one
        failing output among the last ``window`` steps since the last progress."""
        counts = self.same_counts
        if progress:
            self.same_ring = None
            counts.clear()
            return 0
        ring = self.same_ring
        if ring is None or len(ring) != window:
            if not output:
                return 0  # nothing failed since the last progress: no ring to keep
            ring = self.same_ring = array("Q", bytes(8 * window))
            counts.clear()
        slot = step % window
        old = ring[slot]
        if old:
            left = counts[old] - 1
            if left:
                counts[old] = left
            else:
                del counts[old]
        ring[slot] = output
        if output:
            counts[output] = counts.get(output, 0) + 1
        return max(counts.values()) if counts else 0

    def _replay(self, step: int, pair: int, max_gap: int) -> int:
        # A ring of max_gap + 1 slots: slot ``s % size`` belongs to the call seen at step s, so
        # the entry it overwrites is always older than max_gap (stale). ``replay`` holds the
        # (key, result) pair hashes, ``replay_meta`` last step, gap and laps per slot: two
        # arrays instead of a dict of lists (memory per idle session).
        size = max_gap + 1
        pairs, meta = self.replay, self.replay_meta
        if pairs is None or len(pairs) != size:
            pairs = self.replay = array("Q", bytes(8 * size))
            meta = self.replay_meta = array("q", [-(1 << 62)] * (3 * size))
        gap, laps = 0, 1
        for slot in range(size):
            last = meta[3 * slot]
            if step - last <= max_gap and pairs[slot] == pair:
                gap = step - last
                if 2 <= gap <= max_gap:
                    laps = meta[3 * slot + 2] + 1 if gap == meta[3 * slot + 1] else 2
                else:
                    gap, laps = 0, 1
                meta[3 * slot] = -(1 << 62)  # moved to this step's slot
                break
        mine = step % size
        pairs[mine] = pair
        meta[3 * mine], meta[3 * mine + 1], meta[3 * mine + 2] = step, gap, laps
        # The count is the most laps of any call whose cycle is still running (seen within
        # its gap); a call that misses its slot has left the cycle.
        best, unit = 0, 0
        for slot in range(size):
            last, slot_gap, slot_laps = meta[3 * slot], meta[3 * slot + 1], meta[3 * slot + 2]
            if slot_gap and step - last <= slot_gap and slot_laps > best:
                best, unit = slot_laps, slot_gap
        gaps = self.replay_gaps
        if gaps is None or len(gaps) != max_gap:
            gaps = self.replay_gaps = array("q", bytes(8 * max_gap))
        gaps[step % max_gap] = gap if laps >= 2 else 0
        # Full replay: each of the last ``unit`` calls came back at that same distance.
        self.replay_full = bool(unit) and all(
            gaps[(step - j) % max_gap] == unit for j in range(unit)
        )
        self.replay_count, self.replay_unit = best, unit
        return best

    def _edit(self, step: int, tool: str, canonical: str, arguments: Any, cfg) -> int:
        names = _lowered(cfg.tools)
        if canonical not in names and tool.lower() not in names:
            self.edit_count = 0
            return 0
        raw = canonical_json(arguments)
        if len(raw) < cfg.min_chars:
            self.edit_count = 0
            return 0
        folded = hash_bytes(tool.encode("utf-8", "replace") + b"\x00" + _DIGITS.sub(b"", raw))
        if folded == self.edit_key and self.edit_step == step - 1:
            self.edit_count += 1
        else:
            self.edit_count = 1
        self.edit_key, self.edit_step = folded, step
        return self.edit_count

    def reset(self, dimension: Dimension) -> None:
        """Self-heal of a dimension: its rules count from zero again."""
        if dimension is Dimension.ERROR_STREAK:
            self.density_bits = self.density_calls = self.density_run = 0
            self.gates[_DENSITY] = 0
            self.same_ring = None
            self.same_counts.clear()
            self.gates[_SAME] = 0
        if dimension is Dimension.IDENTICAL_CALL:
            self.replay = None
            self.replay_meta = None
            self.replay_gaps = None
            self.replay_count = self.replay_unit = 0
            self.replay_full = False
            self.gates[_REPLAY] = 0
            self.edit_count = 0
            self.edit_step = -2
            self.gates[_EDIT] = 0
            self.gates[_FAIL] = 0
            self.recur_ring = None
            self.recur_counts.clear()
            self.gates[_RECUR] = 0
