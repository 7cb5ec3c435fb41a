"""The eight loop dimensions, one small class each, with constant-size state.

Each dimension turns one observation into a count; :class:`Gate` turns counts into WARN/TERM
crossings (once per crossing, re-armed when the count falls below the level again). State is
hashes and small integers in fixed windows: it never grows with the length of the run.
"""

from __future__ import annotations

import functools
import math
import re
from array import array

from otel_cycleguard.config import (
    BudgetConfig,
    ErrorStreakConfig,
    StateHashConfig,
    TextLoopConfig,
    Thresholds,
)
from otel_cycleguard.detect.signals import Level

__all__ = [
    "Budget",
    "CategoryStreak",
    "ErrorStreak",
    "Gate",
    "IdenticalCall",
    "PollNoProgress",
    "StateRevisit",
    "TextLoop",
    "ToolPattern",
    "crossing",
]

_NONE, _WARNED, _TERMED = 0, 1, 2


def crossing(fired: int, count: float, warn: float, term: float) -> tuple[int, Level | None]:
    """Once-per-crossing firing: (the new fired state, the level to fire or None).

    ``fired`` is 0 (nothing fired), 1 (WARN fired) or 2 (TERM fired). A level fires when the
    count reaches it and re-arms only once the count falls below it again; at most one level
    (the highest) fires per observation.
    """
    if count < warn:
        return _NONE, None
    if count >= term:
        return _TERMED, (Level.TERM if fired < _TERMED else None)
    if fired == _TERMED:  # fell below term: TERM re-arms, WARN has fired already
        return _WARNED, None
    return _WARNED, (Level.WARN if fired == _NONE else None)


class Gate:
    """Fires WARN/TERM once per crossing; at most one (the highest) level per observation."""

    __slots__ = ("fired",)

    def __init__(self) -> None:
        self.fired = _NONE

    def check(self, count: float, warn: float, term: float) -> Level | None:
        self.fired, level = crossing(self.fired, count, warn, term)
        return level

    def reset(self) -> None:
        self.fired = _NONE


class _Gated(Gate):
    """A dimension that is its own :class:`Gate` (no extra object per session: memory)."""

    __slots__ = ()

    @property
    def gate(self) -> Gate:
        return self


class IdenticalCall(_Gated):
    """Consecutive calls whose (tool, args) hash AND masked result hash equal the previous one's."""

    __slots__ = ("count", "last_key", "last_result")

    def __init__(self) -> None:
        self.last_key = 0
        self.last_result = 0
        self.count = 0
        self.fired = _NONE

    def observe(self, key: int, result: int, is_poll: bool) -> int:
        if is_poll:  # waiting is poll_no_progress's business, with its own thresholds
            self.last_key = self.last_result = 0
            self.count = 0
            return 0
        if key == self.last_key and result == self.last_result:
            self.count += 1
        else:
            self.count = 1
        self.last_key, self.last_result = key, result
        return self.count

    def reset(self) -> None:
        self.count = 0
        self.fired = _NONE


class CategoryStreak(_Gated):
    """Consecutive calls of one category, halved for progress-aware tools whose args change."""

    __slots__ = ("category", "count", "last_args")

    _MAX_TRACKED_TOOLS = 4

    def __init__(self) -> None:
        self.category: str | None = None
        self.count = 0
        # The last argument hash per progress-aware tool, as a flat (tool, hash, ...) tuple:
        # a handful of tools at most, and far smaller than a dict per session.
        self.last_args: tuple = ()
        self.fired = _NONE

    def observe(self, category: str, tool: str, key: int, progress_aware: bool) -> int:
        changed_args = False
        if progress_aware:
            pairs = self.last_args
            kept: list = []
            for i in range(0, len(pairs), 2):
                if pairs[i] == tool:
                    changed_args = pairs[i + 1] != key
                else:
                    kept += (pairs[i], pairs[i + 1])
            self.last_args = (*kept[-2 * (self._MAX_TRACKED_TOOLS - 1) :], tool, key)
        if category != self.category:
            self.category = category
            self.count = 1
        elif changed_args:
            self.count = max(1, math.ceil(self.count / 2))
        else:
            self.count += 1
        return self.count

    def reset(self) -> None:
        self.count = 0
        self.fired = _NONE


