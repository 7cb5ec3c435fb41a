"""Per-session detection: feeds tool calls and model turns through the dimensions.

:class:`Detector` holds what is shared (configuration, normaliser, categoriser, and per
profile the dimensions with the layout of a session's state); :class:`SessionDetector` holds
one session's constant-size state. Raw arguments, results and texts are hashed on arrival and
dropped.
"""

from __future__ import annotations

import functools
import re
from array import array

from otel_cycleguard import _core
from otel_cycleguard.detect.categories import Categorizer, ToolKind
from otel_cycleguard.detect.dimensions import (
    Budget,
    CallRing,
    CategoryStreak,
    ErrorStreak,
    Gate,
    IdenticalCall,
    Layout,
    PollNoProgress,
    StateRevisit,
    TextLoop,
    ToolPattern,
    shingle_sketch,
)
from otel_cycleguard.detect.normalize import Normalizer, hash_bytes, hex_digest
from otel_cycleguard.detect.records import ModelTurn, ToolCall
from otel_cycleguard.detect.rules import (
    REFINED_KINDS,
    RealWorldRules,
    failure_fold,
    refine_failure,
)
from otel_cycleguard.detect.settings import (
    DetectorSettings,
    ProfileSettings,
    SupportsDetectorSettings,
)
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

    def __init__(self, settings: DetectorSettings | SupportsDetectorSettings) -> None:
        if not isinstance(settings, DetectorSettings):
            settings = settings.detector_settings()
        self.settings = settings
        self.normalizer = Normalizer(
            self.settings.mask_patterns,
            mask_defaults=self.settings.mask_defaults,
            result_fields=self.settings.result_fields,
        )
        self.categorizer = Categorizer(
            self.settings.extra_categories, self.settings.read_only_tools, self.settings.poll_tools
        )
        self.progress_aware = frozenset(t.lower() for t in self.settings.progress_aware_tools)
        self.disabled = frozenset(Dimension(d) for d in self.settings.disabled_dimensions)
        self._name_hashes: dict[str, int] = {}
        self._plans: dict[str, _Plan] = {}

    def session(
        self, key: str, *, agent: str | None = None, subagent: bool = False
    ) -> SessionDetector:
        """A fresh detector for one session, with the profile its agent name calls for."""
        name, profile = self.settings.profile_for(agent, subagent=subagent)
        plan = self._plans.get(name)
        if plan is None:
            plan = self._plans[name] = _Plan(self, name, profile)
        return SessionDetector(plan, key, agent)

    def name_hash(self, tool: str) -> int:
        value = self._name_hashes.get(tool)
        if value is None:
            if len(self._name_hashes) >= _NAME_CACHE_LIMIT:
                self._name_hashes.clear()
            value = self._name_hashes[tool] = hash_bytes(tool.encode("utf-8", "replace"))
        return value


class _Plan:
    """What every session of one profile shares: the dimensions (configuration and the offsets
    of their words) and the layout of a session's state array. Built once per profile, so a
    session holds no per-session copy of any of it."""

    __slots__ = (
        "_traits",
        "category",
        "detector",
        "error",
        "evidence",
        "identical",
        "layout",
        "name",
        "pattern",
        "poll",
        "profile",
        "ring",
        "rules",
    )

    def __init__(self, detector: Detector, name: str, profile: ProfileSettings) -> None:
        self.detector = detector
        self.name = name
        self.profile = profile
        # Evidence and units show at most this many recent calls (as before the shared ring).
        self.evidence = max(detector.settings.evidence_size, profile.tool_pattern.max_period)
        replay = profile.replay_cycle
        size = max(self.evidence, replay.max_gap + 1 if replay.enabled else 0)
        layout = self.layout = Layout()
        ring = self.ring = CallRing(layout, size)
        self.identical = IdenticalCall(layout, ring)
        self.category = CategoryStreak(layout)
        self.pattern = ToolPattern(layout, ring, profile.tool_pattern.max_period)
        self.poll = PollNoProgress()
        self.error = ErrorStreak(layout, profile.error_streak)
        self.rules = RealWorldRules(layout, ring)
        self._traits: dict[tuple[str, str, str, str, bool], _Traits] = {}

    def traits(self, tool: str, kind: ToolKind) -> _Traits:
        """What category_streak needs of a call that depends only on its tool and kind: the
        name hashes, whether the tool is progress-aware, the thresholds. Memoised (bounded):
        working them out on every call cost more than the rest of category_streak."""
        key = (tool, kind.canonical, kind.category, kind.override_key, kind.known)
        traits = self._traits.get(key)
        if traits is None:
            det = self.detector
            progress_aware = (
                kind.canonical in det.progress_aware or tool.lower() in det.progress_aware
            )
            warn, term = _category_thresholds(self.profile, tool, kind)
            if len(self._traits) >= _NAME_CACHE_LIMIT:
                self._traits.clear()
            traits = self._traits[key] = (
                det.name_hash(kind.category),
                det.name_hash(tool) if progress_aware else 0,
                progress_aware,
                warn,
                term,
            )
        return traits


