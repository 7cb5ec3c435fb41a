"""Per-session detection: feeds tool calls and model turns through the dimensions.

:class:`Detector` holds what is shared (configuration, normaliser, categoriser);
:class:`SessionDetector` holds one session's constant-size state. Raw arguments, results and
texts are hashed on arrival and dropped.
"""

from __future__ import annotations

import functools
import re
from array import array

from otel_cycleguard.config import CycleGuardConfig, ProfileConfig
from otel_cycleguard.detect.categories import Categorizer, ToolKind
from otel_cycleguard.detect.dimensions import (
    Budget,
    CategoryStreak,
    ErrorStreak,
    Gate,
    IdenticalCall,
    PollNoProgress,
    StateRevisit,
    TextLoop,
    ToolPattern,
    shingle_sketch,
)
from otel_cycleguard.detect.normalize import Normalizer, hash_bytes, hex_digest
from otel_cycleguard.detect.records import ModelTurn, ToolCall
from otel_cycleguard.detect.rules import REFINED_KINDS, RealWorldRules, refine_failure
from otel_cycleguard.detect.signals import (
    BreakStrategy,
    CallDigest,
    CycleClass,
    Dimension,
    Level,
    Signal,
)

__all__ = ["Detector", "SessionDetector"]

_STRATEGY = {
    CycleClass.TOOL_CYCLE: BreakStrategy.CHANGE_ARGUMENTS_OR_TOOL,
    CycleClass.REASONING_CYCLE: BreakStrategy.FORCE_EXECUTION_OR_CLARIFY,
    CycleClass.MIXED_CYCLE: BreakStrategy.RESET_CONTEXT_OR_ROLLBACK,
}
_NAME_CACHE_LIMIT = 4096
_DIMENSION_ORDER = {d: i for i, d in enumerate(Dimension)}
_WORD_SPLIT = re.compile(r"[^\w#]+")


class Detector:
    """Shared, immutable-ish parts of detection for one configuration; makes sessions."""

    def __init__(self, config: CycleGuardConfig | None = None) -> None:
        self.config = config or CycleGuardConfig()
        self.normalizer = Normalizer(
            self.config.mask_patterns,
            mask_defaults=self.config.mask_defaults,
            result_fields=self.config.result_fields,
        )
        self.categorizer = Categorizer(
            self.config.extra_categories, self.config.read_only_tools, self.config.poll_tools
        )
        self.progress_aware = frozenset(t.lower() for t in self.config.progress_aware_tools)
        self.disabled = frozenset(Dimension(d) for d in self.config.disabled_dimensions)
        self._name_hashes: dict[str, int] = {}

    def session(
        self, key: str, *, agent: str | None = None, subagent: bool = False
    ) -> SessionDetector:
        """A fresh detector for one session, with the profile its agent name calls for."""
        name, profile = self.config.profile_for(agent, subagent=subagent)
        return SessionDetector(self, key, name, profile, agent)

    def name_hash(self, tool: str) -> int:
        value = self._name_hashes.get(tool)
        if value is None:
            if len(self._name_hashes) >= _NAME_CACHE_LIMIT:
                self._name_hashes.clear()
            value = self._name_hashes[tool] = hash_bytes(tool.encode("utf-8", "replace"))
        return value