class ToolPattern(_Gated):
    """Laps of the shortest repeating unit (period 2..max_period) at the tail of the sequence.

    ``full_run[p]`` counts consecutive calls equal (tool and args) to the call p places back,
    so the repeating tail is ``full_run[p] + p`` calls long and holds that many // p laps. When
    no unit repeats with its arguments, tool names alone are tried, and a lap whose arguments
    differ from the previous lap's halves the lap count instead of adding one.
    """

    __slots__ = ("count", "lap_changed", "max_period", "period", "ring", "runs", "seen")

    # ``runs`` packs three per-period counters in one array (memory: one object, not three
    # lists): full_run[p] at p, name_run[p] at size + p, name_laps[p] at 2 * size + p.
    # ``ring`` holds the last max_period call keys, then the last max_period tool-name hashes.
    # ``lap_changed`` is a bit set over periods.

    def __init__(self, max_period: int) -> None:
        self.max_period = max_period
        self.ring = array("Q", bytes(16 * max_period))
        size = max_period + 1
        self.runs = array("q", [0] * (2 * size) + [1] * size)
        self.lap_changed = 0
        self.seen = 0
        self.period = 0
        self.count = 0
        self.fired = _NONE

    @property
    def full_run(self) -> list[int]:
        """Per period: consecutive calls equal to the call p places back (for tests, state)."""
        return self.runs[: self.max_period + 1].tolist()

    def observe(self, key: int, name: int) -> int:
        self.count = self._laps(key, name)
        return self.count

    def _laps(self, key: int, name: int) -> int:
        size = self.max_period
        width = size + 1
        seen = self.seen
        ring, runs = self.ring, self.runs
        best_full = best_name = 0
        for p in range(2, size + 1):
            if seen < p:
                break
            back = (seen - p) % size
            same_full = ring[back] == key
            if same_full:
                runs[p] += 1
            else:
                runs[p] = 0
            bit = 1 << p
            if ring[size + back] == name:
                run = runs[width + p] = runs[width + p] + 1
                if not same_full:
                    self.lap_changed |= bit
                if run % p == 0:
                    laps = 2 * width + p
                    if self.lap_changed & bit:
                        runs[laps] = max(1, math.ceil(runs[laps] / 2))
                    else:
                        runs[laps] += 1
                    self.lap_changed &= ~bit
            else:
                runs[width + p] = 0
                runs[2 * width + p] = 1
                self.lap_changed &= ~bit
            if not best_full and runs[p] >= p and not _constant(ring, 0, size, seen, p, key):
                best_full = p
            if (
                not best_name
                and runs[width + p] >= p
                and not _constant(ring, size, size, seen, p, name)
            ):
                best_name = p
        slot = seen % size
        ring[slot] = key
        ring[size + slot] = name
        self.seen = seen + 1
        if best_full:
            self.period = best_full
            return (runs[best_full] + best_full) // best_full
        if best_name:
            self.period = best_name
            return runs[2 * width + best_name]
        self.period = 0
        return 0

    def reset(self) -> None:
        # Forget the history too (``seen = 0``): otherwise the last pre-reset lap would count as
        # the first lap after it and the dimension would reach TERM again one lap early.
        width = self.max_period + 1
        for p in range(width):
            self.runs[p] = 0
            self.runs[width + p] = 0
            self.runs[2 * width + p] = 1
        self.lap_changed = 0
        self.seen = 0
        self.period = 0
        self.count = 0
        self.fired = _NONE


def _constant(ring: array, offset: int, size: int, seen: int, p: int, current: int) -> bool:
    """True when the last p-1 entries of one half of ``ring`` and ``current`` are all equal."""
    return all(ring[offset + (seen - j) % size] == current for j in range(1, p))


class PollNoProgress:
    """Per poll tool: consecutive calls of that tool whose masked result hash did not change."""

    __slots__ = ("gates", "last")

    _MAX_TOOLS = 16

    def __init__(self) -> None:
        self.last: dict[str, list[int]] | None = None  # tool -> [result hash, count]
        self.gates: dict[str, Gate] | None = None

    def observe(self, tool: str, result: int) -> int:
        if self.last is None:
            self.last, self.gates = {}, {}
        entry = self.last.get(tool)
        if entry is None:
            if len(self.last) >= self._MAX_TOOLS:
                oldest = next(iter(self.last))
                del self.last[oldest]
                self.gates.pop(oldest, None)  # type: ignore[union-attr]
            self.last[tool] = [result, 1]
            return 1
        if entry[0] == result:
            entry[1] += 1
        else:
            entry[0], entry[1] = result, 1
        return entry[1]

    def gate(self, tool: str) -> Gate:
        assert self.gates is not None
        gate = self.gates.get(tool)
        if gate is None:
            gate = self.gates[tool] = Gate()
        return gate

    def reset(self) -> None:
        if self.last:
            for entry in self.last.values():
                entry[1] = 0
        if self.gates:
            for gate in self.gates.values():
                gate.reset()


