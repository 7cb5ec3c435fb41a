"""The eight loop dimensions, with constant-size state.

Each dimension turns one observation into a count; a gate turns counts into WARN/TERM
crossings (once per crossing, re-armed when the count falls below the level again). State is
hashes and small integers in fixed windows: it never grows with the length of the run.

Memory (a service holds many idle sessions): the dimensions every tool call touches
(identical_call, category_streak, tool_pattern, error_streak, the rules of rules.py) keep their
state as words of ONE array per session, laid out by :class:`Layout`; their objects are shared
by every session of a profile and hold only configuration and word offsets. State that most
sessions never need (per-tool tables, text, states, budget) is created on first use.
"""

from __future__ import annotations

import functools
import math
import re
from array import array

from otel_cycleguard.detect.settings import (
    BudgetSettings,
    ErrorStreakSettings,
    StateHashSettings,
    TextLoopSettings,
    ThresholdSettings,
)
from otel_cycleguard.detect.signals import Level

__all__ = [
    "Budget",
    "CallRing",
    "CategoryStreak",
    "ErrorStreak",
    "Gate",
    "IdenticalCall",
    "Layout",
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


# -- the session's state array -------------------------------------------------------------


class Layout:
    """Where each shared dimension keeps its words in a session's state array (``array('Q')``).

    Word 0 holds every gate's fired state, two bits per gate (a "lane"). Words are taken in
    named groups; :meth:`save` and :meth:`load` go by group and name, not by offset, so a saved
    state survives a change of layout, and a group whose shape changed starts fresh.
    """

    __slots__ = ("_groups", "_lanes", "_template")

    _MAX_LANES = 32

    def __init__(self) -> None:
        self._template = array("Q", [0])
        self._groups: dict[str, dict[str, tuple[int, int]]] = {}
        self._lanes: dict[str, list[int]] = {}

    def reserve(self, count: int) -> int:
        """``count`` words outside any group (saved by their owner); returns the offset."""
        offset = len(self._template)
        self._template.extend([0] * count)
        return offset

    def words(self, group: str, name: str, count: int = 1, initial: int = 0) -> int:
        """``count`` words named ``name`` in ``group``, each starting at ``initial``."""
        offset = len(self._template)
        self._template.extend([initial] * count)
        self._groups.setdefault(group, {})[name] = (offset, count)
        return offset

    def lane(self, group: str) -> int:
        """A gate of ``group``: two bits of word 0."""
        lane = sum(len(lanes) for lanes in self._lanes.values())
        if lane >= self._MAX_LANES:
            raise ValueError("too many gates for one state word")
        self._lanes.setdefault(group, []).append(lane)
        return lane

    def new_state(self) -> array:
        """A fresh session's words (an exact-size copy of the template)."""
        return self._template[:]

    def save(self, words: array) -> dict[str, dict[str, list[int]]]:
        """Every group's words and gate states, by name (JSON-compatible)."""
        out: dict[str, dict[str, list[int]]] = {}
        for group, fields in self._groups.items():
            saved = {name: words[o : o + n].tolist() for name, (o, n) in fields.items()}
            saved["$gates"] = [lane_state(words, lane) for lane in self._lanes.get(group, ())]
            out[group] = saved
        for group, lanes in self._lanes.items():
            if group not in out:
                out[group] = {"$gates": [lane_state(words, lane) for lane in lanes]}
        return out

    def load(self, words: array, saved: dict) -> None:
        """Load what :meth:`save` wrote; a group whose names or sizes differ is left fresh."""
        for group, values in saved.items():
            fields = self._groups.get(group, {})
            lanes = self._lanes.get(group, [])
            if not isinstance(values, dict) or set(values) != {*fields, "$gates"}:
                continue
            if len(values["$gates"]) != len(lanes) or any(
                len(values[name]) != n for name, (_, n) in fields.items()
            ):
                continue
            for name, (offset, n) in fields.items():
                words[offset : offset + n] = array("Q", (int(v) for v in values[name]))
            for lane, fired in zip(lanes, values["$gates"], strict=True):
                set_lane(words, lane, int(fired) & 3)


def lane_state(words: array, lane: int) -> int:
    """A gate's fired state (0 nothing, 1 WARN, 2 TERM)."""
    return (words[0] >> (2 * lane)) & 3


def set_lane(words: array, lane: int, fired: int) -> None:
    shift = 2 * lane
    words[0] = (words[0] & ~(3 << shift)) | (fired << shift)


def clear_lane(words: array, lane: int) -> None:
    words[0] &= ~(3 << (2 * lane))


def check_lane(words: array, lane: int, count: float, warn: float, term: float) -> Level | None:
    """:func:`crossing` on a gate kept in word 0."""
    shift = 2 * lane
    gates = words[0]
    if count < warn and not (gates >> shift) & 3:
        return None  # the usual case: below the levels, nothing to re-arm
    fired, level = crossing((gates >> shift) & 3, count, warn, term)
    words[0] = (gates & ~(3 << shift)) | (fired << shift)
    return level


class CallRing:
    """The last ``size`` tool calls, three words each: key (tool and arguments hash), masked
    result hash, and an info word (bit 0: the call failed; replay_cycle owns the other bits).

    One copy serves the signal evidence, identical_call (the previous call), tool_pattern (the
    calls p back) and replay_cycle. The tool names live beside it in a per-session list.
    """

    __slots__ = ("base", "size")

    FAILED = 1

    def __init__(self, layout: Layout, size: int) -> None:
        self.size = size
        self.base = layout.reserve(3 * size)

    def at(self, step: int) -> int:
        """Offset of the key word of the call at ``step`` (result: +1, info: +2)."""
        return self.base + 3 * (step % self.size)

    def put(self, words: array, step: int, key: int, result: int, failed: bool) -> None:
        at = self.base + 3 * (step % self.size)
        words[at] = key
        words[at + 1] = result
        words[at + 2] = self.FAILED if failed else 0


# -- the dimensions every call touches (shared objects, state in the session's words) -------


class IdenticalCall:
    """Consecutive calls whose (tool, args) hash AND masked result hash equal the previous one's.

    The previous call's hashes are read from the call ring (not kept a second time): while the
    count is not zero, the previous call is the one that was counted.
    """

    __slots__ = ("count", "lane", "ring")

    def __init__(self, layout: Layout, ring: CallRing) -> None:
        self.ring = ring
        self.count = layout.words("identical_call", "count")
        self.lane = layout.lane("identical_call")

    def observe(self, words: array, step: int, key: int, result: int, is_poll: bool) -> int:
        if is_poll:  # waiting is poll_no_progress's business, with its own thresholds
            words[self.count] = 0
            return 0
        count = words[self.count]
        if count:
            previous = self.ring.at(step - 1)
            same = words[previous] == key and words[previous + 1] == result
            count = count + 1 if same else 1
        else:
            count = 1
        words[self.count] = count
        return count

    def check(self, words: array, count: int, warn: int, term: int) -> Level | None:
        return check_lane(words, self.lane, count, warn, term)

    def reset(self, words: array) -> None:
        words[self.count] = 0
        clear_lane(words, self.lane)


class CategoryStreak:
    """Consecutive calls of one category, halved for progress-aware tools whose args change.

    Words: the category's name hash, the count, and per progress-aware tool (at most four,
    oldest first) its name hash and last argument hash; a name hash of 0 is a free entry.
    """

    __slots__ = ("args", "category", "count", "lane")

    _MAX_TRACKED_TOOLS = 4

    def __init__(self, layout: Layout) -> None:
        self.category = layout.words("category_streak", "category")
        self.count = layout.words("category_streak", "count")
        self.args = layout.words("category_streak", "args", 2 * self._MAX_TRACKED_TOOLS)
        self.lane = layout.lane("category_streak")

    def observe(
        self, words: array, category: int, tool: int, key: int, progress_aware: bool
    ) -> int:
        """``category`` and ``tool`` are name hashes; ``key`` the call's arguments hash."""
        changed_args = self._track(words, tool, key) if progress_aware else False
        count = words[self.count]
        if category != words[self.category]:
            words[self.category] = category
            count = 1
        elif changed_args:
            count = max(1, math.ceil(count / 2))
        else:
            count += 1
        words[self.count] = count
        return count

    def _track(self, words: array, tool: int, key: int) -> bool:
        """Remember ``tool``'s arguments (most recent last); True if they changed."""
        base, size = self.args, 2 * self._MAX_TRACKED_TOOLS
        changed = False
        kept: list[int] = []
        for i in range(base, base + size, 2):
            name = words[i]
            if name == tool:
                changed = words[i + 1] != key
            elif name:
                kept += (name, words[i + 1])
        kept = [*kept[-(size - 2) :], tool, key]
        words[base : base + size] = array("Q", kept + [0] * (size - len(kept)))
        return changed

    def check(self, words: array, count: int, warn: int, term: int) -> Level | None:
        return check_lane(words, self.lane, count, warn, term)

    def reset(self, words: array) -> None:
        """The count from zero; the category and the tools' arguments stay."""
        words[self.count] = 0
        clear_lane(words, self.lane)


class ToolPattern:
    """Laps of the shortest repeating unit (period 2..max_period) at the tail of the sequence.

    ``full_run[p]`` counts consecutive calls equal (tool and args) to the call p places back,
    so the repeating tail is ``full_run[p] + p`` calls long and holds that many // p laps. When
    no unit repeats with its arguments, tool names alone are tried, and a lap whose arguments
    differ from the previous lap's halves the lap count instead of adding one.

    The calls p back are read from the call ring and the tool-name list beside it. Words: the
    three per-period counters (periods 2..max_period), ``lap_changed`` (a bit set over
    periods), ``seen`` (calls since the last reset) and the current lap count.
    """

    __slots__ = (
        "count",
        "full_run",
        "lane",
        "lap_changed",
        "max_period",
        "name_laps",
        "name_run",
        "ring",
        "seen",
    )

    def __init__(self, layout: Layout, ring: CallRing, max_period: int) -> None:
        self.ring = ring
        self.max_period = max_period
        periods = max_period - 1
        # offsets minus 2: indexed by the period itself
        self.full_run = layout.words("tool_pattern", "full_run", periods) - 2
        self.name_run = layout.words("tool_pattern", "name_run", periods) - 2
        self.name_laps = layout.words("tool_pattern", "name_laps", periods, initial=1) - 2
        self.lap_changed = layout.words("tool_pattern", "lap_changed")
        self.seen = layout.words("tool_pattern", "seen")
        self.count = layout.words("tool_pattern", "count")
        self.lane = layout.lane("tool_pattern")

    def observe(
        self, words: array, tools: list[str], step: int, key: int, tool: str
    ) -> tuple[int, int]:
        """(laps, period) after the call at ``step``, which is already in the ring."""
        base, size = self.ring.base, self.ring.size  # the ring's offsets, inlined (hot loop)
        full_run, name_run, name_laps = self.full_run, self.name_run, self.name_laps
        seen = words[self.seen]
        changed = words[self.lap_changed]
        best_full = best_name = 0
        for p in range(2, self.max_period + 1):
            if seen < p:
                break
            slot = (step - p) % size  # the call p back, in the ring and in ``tools``
            # The runs are kept in locals (``full``, ``run``) for the tests below rather than
            # read back from the array (an index computation and an array read less each).
            same_full = words[base + 3 * slot] == key
            full = words[full_run + p] + 1 if same_full else 0
            words[full_run + p] = full
            bit = 1 << p
            if tools[slot] == tool:
                run = words[name_run + p] + 1
                words[name_run + p] = run
                if not same_full:
                    changed |= bit
                if run % p == 0:
                    laps = name_laps + p
                    if changed & bit:
                        words[laps] = max(1, math.ceil(words[laps] / 2))
                    else:
                        words[laps] += 1
                    changed &= ~bit
            else:
                run = 0
                words[name_run + p] = 0
                words[name_laps + p] = 1
                changed &= ~bit
            if (
                not best_full
                and full >= p
                and not all(words[base + 3 * ((step - j) % size)] == key for j in range(1, p))
            ):
                best_full = p
            if (
                not best_name
                and run >= p
                and not all(tools[(step - j) % size] == tool for j in range(1, p))
            ):
                best_name = p
        words[self.seen] = seen + 1
        words[self.lap_changed] = changed
        if best_full:
            laps, period = (words[full_run + best_full] + best_full) // best_full, best_full
        elif best_name:
            laps, period = words[name_laps + best_name], best_name
        else:
            laps = period = 0
        words[self.count] = laps
        return laps, period

    def check(self, words: array, count: int, warn: int, term: int) -> Level | None:
        return check_lane(words, self.lane, count, warn, term)

    def fired(self, words: array) -> int:
        return lane_state(words, self.lane)

    def reset(self, words: array) -> None:
        # Forget the history too (``seen = 0``): otherwise the last pre-reset lap would count as
        # the first lap after it and the dimension would reach TERM again one lap early.
        for p in range(2, self.max_period + 1):
            words[self.full_run + p] = words[self.name_run + p] = 0
            words[self.name_laps + p] = 1
        words[self.lap_changed] = words[self.seen] = words[self.count] = 0
        clear_lane(words, self.lane)


class PollNoProgress:
    """Per poll tool: consecutive calls of that tool whose masked result hash did not change.

    A session's table is a flat list ``[tool, result hash, count, gate state, ...]`` (oldest
    tool first, at most 16 tools), created on the session's first poll: a list, not a dict of
    lists and a dict of gates, because most sessions poll one or two tools, or none.
    """

    __slots__ = ()

    _MAX_TOOLS = 16
    _WIDTH = 4

    def observe(
        self, table: list | None, tool: str, result: int, warn: int, term: int
    ) -> tuple[int, Level | None, list]:
        """(the tool's count, the level its gate fires or None, the table)."""
        if table is None:
            table = []
        width = self._WIDTH
        for i in range(0, len(table), width):
            if table[i] == tool:
                break
        else:
            if len(table) >= width * self._MAX_TOOLS:
                del table[:width]
            i = len(table)
            table += (tool, result, 0, _NONE)
        count = table[i + 2] + 1 if table[i + 1] == result else 1
        table[i + 1], table[i + 2] = result, count
        table[i + 3], level = crossing(table[i + 3], count, warn, term)
        return count, level, table

    def longest(self, table: list | None) -> int:
        return max(table[2 :: self._WIDTH], default=0) if table else 0

    def reset(self, table: list | None) -> None:
        """Every tool's count and gate from zero (the last results stay)."""
        for i in range(0, len(table or ()), self._WIDTH):
            table[i + 2] = table[i + 3] = 0  # type: ignore[index]


class ErrorStreak:
    """Consecutive failures across all tools, and per tool (other tools in between don't reset).

    The count is the larger of the global streak and the longest per-tool streak, so the gate
    re-arms only once every streak has really been broken by a success. The per-tool table is
    a flat list ``[tool, streak, ...]`` (first failure first, at most 64 tools), created on a
    session's first failure and dropped when every streak is broken: most sessions never fail.
    """

    __slots__ = ("count", "lane", "patterns", "scan_chars", "skip_tools")

    _MAX_TOOLS = 64

    def __init__(self, layout: Layout, config: ErrorStreakSettings) -> None:
        self.count = layout.words("error_streak", "global_count")
        self.lane = layout.lane("error_streak")
        self.patterns = (
            re.compile("|".join(f"(?:{p})" for p in config.result_patterns))
            if config.result_patterns
            else None
        )
        self.scan_chars = config.max_scan_chars
        self.skip_tools = _lowered(config.non_failing_tools)

    def is_failure(self, tool: str, error: bool, result_text: str | None) -> bool:
        if tool.lower() in self.skip_tools:
            return False
        if error:
            return True
        if self.patterns is not None and result_text:
            return self.patterns.search(result_text[: self.scan_chars]) is not None
        return False

    def observe(
        self, words: array, table: list | None, tool: str, failed: bool
    ) -> tuple[int, list | None]:
        """(the count, the per-tool table or None)."""
        if failed:
            words[self.count] += 1
            if table is None:
                table = []
            index = _index(table, tool)
            if index < 0:
                if len(table) >= 2 * self._MAX_TOOLS:
                    del table[:2]
                table += (tool, 1)
            else:
                table[index + 1] += 1
        else:
            words[self.count] = 0
            if table:
                index = _index(table, tool)
                if index >= 0:
                    del table[index : index + 2]
                if not table:
                    table = None
        count = words[self.count]
        return (max(count, self.longest(table)) if table else count), table

    def observe_turn(self, words: array, table: list | None) -> int:
        """A failed model turn: one more failure of the run (the global streak only; no tool's
        streak), returning the count as :meth:`observe` does."""
        words[self.count] += 1
        count = words[self.count]
        return max(count, self.longest(table)) if table else count

    @staticmethod
    def longest(table: list | None) -> int:
        return max(table[1::2]) if table else 0

    def check(self, words: array, count: int, warn: int, term: int) -> Level | None:
        return check_lane(words, self.lane, count, warn, term)

    def reset(self, words: array) -> None:
        """The global streak from zero (the caller drops the per-tool table)."""
        words[self.count] = 0
        clear_lane(words, self.lane)


def _index(table: list, tool: str) -> int:
    """Index of ``tool`` in a flat ``[tool, streak, ...]`` table, or -1."""
    for i in range(0, len(table), 2):
        if table[i] == tool:
            return i
    return -1


@functools.lru_cache(maxsize=64)
def _lowered(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset(n.lower() for n in names)


class TextLoop(_Gated):
    """Consecutive model turns whose normalised text is identical or near-identical.

    Near-identity is the Jaccard similarity of the sets of word ``shingle_size``-grams,
    estimated from bottom-k sketches (exact below k shingles), compared with ``similarity``.
    Created on a session's first model turn; the last sketch is kept as an array (64 words,
    not 64 int objects).
    """

    __slots__ = ("count", "last_exact", "last_sketch")

    SKETCH_SIZE = 64

    def __init__(self) -> None:
        self.count = 0
        self.last_exact = 0
        self.last_sketch = array("Q")
        self.fired = _NONE

    def observe(self, exact: int, sketch: tuple[int, ...], config: TextLoopSettings) -> int:
        if self.count and (
            exact == self.last_exact
            or jaccard(sketch, self.last_sketch, self.SKETCH_SIZE) >= config.similarity
        ):
            self.count += 1
        else:
            self.count = 1
        self.last_exact, self.last_sketch = exact, array("Q", sketch)
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


def jaccard(a: tuple[int, ...] | array, b: tuple[int, ...] | array, k: int) -> float:
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

    def observe(self, fingerprint: int, config: StateHashSettings) -> int:
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
        config: BudgetSettings,
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
        """Self-heal (docs/detection.md): the counters start again from zero, the wall clock from the next
        call. The run gets one more budget window; the next TERM goes to a human."""
        self.tool_calls = 0
        self.model_turns = 0
        self.tokens = 0
        self.first_s = None
        if self.gates:
            for gate in self.gates:
                gate.reset()


def thresholds_of(config: ThresholdSettings) -> tuple[int, int]:
    """(warn, term) of any thresholds model."""
    return config.warn, config.term