class SessionDetector:
    """One session's loop state. Not thread-safe: callers serialise access per session."""

    __slots__ = (
        "_budget",
        "_category",
        "_error",
        "_evidence_tools",
        "_identical",
        "_pattern",
        "_poll",
        "_recent",
        "_rules",
        "_state",
        "_text",
        "agent",
        "detector",
        "key",
        "model_turns",
        "profile",
        "profile_name",
        "tool_calls",
    )

    def __init__(
        self,
        detector: Detector,
        key: str,
        profile_name: str,
        profile: ProfileConfig,
        agent: str | None,
    ) -> None:
        self.detector = detector
        self.key = key
        self.profile_name = profile_name
        self.profile = profile
        self.agent = agent
        self.tool_calls = 0
        self.model_turns = 0
        self._identical = IdenticalCall()
        self._category = CategoryStreak()
        self._pattern = ToolPattern(profile.tool_pattern.max_period)
        self._poll = PollNoProgress()
        self._error = ErrorStreak(profile.error_streak)
        self._text = TextLoop()
        self._state = StateRevisit()
        self._budget = Budget()
        self._rules = RealWorldRules()
        size = max(detector.config.evidence_size, profile.tool_pattern.max_period)
        self._evidence_tools: list[str] = [""] * size
        # Per recent call: args hash, result hash, error flag (one array: memory).
        self._recent = array("Q", bytes(24 * size))

    # -- observations -------------------------------------------------------------------

    def observe_tool_call(self, call: ToolCall) -> list[Signal]:
        """Feed one finished tool call; returns the signals it fired (at most one per dimension)."""
        det = self.detector
        profile = self.profile
        tool = call.tool if isinstance(call.tool, str) and call.tool else "unknown"
        step = self.tool_calls
        self.tool_calls += 1
        kind = det.categorizer.classify(tool, call.arguments, call.read_only)
        key = det.normalizer.args_hash(tool, call.arguments)
        result_text = det.normalizer.result_text(tool, call.result)
        result = det.normalizer.text_hash(result_text)
        error = self._error
        if call.result is None:
            result_text = None
        failed = error.is_failure(tool, bool(call.error), result_text)
        if result_text is not None and kind.canonical in REFINED_KINDS:
            failed = refine_failure(
                tool, kind.canonical, call.arguments, result_text, failed, profile.error_streak
            )
        self._remember(step, tool, key, result, failed)

        fired: list[Signal] = []
        disabled = det.disabled

        # Each dimension: count, then its gate; a signal is built only on a crossing.
        identical = self._identical
        count = identical.observe(key, result, kind.is_poll)
        th = profile.identical_call
        level = identical.check(count, th.warn, th.term)
        if level is not None:
            self._fire(
                fired,
                Dimension.IDENTICAL_CALL,
                level,
                count,
                th.warn,
                th.term,
                tool,
                kind,
                step,
                unit=(tool,),
            )

        progress_aware = kind.canonical in det.progress_aware or tool.lower() in det.progress_aware
        category = self._category
        count = category.observe(kind.category, tool, key, progress_aware)
        warn, term = self._category_thresholds(tool, kind)
        level = category.check(count, warn, term)
        if level is not None:
            self._fire(fired, Dimension.CATEGORY_STREAK, level, count, warn, term, tool, kind, step)

        pattern = self._pattern
        count = pattern.observe(key, det.name_hash(tool))
        th = profile.tool_pattern
        level = pattern.check(count, th.warn, th.term)
        if level is not None:
            period = pattern.period
            self._fire(
                fired,
                Dimension.TOOL_PATTERN,
                level,
                count,
                th.warn,
                th.term,
                tool,
                kind,
                step,
                unit=self._recent_tools(period) if period else (),
            )

        if kind.is_poll:
            count = self._poll.observe(tool, result)
            th = profile.poll_no_progress
            level = self._poll.gate(tool).check(count, th.warn, th.term)
            if level is not None:
                self._fire(
                    fired,
                    Dimension.POLL_NO_PROGRESS,
                    level,
                    count,
                    th.warn,
                    th.term,
                    tool,
                    kind,
                    step,
                    unit=(tool,),
                )

        count = error.observe(tool, failed)
        th = profile.error_streak
        level = error.check(count, th.warn, th.term)
        if level is not None:
            self._fire(
                fired, Dimension.ERROR_STREAK, level, count, th.warn, th.term, tool, kind, step
            )

        for dimension, level, count, threshold, unit, text in self._rules.observe(
            profile,
            step,
            tool,
            kind.canonical,
            kind.is_poll,
            key,
            result,
            call.arguments,
            failed,
            self._identical.count,
            self._recent_tools,
        ):
            self._emit_rule(fired, dimension, level, count, threshold, tool, kind, step, unit, text)

        if call.state_fingerprint:
            self._observe_state(fired, call.state_fingerprint, tool, kind, step, None)

        budget = profile.budget
        crossed = self._budget.observe(
            budget,
            tool_call=True,
            tokens=0,
            start_s=call.start_s,
            end_s=call.end_s,
            call_limit=budget.call_seconds.get(tool, budget.call_seconds.get(kind.category))
            if budget.call_seconds
            else None,
        )
        if crossed is not None and Dimension.BUDGET not in disabled:
            level, metric, value, limit = crossed
            fired.append(
                self._signal(
                    Dimension.BUDGET,
                    level,
                    value,
                    limit,
                    tool,
                    kind,
                    step,
                    None,
                    explanation=_budget_text(metric, value, limit),
                )
            )
        return fired

    def observe_model_turn(self, turn: ModelTurn) -> list[Signal]:
        """Feed one finished model turn (text loop, state, token and turn budgets)."""
        det = self.detector
        index = self.model_turns
        self.model_turns += 1
        fired: list[Signal] = []
        text = turn.text if isinstance(turn.text, str) else None
        if text and text.strip():
            words = _normalise_words(det.normalizer.mask(text[:65536]))
            if words:
                th = self.profile.text_loop
                exact = hash_bytes(" ".join(words).encode("utf-8", "replace"))
                sketch = shingle_sketch(words, th.shingle_size, hash_bytes)
                count = self._text.observe(exact, sketch, th)
                level = self._text.check(count, th.warn, th.term)
                if level is not None:
                    self._fire(
                        fired,
                        Dimension.TEXT_LOOP,
                        level,
                        count,
                        th.warn,
                        th.term,
                        None,
                        None,
                        None,
                        model_turn=index,
                    )
        if turn.state_fingerprint:
            self._observe_state(fired, turn.state_fingerprint, None, None, None, index)
        tokens = _int(turn.input_tokens) + _int(turn.output_tokens)
        crossed = self._budget.observe(
            self.profile.budget,
            tool_call=False,
            tokens=tokens,
            start_s=turn.start_s,
            end_s=turn.end_s,
            call_limit=None,
        )
        if crossed is not None and Dimension.BUDGET not in det.disabled:
            level, metric, value, limit = crossed
            fired.append(
                self._signal(
                    Dimension.BUDGET,
                    level,
                    value,
                    limit,
                    None,
                    None,
                    None,
                    index,
                    explanation=_budget_text(metric, value, limit),
                )
            )
        return fired

    def reset(self, dimension: Dimension) -> None:
        """Self-heal: the dimension counts from zero again (the next matching call counts 1)."""
        {
            Dimension.IDENTICAL_CALL: self._identical,
            Dimension.CATEGORY_STREAK: self._category,
            Dimension.TOOL_PATTERN: self._pattern,
            Dimension.POLL_NO_PROGRESS: self._poll,
            Dimension.ERROR_STREAK: self._error,
            Dimension.TEXT_LOOP: self._text,
            Dimension.STATE_HASH: self._state,
            Dimension.BUDGET: self._budget,
        }[dimension].reset()
        self._rules.reset(dimension)

    def counters(self) -> dict[str, int]:
        """The current count of every dimension (for saved progress and debugging)."""
        poll = max((entry[1] for entry in (self._poll.last or {}).values()), default=0)
        per_tool = max((self._error.per_tool or {}).values(), default=0)
        return {
            "tool_calls": self.tool_calls,
            "model_turns": self.model_turns,
            Dimension.IDENTICAL_CALL.value: self._identical.count,
            Dimension.CATEGORY_STREAK.value: self._category.count,
            Dimension.TOOL_PATTERN.value: self._pattern.count,
            Dimension.POLL_NO_PROGRESS.value: poll,
            Dimension.ERROR_STREAK.value: max(self._error.global_count, per_tool),
            Dimension.TEXT_LOOP.value: self._text.count,
            Dimension.STATE_HASH.value: self._state.count,
            "tokens": self._budget.tokens,
        }

    # -- helpers --------------------------------------------------------------------------

    def _category_thresholds(self, tool: str, kind: ToolKind) -> tuple[int, int]:
        cfg = self.profile.category_streak
        overrides = cfg.tool_overrides
        if overrides:
            th = (
                overrides.get(tool)
                or overrides.get(tool.lower())
                or overrides.get(kind.override_key)
            )
            if th is not None:
                return th.warn, th.term
        th = cfg.exploration if kind.category == "exploration" else cfg.action
        return th.warn, th.term

    def _observe_state(
        self,
        fired: list[Signal],
        fingerprint: str,
        tool: str | None,
        kind: ToolKind | None,
        step: int | None,
        turn: int | None,
    ) -> None:
        th = self.profile.state_hash
        value = hash_bytes(str(fingerprint).encode("utf-8", "replace"))
        count = self._state.observe(value, th)
        level = self._state.check(count, th.warn, th.term)
        if level is not None:
            self._fire(
                fired,
                Dimension.STATE_HASH,
                level,
                count,
                th.warn,
                th.term,
                tool,
                kind,
                step,
                model_turn=turn,
            )

    def _remember(self, step: int, tool: str, key: int, result: int, failed: bool) -> None:
        size = len(self._evidence_tools)
        slot = step % size
        self._evidence_tools[slot] = tool
        evidence = self._recent
        evidence[3 * slot] = key
        evidence[3 * slot + 1] = result
        evidence[3 * slot + 2] = 1 if failed else 0

    def _evidence(self, count: int) -> tuple[CallDigest, ...]:
        size = len(self._evidence_tools)
        count = min(count, size, self.tool_calls)
        out = []
        for step in range(self.tool_calls - count, self.tool_calls):
            slot = step % size
            out.append(
                CallDigest(
                    self._evidence_tools[slot],
                    hex_digest(self._recent[3 * slot]),
                    hex_digest(self._recent[3 * slot + 1]),
                    bool(self._recent[3 * slot + 2]),
                )
            )
        return tuple(out)

    def _recent_tools(self, count: int) -> tuple[str, ...]:
        return tuple(d.tool for d in self._evidence(count))

    def _emit_rule(
        self,
        fired: list[Signal],
        dimension: Dimension,
        level: Level,
        count: int,
        threshold: int,
        tool: str,
        kind: ToolKind,
        step: int,
        unit: tuple[str, ...],
        text: str,
    ) -> None:
        """A rule's crossing (rules.py), reported under its SPEC dimension: at most one signal
        per dimension and call, the higher level wins."""
        if dimension in self.detector.disabled:
            return
        order = _DIMENSION_ORDER[dimension]
        at = len(fired)
        for i, other in enumerate(fired):
            if other.dimension is dimension:
                if other.level is Level.TERM or level is Level.WARN:
                    return
                del fired[i]
                at = i
                break
            if _DIMENSION_ORDER[other.dimension] > order:
                at = i
                break
        explanation = f"{text} ({level.value} threshold {threshold})"
        signal = self._signal(
            dimension,
            level,
            count,
            threshold,
            tool,
            kind,
            step,
            None,
            unit=unit,
            explanation=explanation,
        )
        fired.insert(at, signal)  # keeps the table order the ladder escalates in

    def _fire(
        self,
        fired: list[Signal],
        dimension: Dimension,
        level: Level,
        count: int,
        warn: int,
        term: int,
        tool: str | None,
        kind: ToolKind | None,
        step: int | None,
        *,
        unit: tuple[str, ...] = (),
        model_turn: int | None = None,
    ) -> None:
        """A gate crossed: append the signal unless the dimension is disabled."""
        if dimension in self.detector.disabled:
            return
        fired.append(
            self._signal(
                dimension,
                level,
                count,
                term if level is Level.TERM else warn,
                tool,
                kind,
                step,
                model_turn,
                unit=unit,
            )
        )

    def _signal(
        self,
        dimension: Dimension,
        level: Level,
        streak: int,
        threshold: int,
        tool: str | None,
        kind: ToolKind | None,
        step: int | None,
        model_turn: int | None,
        *,
        unit: tuple[str, ...] = (),
        explanation: str | None = None,
    ) -> Signal:
        cycle = self._cycle_class(dimension)
        return Signal(
            dimension=dimension,
            level=level,
            session=self.key,
            streak=streak,
            threshold=threshold,
            profile=self.profile_name,
            tool=tool,
            category=kind.category if kind is not None else None,
            step=step,
            model_turn_index=model_turn,
            cycle_class=cycle,
            break_strategy=_STRATEGY[cycle],
            explanation=explanation or _explain(dimension, level, streak, threshold, tool, unit),
            evidence=self._evidence(self.detector.config.evidence_size) if step is not None else (),
            unit=unit,
            agent=self.agent,
        )

    def _cycle_class(self, dimension: Dimension) -> CycleClass:
        text_warn = self.profile.text_loop.warn
        if dimension is Dimension.TEXT_LOOP:
            return (
                CycleClass.MIXED_CYCLE
                if self._identical.count >= self.profile.identical_call.warn
                or self._pattern.gate.fired
                else CycleClass.REASONING_CYCLE
            )
        if dimension is Dimension.STATE_HASH:
            return CycleClass.MIXED_CYCLE
        if self._text.count >= text_warn:
            return CycleClass.MIXED_CYCLE
        return CycleClass.TOOL_CYCLE

    # -- persistence (the OTLP service's restart state) -----------------------------------

    _STATE_DIMENSIONS = (
        "_identical",
        "_category",
        "_pattern",
        "_poll",
        "_error",
        "_text",
        "_state",
        "_budget",
        "_rules",
    )
    # Derived from configuration, never saved: a restart takes them from the current config.
    _CONFIG_SLOTS = frozenset({"patterns", "scan_chars", "skip_tools", "max_period"})

    def to_state(self) -> dict:
        """This session's counters and hashes as plain JSON-compatible data (no raw content).

        Restore it with :meth:`restore_state` on a fresh session of the same key.
        """
        dims = {}
        for attr in self._STATE_DIMENSIONS:
            obj = getattr(self, attr)
            dims[attr] = {
                slot: _encode_state(getattr(obj, slot))
                for slot in _all_slots(type(obj))
                if slot not in self._CONFIG_SLOTS and hasattr(obj, slot)
            }
        return {
            "v": 1,
            "profile": self.profile_name,
            "max_period": self._pattern.max_period,
            "tool_calls": self.tool_calls,
            "model_turns": self.model_turns,
            "evidence": {
                "tools": list(self._evidence_tools),
                "args": self._recent[0::3].tolist(),
                "results": [
                    v
                    for i in range(len(self._evidence_tools))
                    for v in self._recent[3 * i + 1 : 3 * i + 3]
                ],
            },
            "dimensions": dims,
        }

    def restore_state(self, state: dict) -> None:
        """Load what :meth:`to_state` saved. A dimension whose saved shape no longer fits the
        current configuration (another ``max_period`` or state window) starts fresh."""
        if not isinstance(state, dict) or state.get("v") != 1:
            raise ValueError("unknown session state format")
        self.tool_calls = int(state["tool_calls"])
        self.model_turns = int(state["model_turns"])
        evidence = state.get("evidence") or {}
        tools = evidence.get("tools") or []
        if len(tools) == len(self._evidence_tools):
            self._evidence_tools = [str(t) for t in tools]
            args, results = evidence["args"], evidence["results"]
            self._recent = array(
                "Q",
                [
                    v
                    for i, key in enumerate(args)
                    for v in (key, results[2 * i], results[2 * i + 1])
                ],
            )
        window = self.profile.state_hash.window
        for attr, slots in (state.get("dimensions") or {}).items():
            if attr not in self._STATE_DIMENSIONS:
                continue
            if attr == "_pattern" and state.get("max_period") != self._pattern.max_period:
                continue
            ring = slots.get("ring") if attr == "_state" else None
            if ring is not None and len(_decode_state(ring)) != window:
                continue
            obj = getattr(self, attr)
            for slot, value in slots.items():
                if slot in _all_slots(type(obj)) and slot not in self._CONFIG_SLOTS:
                    setattr(obj, slot, _decode_state(value))