class ErrorStreak(_Gated):
    """Consecutive failures across all tools, and per tool (other tools in between don't reset).

    The count is the larger of the global streak and the longest per-tool streak, so the gate
    re-arms only once every streak has really been broken by a success.
    """

    __slots__ = ("global_count", "patterns", "per_tool", "scan_chars", "skip_tools")

    _MAX_TOOLS = 64

    def __init__(self, config: ErrorStreakConfig) -> None:
        self.global_count = 0
        self.per_tool: dict[str, int] | None = None
        self.fired = _NONE
        self.patterns = (
            re.compile("|".join(f"(?:{p})" for p in config.result_patterns))
            if config.result_patterns
            else None
        )
        self.scan_chars = config.max_scan_chars
        self.skip_tools = _lowered(config.non_failing_tools)  # shared, not one set per session

    def is_failure(self, tool: str, error: bool, result_text: str | None) -> bool:
        if tool.lower() in self.skip_tools:
            return False
        if error:
            return True
        if self.patterns is not None and result_text:
            return self.patterns.search(result_text[: self.scan_chars]) is not None
        return False

    def observe(self, tool: str, failed: bool) -> int:
        if failed:
            if self.per_tool is None:  # created on the first failure: most sessions never fail
                self.per_tool = {}
            self.global_count += 1
            if tool not in self.per_tool and len(self.per_tool) >= self._MAX_TOOLS:
                self.per_tool.pop(next(iter(self.per_tool)))
            self.per_tool[tool] = self.per_tool.get(tool, 0) + 1
        else:
            self.global_count = 0
            if self.per_tool:
                self.per_tool.pop(tool, None)
        longest = max(self.per_tool.values()) if self.per_tool else 0
        return max(self.global_count, longest)

    def reset(self) -> None:
        self.global_count = 0
        if self.per_tool:
            self.per_tool.clear()
        self.fired = _NONE