# (category name hash, tool name hash or 0, progress-aware, warn, term): see _Plan.traits
_Traits = tuple[int, int, bool, int, int]


# A term threshold no streak reaches: an unknown tool's category is a guess, and a guess is
# no evidence (it may warn, never terminate).
_NEVER = 1 << 62


def _category_thresholds(profile: ProfileSettings, tool: str, kind: ToolKind) -> tuple[int, int]:
    cfg = profile.category_streak
    overrides = cfg.tool_overrides
    if overrides:
        th = overrides.get(tool) or overrides.get(tool.lower()) or overrides.get(kind.override_key)
        if th is not None:
            return th.warn, th.term
    th = cfg.exploration if kind.category == "exploration" else cfg.action
    return th.warn, th.term if kind.known else _NEVER


class SessionDetector:
    """One session's loop state. Not thread-safe: callers serialise access per session.

    A service keeps thousands of sessions, most of them idle, so the state is laid out for
    memory: one array of words for the dimensions every call touches (see :class:`Layout`),
    the recent tool names, and objects created only once the session needs them (the poll,
    failure and recent-failure tables; the text, state and budget dimensions).
    """

    __slots__ = (
        "_budget",
        "_failures",
        "_plan",
        "_polls",
        "_recur",
        "_revisits",
        "_same",
        "_text",
        "_tools",
        "_words",
        "agent",
        "key",
        "model_turns",
        "tool_calls",
    )

    def __init__(self, plan: _Plan, key: str, agent: str | None) -> None:
        self._plan = plan
        self.key = key
        self.agent = agent
        self.tool_calls = 0
        self.model_turns = 0
        self._words = plan.layout.new_state()
        self._tools: list[str] = [""] * plan.ring.size  # beside the call ring's hashes
        self._failures: list | None = None  # error_streak's per-tool table
        self._polls: list | None = None  # poll_no_progress's per-tool table
        self._recur: array | None = None  # recurring_failure's recent failures
        self._same: array | None = None  # same_error's recent failures
        self._text: TextLoop | None = None
        self._revisits: StateRevisit | None = None
        self._budget: Budget | None = None

    @property
    def detector(self) -> Detector:
        return self._plan.detector

    @property
    def profile(self) -> ProfileSettings:
        return self._plan.profile

    @property
    def profile_name(self) -> str:
        return self._plan.name

    # -- observations -------------------------------------------------------------------

    def observe_tool_call(self, call: ToolCall) -> list[Signal]:
        """Feed one finished tool call; returns the signals it fired (at most one per dimension)."""
        plan = self._plan
        det = plan.detector
        profile = plan.profile
        words = self._words
        tool = call.tool if isinstance(call.tool, str) and call.tool else "unknown"
        step = self.tool_calls
        self.tool_calls += 1
        kind = det.categorizer.classify(tool, call.arguments, call.read_only)
        key, canonical_args = det.normalizer.call_key(tool, call.arguments)
        result_text = det.normalizer.result_text(tool, call.result)
        result = det.normalizer.text_hash(result_text)
        error = plan.error
        if call.result is None:
            result_text = None
        failed = error.is_failure(tool, bool(call.error), result_text)
        if result_text is not None and kind.canonical in REFINED_KINDS:
            failed = refine_failure(
                tool, kind.canonical, call.arguments, result_text, failed, profile.error_streak
            )
        self._remember(step, tool, key, result, failed)
        rules = plan.rules
        # Only a failure's output is folded (masked, digits dropped): staleness is about
        # failures, and most calls do not fail.
        fold = (
            failure_fold(det.normalizer.mask(result_text[:2048])) if failed and result_text else 1
        )
        rules.note_failure_output(words, failed, fold)

        fired: list[Signal] = []
        disabled = det.disabled

        # Each dimension: count, then its gate; a signal is built only on a crossing.
        identical = plan.identical
        identical_count = count = identical.observe(words, step, key, result, kind.is_poll)
        th = profile.identical_call
        level = identical.check(words, count, th.warn, th.term)
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

        category_hash, tool_hash, progress_aware, warn, term = plan.traits(tool, kind)
        category = plan.category
        count = category.observe(words, category_hash, tool_hash, key, progress_aware)
        level = category.check(words, count, warn, term)
        if level is not None:
            self._fire(fired, Dimension.CATEGORY_STREAK, level, count, warn, term, tool, kind, step)

        pattern = plan.pattern
        count, period = pattern.observe(words, self._tools, step, key, tool)
        th = profile.tool_pattern
        level = pattern.check(words, count, th.warn, th.term)
        if level is not None:
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
            th = profile.poll_no_progress
            count, level, self._polls = plan.poll.observe(
                self._polls, tool, result, th.warn, th.term
            )
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

        count, self._failures = error.observe(words, self._failures, tool, failed)
        self._check_error_streak(fired, count, tool, kind, step, None)

        hits, self._recur, self._same = rules.observe(
            words,
            self._recur,
            self._same,
            profile,
            step,
            tool,
            kind,
            key,
            result,
            call.arguments,
            canonical_args,
            failed,
            identical_count,
            self._recent_tools,
        )
        for dimension, level, count, threshold, unit, text, rule in hits:
            self._emit_rule(
                fired, dimension, level, count, threshold, tool, kind, step, unit, text, rule
            )

        if call.state_fingerprint:
            self._observe_state(fired, call.state_fingerprint, tool, kind, step, None)

        budget = profile.budget
        tracker = self._budget
        if tracker is None:
            if not budget.enabled:
                return fired  # (what _budget_tracker(0) says, without the call)
            tracker = self._budget = Budget()
        crossed = tracker.observe(
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
        plan = self._plan
        det = plan.detector
        index = self.model_turns
        self.model_turns += 1
        fired: list[Signal] = []
        text = turn.text if isinstance(turn.text, str) else None
        if text and text.strip():
            th = plan.profile.text_loop
            digest = _text_digest(det.normalizer, text[:65536], th.shingle_size)
            if digest is not None:
                exact, sketch = digest
                loop = self._text
                if loop is None:
                    loop = self._text = TextLoop()
                count = loop.observe(exact, sketch, th)
                level = loop.check(count, th.warn, th.term)
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
        if turn.error:
            # A rejected or failed turn is a failure of the run: it extends the error streak
            # (a successful turn does not break it: only a call that works does), and the
            # same rejection again is a stale failure (masked, digits dropped).
            error_text = turn.error_text if isinstance(turn.error_text, str) else ""
            plan.rules.note_failure_output(
                self._words, True, failure_fold(det.normalizer.mask(error_text[:2048]))
            )
            count = plan.error.observe_turn(self._words, self._failures)
            self._check_error_streak(fired, count, None, None, None, index)
        if turn.state_fingerprint:
            self._observe_state(fired, turn.state_fingerprint, None, None, None, index)
        tokens = _int(turn.input_tokens) + _int(turn.output_tokens)
        tracker = self._budget_tracker(tokens)
        if tracker is None:
            return fired
        crossed = tracker.observe(
            plan.profile.budget,
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
        plan, words = self._plan, self._words
        if dimension is Dimension.IDENTICAL_CALL:
            plan.identical.reset(words)
            self._recur = None
        elif dimension is Dimension.CATEGORY_STREAK:
            plan.category.reset(words)
        elif dimension is Dimension.TOOL_PATTERN:
            plan.pattern.reset(words)
        elif dimension is Dimension.POLL_NO_PROGRESS:
            plan.poll.reset(self._polls)
        elif dimension is Dimension.ERROR_STREAK:
            plan.error.reset(words)
            self._failures = None
            self._same = None
        elif dimension is Dimension.TEXT_LOOP:
            self._text = None  # what a reset leaves: the next turn counts 1, nothing fired
        elif dimension is Dimension.STATE_HASH:
            self._revisits = None  # likewise: a reset forgets every state
        elif dimension is Dimension.BUDGET and self._budget is not None:
            self._budget.reset()  # keeps the time of the last call (idle time)
        plan.rules.reset(words, dimension)

    def counters(self) -> dict[str, int]:
        """The current count of every dimension (for saved progress and debugging)."""
        plan, words = self._plan, self._words
        return {
            "tool_calls": self.tool_calls,
            "model_turns": self.model_turns,
            Dimension.IDENTICAL_CALL.value: words[plan.identical.count],
            Dimension.CATEGORY_STREAK.value: words[plan.category.count],
            Dimension.TOOL_PATTERN.value: words[plan.pattern.count],
            Dimension.POLL_NO_PROGRESS.value: plan.poll.longest(self._polls),
            Dimension.ERROR_STREAK.value: max(
                words[plan.error.count], plan.error.longest(self._failures)
            ),
            Dimension.TEXT_LOOP.value: self._text.count if self._text else 0,
            Dimension.STATE_HASH.value: self._revisits.count if self._revisits else 0,
            "tokens": self._budget.tokens if self._budget else 0,
        }

    # -- helpers --------------------------------------------------------------------------

    def _check_error_streak(
        self,
        fired: list[Signal],
        count: int,
        tool: str | None,
        kind: ToolKind | None,
        step: int | None,
        turn: int | None,
    ) -> None:
        """The error streak's gate. TERM needs evidence of no progress: failures that keep
        telling the agent something new (a new error each time) are exploration, so the
        count stops short of TERM until half of the streak repeats earlier failures."""
        plan, words = self._plan, self._words
        th = self._plan.profile.error_streak
        if count >= th.term and not plan.rules.no_new_information(words, count, count):
            count = th.term - 1
        level = plan.error.check(words, count, th.warn, th.term)
        if level is not None:
            self._fire(
                fired,
                Dimension.ERROR_STREAK,
                level,
                count,
                th.warn,
                th.term,
                tool,
                kind,
                step,
                model_turn=turn,
            )

    def _budget_tracker(self, tokens: int) -> Budget | None:
        """The budget's counters, created once they matter: the budget is enabled, or tokens
        were used (the ``tokens`` counter). A disabled budget otherwise fires nothing."""
        tracker = self._budget
        if tracker is None and (self._plan.profile.budget.enabled or tokens > 0):
            tracker = self._budget = Budget()
        return tracker

    def _observe_state(
        self,
        fired: list[Signal],
        fingerprint: str,
        tool: str | None,
        kind: ToolKind | None,
        step: int | None,
        turn: int | None,
    ) -> None:
        th = self._plan.profile.state_hash
        value = hash_bytes(str(fingerprint).encode("utf-8", "replace"))
        revisits = self._revisits
        if revisits is None:
            revisits = self._revisits = StateRevisit()
        count = revisits.observe(value, th)
        level = revisits.check(count, th.warn, th.term)
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
        self._plan.ring.put(self._words, step, key, result, failed)
        self._tools[step % len(self._tools)] = tool

    def _recent_steps(self, count: int) -> range:
        """The steps of the last ``count`` calls that evidence and units may show."""
        count = min(count, self._plan.evidence, self.tool_calls)
        return range(self.tool_calls - count, self.tool_calls)

    def _evidence(self, count: int) -> tuple[CallDigest, ...]:
        ring, words, tools = self._plan.ring, self._words, self._tools
        out = []
        for step in self._recent_steps(count):
            at = ring.at(step)
            out.append(
                CallDigest(
                    tools[step % ring.size],
                    hex_digest(words[at]),
                    hex_digest(words[at + 1]),
                    bool(words[at + 2] & CallRing.FAILED),
                )
            )
        return tuple(out)

    def _recent_tools(self, count: int) -> tuple[str, ...]:
        tools, size = self._tools, len(self._tools)
        return tuple(tools[step % size] for step in self._recent_steps(count))

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
        rule: str,
    ) -> None:
        """A rule's crossing (rules.py), reported under its dimension: at most one signal
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
            rule=rule,
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
        rule: str = "",
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
            evidence=self._evidence(self.detector.settings.evidence_size)
            if step is not None
            else (),
            unit=unit,
            agent=self.agent,
            rule=rule or dimension.value,
        )

    def _cycle_class(self, dimension: Dimension) -> CycleClass:
        plan = self._plan
        if dimension is Dimension.TEXT_LOOP:
            return (
                CycleClass.MIXED_CYCLE
                if self._words[plan.identical.count] >= plan.profile.identical_call.warn
                or plan.pattern.fired(self._words)
                else CycleClass.REASONING_CYCLE
            )
        if dimension is Dimension.STATE_HASH:
            return CycleClass.MIXED_CYCLE
        if self._text is not None and self._text.count >= plan.profile.text_loop.warn:
            return CycleClass.MIXED_CYCLE
        return CycleClass.TOOL_CYCLE

    # -- persistence (the OTLP service's restart state) -----------------------------------

    def to_state(self) -> dict:
        """This session's counters and hashes as plain JSON-compatible data (no raw content).

        Restore it with :meth:`restore_state` on a fresh session of the same key.
        """
        plan, words = self._plan, self._words
        ring = plan.ring
        steps = range(self.tool_calls - min(self.tool_calls, ring.size), self.tool_calls)
        objects = {
            name: {slot: _encode_state(getattr(obj, slot)) for slot in _all_slots(type(obj))}
            for name, obj in (
                ("text", self._text),
                ("state", self._revisits),
                ("budget", self._budget),
            )
            if obj is not None
        }
        return {
            "v": 2,
            "profile": plan.name,
            "tool_calls": self.tool_calls,
            "model_turns": self.model_turns,
            "calls": {  # the call ring, oldest call first
                "tools": [self._tools[step % ring.size] for step in steps],
                "words": [words[ring.at(step) + i] for step in steps for i in range(3)],
                # the replay bits of a call's info word hold for this max_gap only
                "max_gap": plan.profile.replay_cycle.max_gap,
            },
            "words": plan.layout.save(words),
            "failures": self._failures,
            "polls": self._polls,
            "recur": self._recur.tolist() if self._recur is not None else None,
            "same": self._same.tolist() if self._same is not None else None,
            "objects": objects,
        }

    def restore_state(self, state: dict) -> None:
        """Load what :meth:`to_state` saved. What no longer fits the current configuration
        (another ``max_period``, state window or ``max_gap``) starts fresh."""
        if not isinstance(state, dict) or state.get("v") != 2:
            raise ValueError("unknown session state format")
        plan, words = self._plan, self._words
        ring = plan.ring
        self.tool_calls = int(state["tool_calls"])
        self.model_turns = int(state["model_turns"])
        calls = state.get("calls") or {}
        tools, saved = calls.get("tools") or [], calls.get("words") or []
        if len(saved) != 3 * len(tools):
            raise ValueError("inconsistent call ring in session state")
        replay_bits = calls.get("max_gap") == plan.profile.replay_cycle.max_gap
        first = self.tool_calls - len(tools)
        for i in range(max(0, len(tools) - ring.size), len(tools)):  # the newest that fit
            step = first + i
            at = ring.at(step)
            key, result, info = (int(v) for v in saved[3 * i : 3 * i + 3])
            words[at], words[at + 1] = key, result
            words[at + 2] = info if replay_bits else info & CallRing.FAILED
            self._tools[step % ring.size] = str(tools[i])
        plan.layout.load(words, state.get("words") or {})
        self._failures = list(state["failures"]) if state.get("failures") else None
        self._polls = list(state["polls"]) if state.get("polls") else None
        self._recur = array("Q", state["recur"]) if state.get("recur") else None
        self._same = array("Q", state["same"]) if state.get("same") else None
        objects = state.get("objects") or {}
        window = plan.profile.state_hash.window
        for name, attr, cls in (
            ("text", "_text", TextLoop),
            ("state", "_revisits", StateRevisit),
            ("budget", "_budget", Budget),
        ):
            slots = objects.get(name)
            if not isinstance(slots, dict):
                continue
            if name == "state" and len(_decode_state(slots.get("ring")) or ()) != window:
                continue  # another window: the states start over
            obj = cls()
            for slot, value in slots.items():
                if slot in _all_slots(cls):
                    setattr(obj, slot, _decode_state(value))
            setattr(self, attr, obj)


@functools.cache
def _all_slots(cls: type) -> frozenset[str]:
    """Every slot of a class, its bases' included (a dimension's gate state lives in Gate)."""
    return frozenset(slot for klass in cls.__mro__ for slot in getattr(klass, "__slots__", ()))


def _normalise_words(text: str) -> list[str]:
    return [w for w in _WORD_SPLIT.split(text.lower()) if w]


def _text_digest(
    normalizer: Normalizer, text: str, shingle_size: int
) -> tuple[int, tuple[int, ...]] | None:
    """``text_loop``'s view of a turn's text: (hash of its normalised words, sketch of their
    shingles), or None when it has no word. ASCII text with the default masks goes through the
    compiled core in one crossing (rust/cycleguard-core/src/text.rs); other text here."""
    if normalizer.fast_masks and text.isascii():
        return _core.text_digest_ascii(text, shingle_size, TextLoop.SKETCH_SIZE)
    words = _normalise_words(normalizer.mask(text))
    if not words:
        return None
    exact = hash_bytes(" ".join(words).encode("utf-8", "replace"))
    return exact, shingle_sketch(words, shingle_size, hash_bytes)


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