@functools.cache
def _all_slots(cls: type) -> frozenset[str]:
    """Every slot of a class, its bases' included (a dimension's gate state lives in Gate)."""
    return frozenset(slot for klass in cls.__mro__ for slot in getattr(klass, "__slots__", ()))


def _normalise_words(text: str) -> list[str]:
    return [w for w in _WORD_SPLIT.split(text.lower()) if w]


def _int(value: object) -> int:
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):  # None, "n/a", inf, nan
        return 0


def _budget_text(metric: str, value: int, limit: int) -> str:
    return f"budget: {metric.replace('_', ' ')} at {value} of a limit of {limit}"


def _explain(
    dimension: Dimension,
    level: Level,
    streak: int,
    threshold: int,
    tool: str | None,
    unit: tuple[str, ...],
) -> str:
    what = {
        Dimension.IDENTICAL_CALL: f"{tool} was called {streak} times in a row with the same "
        "arguments and got the same result",
        Dimension.CATEGORY_STREAK: f"{streak} calls in a row of the same category (last: {tool}) "
        "without switching approach",
        Dimension.TOOL_PATTERN: f"the sequence {' -> '.join(unit) or tool} repeated {streak} times",
        Dimension.POLL_NO_PROGRESS: f"{tool} was polled {streak} times, its result never changed",
        Dimension.ERROR_STREAK: f"{streak} failures in a row (last: {tool})",
        Dimension.TEXT_LOOP: f"the model said (nearly) the same thing {streak} turns in a row",
        Dimension.STATE_HASH: f"the agent returned to the same state {streak} times",
        Dimension.BUDGET: "budget exceeded",
    }[dimension]
    return f"{what} ({level.value} threshold {threshold})"


def _encode_state(value: object) -> object:
    """Dimension state to JSON-compatible data, tagging what JSON cannot say."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, array):
        return {"$array": value.typecode, "items": value.tolist()}
    if isinstance(value, Gate):
        return {"$gate": value.fired}
    if isinstance(value, tuple):
        return {"$tuple": [_encode_state(v) for v in value]}
    if isinstance(value, list):
        return [_encode_state(v) for v in value]
    if isinstance(value, dict):
        return {"$dict": [[_encode_state(k), _encode_state(v)] for k, v in value.items()]}
    raise TypeError(f"cannot save {type(value).__name__} in session state")


def _decode_state(value: object) -> object:
    """The inverse of :func:`_encode_state`."""
    if isinstance(value, list):
        return [_decode_state(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$array" in value:
        return array(value["$array"], value["items"])
    if "$gate" in value:
        gate = Gate()
        gate.fired = int(value["$gate"])
        return gate
    if "$tuple" in value:
        return tuple(_decode_state(v) for v in value["$tuple"])
    if "$dict" in value:
        return {_decode_state(k): _decode_state(v) for k, v in value["$dict"]}
    raise ValueError(f"unknown session state value {value!r:.60}")