@functools.lru_cache(maxsize=64)
def _lowered(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset(n.lower() for n in names)


class TextLoop(_Gated):
    """Consecutive model turns whose normalised text is identical or near-identical.

    Near-identity is the Jaccard similarity of the sets of word ``shingle_size``-grams,
    estimated from bottom-k sketches (exact below k shingles), compared with ``similarity``.
    """

    __slots__ = ("count", "last_exact", "last_sketch")

    SKETCH_SIZE = 64

    def __init__(self) -> None:
        self.count = 0
        self.last_exact = 0
        self.last_sketch: tuple[int, ...] = ()
        self.fired = _NONE

    def observe(self, exact: int, sketch: tuple[int, ...], config: TextLoopConfig) -> int:
        if self.count and (
            exact == self.last_exact
            or jaccard(sketch, self.last_sketch, self.SKETCH_SIZE) >= config.similarity
        ):
            self.count += 1
        else:
            self.count = 1
        self.last_exact, self.last_sketch = exact, sketch
        return self.count

    def reset(self) -> None:
        self.count = 0
        self.fired = _NONE


MAX_SKETCH_WORDS = 400


_WORD_HASHES: dict[str, int] = {}
_WORD_HASH_LIMIT = 65_536
_MASK64 = (1 << 64) - 1
_MIX = 0x9E3779B97F4A7C15  # odd 64-bit constant (golden ratio): mixes word hashes by position


def _word_hash(word: str, hasher) -> int:
    value = _WORD_HASHES.get(word)
    if value is None:
        if len(_WORD_HASHES) >= _WORD_HASH_LIMIT:
            _WORD_HASHES.clear()
        value = _WORD_HASHES[word] = hasher(word.encode("utf-8", "replace"))
    return value


def shingle_sketch(
    words: list[str], size: int, hasher, k: int = TextLoop.SKETCH_SIZE
) -> tuple[int, ...]:
    """Bottom-k sketch (k smallest hashes) of the word ``size``-shingles of ``words``.

    A shingle's hash combines its words' hashes by position (words are hashed once, through
    a bounded cache shared by all sessions: model texts reuse most words), so the cost per
    shingle is a few integer operations. Only the first ``MAX_SKETCH_WORDS`` words are
    shingled so a long turn costs a bounded amount; the exact-text hash covers the whole text.
    """
    hashes = [_word_hash(w, hasher) for w in words[:MAX_SKETCH_WORDS]]
    if len(hashes) <= size:
        grams = {_combine(hashes)}
    elif size == 3:
        grams = {
            ((a * _MIX + b) * _MIX + c) & _MASK64
            for a, b, c in zip(hashes, hashes[1:], hashes[2:], strict=False)
        }
    else:
        grams = {_combine(hashes[i : i + size]) for i in range(len(hashes) - size + 1)}
    return tuple(sorted(grams)[:k])


def _combine(hashes: list[int]) -> int:
    value = 0
    for h in hashes:
        value = (value * _MIX + h) & _MASK64
    return value


def jaccard(a: tuple[int, ...], b: tuple[int, ...], k: int) -> float:
    """Jaccard estimate from two bottom-k sketches (exact when both sets are smaller than k)."""
    if not a or not b:
        return 0.0
    set_a, set_b = set(a), set(b)
    union = sorted(set_a | set_b)[:k]
    both = sum(1 for h in union if h in set_a and h in set_b)
    return both / len(union)


class StateRevisit(_Gated):
    """Visits of a state fingerprint within the last ``window`` states, or A-B-A-B over them.

    The count is the most visits any one fingerprint has among the last ``window`` states
    (the current one included), so a revisit loop S x S y S does not fall below the threshold
    (and re-arm it) merely because a fresh state was observed in between.
    """

    __slots__ = ("abab_run", "count", "ring", "seen", "visits")

    def __init__(self) -> None:
        self.ring: array | None = None
        self.visits: dict[int, int] | None = None  # fingerprint -> visits in the ring (<= window)
        self.seen = 0
        self.abab_run = 0
        self.count = 0
        self.fired = _NONE

    def observe(self, fingerprint: int, config: StateHashConfig) -> int:
        window = config.window
        if self.ring is None or self.visits is None:
            self.ring = array("Q", bytes(8 * window))
            self.visits = {}
        ring, seen, visits = self.ring, self.seen, self.visits
        if seen >= 2:
            two_back = ring[(seen - 2) % window]
            one_back = ring[(seen - 1) % window]
            self.abab_run = self.abab_run + 1 if two_back == fingerprint != one_back else 0
        slot = seen % window
        if seen >= window:  # evict the state leaving the window
            old = ring[slot]
            left = visits[old] - 1
            if left:
                visits[old] = left
            else:
                del visits[old]
        ring[slot] = fingerprint
        visits[fingerprint] = visits.get(fingerprint, 0) + 1
        self.seen = seen + 1
        laps = (self.abab_run + 2) // 2 if self.abab_run >= 2 else 0
        self.count = max(max(visits.values()), laps)
        return self.count

    def reset(self) -> None:
        self.ring = None
        self.visits = None
        self.seen = 0
        self.abab_run = 0
        self.count = 0
        self.fired = _NONE


class Budget:
    """Per-session limits: tool calls, model turns, tokens, wall time, idle time, call duration."""

    __slots__ = ("first_s", "gates", "last_s", "model_turns", "tokens", "tool_calls")

    METRICS = (
        "tool_calls",
        "model_turns",
        "tokens",
        "wall_seconds",
        "idle_seconds",
        "call_seconds",
    )

    def __init__(self) -> None:
        self.tool_calls = 0
        self.model_turns = 0
        self.tokens = 0
        self.first_s: float | None = None
        self.last_s: float | None = None
        self.gates: list[Gate] | None = None

    def observe(
        self,
        config: BudgetConfig,
        *,
        tool_call: bool,
        tokens: int,
        start_s: float | None,
        end_s: float | None,
        call_limit: float | None,
    ) -> tuple[Level, str, int, int] | None:
        """Update the counters; return the highest (level, metric, value, limit) that crossed."""
        if tool_call:
            self.tool_calls += 1
        else:
            self.model_turns += 1
        self.tokens += max(0, tokens)
        idle = None
        if start_s is not None:
            if self.first_s is None:
                self.first_s = start_s
            if self.last_s is not None:
                idle = start_s - self.last_s
        if end_s is not None:
            self.last_s = end_s if self.last_s is None else max(self.last_s, end_s)
        if not config.enabled:
            return None
        wall = (end_s - self.first_s) if (end_s is not None and self.first_s is not None) else None
        duration = (end_s - start_s) if (end_s is not None and start_s is not None) else None
        values = (
            (self.tool_calls, config.max_tool_calls),
            (self.model_turns, config.max_model_turns),
            (self.tokens, config.max_tokens),
            (wall, config.max_wall_seconds),
            (idle, config.max_idle_seconds),
            (duration if tool_call else None, call_limit),
        )
        if self.gates is None:
            self.gates = [Gate() for _ in self.METRICS]
        best: tuple[Level, str, int, int] | None = None
        for metric, gate, (value, limit) in zip(self.METRICS, self.gates, values, strict=True):
            if value is None or limit is None:
                continue
            # Compare the real values: flooring a duration made fractional limits (0.5 s) or a
            # 1.7 s idle gap against a 1.5 s limit never fire.
            level = gate.check(value, limit * config.warn_fraction, limit)
            if level is not None and (
                best is None or (level is Level.TERM and best[0] is Level.WARN)
            ):
                best = (level, metric, math.ceil(value), math.ceil(limit))
        return best

    def reset(self) -> None:
        """Self-heal (SPEC §3): the counters start again from zero, the wall clock from the next
        call. The run gets one more budget window; the next TERM goes to a human."""
        self.tool_calls = 0
        self.model_turns = 0
        self.tokens = 0
        self.first_s = None
        if self.gates:
            for gate in self.gates:
                gate.reset()


def thresholds_of(config: Thresholds) -> tuple[int, int]:
    """(warn, term) of any thresholds model."""
    return config.warn, config.term
