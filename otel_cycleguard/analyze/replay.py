"""Replay exported spans through the live engine, offline: sessions, signals, escalations, waste.

The same pieces the span processor uses do the work here: :mod:`otel_cycleguard.conventions`
reads tool calls and model turns out of spans, a :class:`~otel_cycleguard.guard.CycleGuard`
detects, and an :class:`~otel_cycleguard.escalate.ladder.EscalationLadder` per session decides
what each TERM leads to. Only the human is simulated (``hitl``):

- ``"timeout"`` (the default): nobody answers, so the second TERM in a dimension terminates the
  run (fail-closed, docs/detection.md). Spans of a terminated session are counted but no longer detected
  on: the run would have stopped there.
- ``"continue"``: the human always says continue; the dimension is reset and the run goes on.

Sessions are found by the rule the live processor applies as spans start
(:func:`otel_cycleguard.span_scope.child_scope`), here parents first over each trace:
``gen_ai.conversation.id`` / ``session.id`` / Traceloop association properties on the span or
inherited from an ancestor; an agent span under a tool span starts a child session
``<parent>/sub:<span id>`` with the ``subagent`` profile, while an agent span directly inside
another (a framework wrapper) continues it; spans with no session at all are grouped by trace
id (``keyed_by: trace_id``). ``tests/analyze/test_live_offline_sessions.py`` holds live and
offline to the same sessions.

Streaming and memory: spans are buffered per trace id and a trace is replayed ("flushed") when
the input moves past it, that is at the end of a JSON document (a line of a JSON-lines file)
once the trace's root span (a span without a parent) has been seen. The Collector file exporter
and the corpus write complete traces per line; a trace whose spans are spread over several
lines waits until its root arrives. Traces whose root never arrives (the root lives in another
service) are flushed after ``idle_documents`` documents without a new span, and at the end of
the input. At most ``max_spans_in_flight`` spans are buffered: past that, the oldest trace is
flushed early. Per-session state is the guard's (bounded by ``max_sessions``) plus the report
being built (a few numbers and the signals per session).

Parallel replay (``analyze_paths(jobs=N)``, ``cycleguard analyze --jobs N``): sessions are
independent, so N processes each read and resolve the whole input (reading is the cheap part)
and replay only the sessions :func:`session_part` gives them; the reports are merged in the
single-process order. Each process holds its own buffers, so memory grows N-fold.
"""

from __future__ import annotations

import gc
import multiprocessing
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from otel_cycleguard.analyze.problems import InputProblem
from otel_cycleguard.analyze.readers import TraceReader
from otel_cycleguard.analyze.report import (
    MAX_PROBLEMS_LISTED,
    Analysis,
    EscalationRecord,
    SessionReport,
    SignalRecord,
    Step,
    TerminatedAt,
)
from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.conventions import SpanRole
from otel_cycleguard.detect.records import ModelTurn, ToolCall
from otel_cycleguard.detect.signals import Level, Signal
from otel_cycleguard.escalate.decisions import Decision, HumanDecision
from otel_cycleguard.escalate.ladder import EscalationLadder
from otel_cycleguard.escalate.policy import (
    Action,
    AskHuman,
    ResetDimension,
    Terminate,
    decide,
    on_decision,
)
from otel_cycleguard.escalate.progress import TerminationReason
from otel_cycleguard.guard import CycleGuard
from otel_cycleguard.pipeline import Scope, SpanPipeline, order_trace
from otel_cycleguard.spans import SpanData

__all__ = ["HITL_MODES", "HitlMode", "Replayer", "analyze_paths", "replay_spans", "session_part"]

#: Called every ``PROGRESS_EVERY`` spans with (spans read, sessions so far).
ProgressCallback = Callable[[int, int], None]
PROGRESS_EVERY = 4096

HitlMode = Literal["timeout", "continue"]
HITL_MODES: tuple[str, ...] = ("timeout", "continue")

_TOOL = SpanRole.TOOL
_MODEL = SpanRole.MODEL


@dataclass(slots=True)
class _Trace:
    """A trace's buffered spans."""

    spans: list[SpanData] = field(default_factory=list)
    has_root: bool = False
    last_document: int = 0


class _SessionState:
    """One session's replay state: the report being built and the escalation ladder."""

    __slots__ = ("first_term", "ladder", "last_trace", "report")

    def __init__(self, report: SessionReport, break_window: int | None) -> None:
        self.report = report
        self.ladder = EscalationLadder(break_window=break_window)
        self.first_term: tuple[int, int] | None = None  # (sequence number, end ns)
        self.last_trace = ""


class Replayer:
    """Feed spans (``add``), mark document ends (``end_document``), then ``finish``.

    ``keep_steps`` keeps one small :class:`Step` per tool call and model turn for timelines
    (the HTML report); without it only counts, signals and escalations are kept.
    """

    def __init__(
        self,
        config: CycleGuardConfig | None = None,
        *,
        hitl: HitlMode = "timeout",
        keep_steps: bool = False,
        max_spans_in_flight: int = 200_000,
        idle_documents: int = 256,
        part: tuple[int, int] = (0, 1),
    ) -> None:
        if hitl not in HITL_MODES:
            raise ValueError(f"hitl must be one of {', '.join(HITL_MODES)}, got {hitl!r}")
        if max_spans_in_flight < 1:
            raise ValueError(f"max_spans_in_flight must be >= 1, got {max_spans_in_flight}")
        if not 0 <= part[0] < part[1]:
            raise ValueError(f"part must be (index, count) with 0 <= index < count, got {part}")
        self.config = config if config is not None else CycleGuardConfig()
        # A constant clock: sessions never expire by idle time during a replay (the LRU bound
        # on max_sessions still holds).
        self.guard = CycleGuard(self.config, clock=lambda: 0.0)
        # classify → derive → record → guard, as live; a terminated session is no longer
        # detected on, and each record goes to the report being built.
        self.pipeline = SpanPipeline(
            self.guard, detecting=self._detecting, on_record=self._record_step
        )
        self.derived = self.pipeline.derived
        self.hitl: HitlMode = hitl
        # The simulated human: always continues, or never answers (fail-closed).
        self._human = (
            HumanDecision(Decision.CONTINUE, detail="simulated: continue")
            if hitl == "continue"
            else HumanDecision(Decision.TIMEOUT, detail="simulated: nobody answered")
        )
        self.keep_steps = keep_steps
        self.max_spans_in_flight = max_spans_in_flight
        self.idle_documents = idle_documents
        self._part, self._parts = part
        self._delegating = frozenset(t.lower() for t in self.config.delegating_tools)
        self._break_window = self.config.escalation.break_window
        self._traces: dict[str, _Trace] = {}
        self._trace_id = ""  # the trace being replayed (the report lists a session's traces)
        self._in_flight = 0
        self._document = 0
        self._sessions: dict[str, _SessionState] = {}
        # With parts, the sessions the other processes replay, so progress counts them all.
        self._others: set[str] = set()
        self.spans_seen = 0

    # -- input ------------------------------------------------------------------------------

    def add(self, span: SpanData) -> None:
        """Buffer one span until its trace is complete."""
        self.add_all((span,))

    def add_all(self, spans: Iterable[SpanData]) -> None:
        """Buffer each span, in order, until its trace is complete (one call per document)."""
        traces = self._traces
        document = self._document
        limit = self.max_spans_in_flight
        seen = 0
        try:
            for span in spans:
                seen += 1
                trace = traces.get(span.trace_id)
                if trace is None:
                    trace = traces[span.trace_id] = _Trace()
                trace.spans.append(span)
                trace.last_document = document
                if not span.parent_span_id:
                    trace.has_root = True
                self._in_flight += 1
                if self._in_flight > limit:
                    self._flush_oldest()
        finally:
            self.spans_seen += seen

    def end_document(self) -> None:
        """A document (a JSON line, a whole file) ended: replay the traces that are complete."""
        self._document += 1
        if not self._traces:
            return
        stale = self._document - self.idle_documents
        done = [
            trace_id
            for trace_id, trace in self._traces.items()
            if trace.has_root or trace.last_document <= stale
        ]
        for trace_id in done:
            self._flush(trace_id)

    def flush_all(self) -> None:
        """Replay everything still buffered (end of input)."""
        for trace_id in list(self._traces):
            self._flush(trace_id)

    @property
    def sessions_seen(self) -> int:
        """Sessions found so far, the other parts' included (for progress)."""
        return len(self._sessions) + len(self._others)

    def finish(self) -> list[SessionReport]:
        """Flush, and return the session reports, ordered by first activity then key."""
        self.flush_all()
        reports = [state.report for state in self._sessions.values()]
        reports.sort(key=_report_order)
        return reports

    # -- replay -----------------------------------------------------------------------------

    def _flush_oldest(self) -> None:
        self._flush(next(iter(self._traces)))

    def _flush(self, trace_id: str) -> None:
        trace = self._traces.pop(trace_id)
        self._in_flight -= len(trace.spans)
        self._replay_trace(trace_id, trace.spans)

    def _replay_trace(self, trace_id: str, spans: list[SpanData]) -> None:
        """Resolve each span's session like the live processor, then replay in start order
        (:func:`~otel_cycleguard.pipeline.order_trace`, in the core)."""
        process = self.pipeline.process
        parts = self._parts
        for role, span, scope in order_trace(spans, trace_id, self._delegating):
            if parts > 1 and session_part(scope.session, parts) != self._part:
                self._others.add(scope.session)
                continue  # another process replays this session
            self._trace_id = trace_id
            process(span, scope, None, role)

    def _state(
        self, session: str, trace_id: str, agent: str | None, subagent: bool, start_ns: int
    ) -> _SessionState:
        state = self._sessions.get(session)
        if state is None:
            profile, _ = self.config.profile_for(agent, subagent=subagent)
            report = SessionReport(
                session=session,
                agent=agent,
                profile=profile,
                subagent=subagent,
                keyed_by="trace_id" if session == trace_id else "session",
                first_start_ns=start_ns,
            )
            state = self._sessions[session] = _SessionState(report, self._break_window)
        if state.last_trace != trace_id:
            state.last_trace = trace_id
            if trace_id not in state.report.trace_ids:
                state.report.trace_ids.append(trace_id)
        if state.report.agent is None and agent:
            state.report.agent = agent
        return state

    def _detecting(self, session: str) -> bool:
        """A terminated run is no longer detected on: the live run would have stopped."""
        state = self._sessions.get(session)
        return state is None or state.report.terminated_at is None

    def _record_step(
        self,
        role: str,
        span: Any,
        scope: Scope,
        record: ToolCall | ModelTurn | None,
        tool: str | None,
        signals: list[Signal],
    ) -> None:
        """One record the pipeline read (after the guard): counts, steps, waste, escalation."""
        session = scope.session
        state = self._sessions.get(session)
        if (
            state is None
            or state.last_trace != self._trace_id
            or (scope.agent and state.report.agent is None)
        ):  # what ``_state`` would change: a new session, trace or agent name
            state = self._state(session, self._trace_id, scope.agent, scope.subagent, span.start_ns)
        report = state.report
        if span.end_ns > report.last_end_ns:
            report.last_end_ns = span.end_ns
        sequence = report.tool_calls + report.model_turns
        if role == _TOOL:
            index = report.tool_calls
            report.tool_calls += 1
            tokens = 0
            tool_index, turn_index = index, None
        else:
            index = report.model_turns
            report.model_turns += 1
            assert isinstance(record, ModelTurn)
            tokens = _tokens(record.input_tokens) + _tokens(record.output_tokens)
            tool_index, turn_index = None, index
        if self.keep_steps:
            report.steps.append(Step(tool, span.start_ns, span.end_ns, span.status_error))
        if state.first_term is not None:
            wasted = report.wasted
            if role == _TOOL:
                wasted.tool_calls += 1
            wasted.tokens += tokens
        if not signals:
            return
        self._escalate(state, span, signals, sequence, tool_index, turn_index)

    def _escalate(
        self,
        state: _SessionState,
        span: SpanData,
        signals: list[Signal],
        sequence: int,
        tool_index: int | None,
        turn_index: int | None,
    ) -> None:
        """Record the signals of one call and walk the ladder for each TERM, in table order."""
        report = state.report
        for signal in signals:
            report.signals.append(
                SignalRecord(
                    dimension=signal.dimension.value,
                    level=signal.level.value,
                    span_id=span.span_id,
                    tool=signal.tool,
                    tool_call_index=tool_index,
                    model_turn_index=turn_index,
                    streak=signal.streak,
                    threshold=signal.threshold,
                    explanation=signal.explanation,
                    sequence=sequence,
                    rule=signal.rule,
                )
            )
        for signal in signals:
            if signal.level is not Level.TERM:
                continue
            if state.first_term is None:
                state.first_term = (sequence, span.end_ns)
                report.first_term_end_ns = span.end_ns
            if report.terminated_at is not None:
                continue  # a later TERM on the call that terminated: recorded, not escalated
            at = (tool_index, turn_index, sequence)
            self._apply(state, signal, decide(signal, state.ladder), span, at)

    def _apply(
        self,
        state: _SessionState,
        signal: Signal,
        actions: list[Action],
        span: SpanData,
        at: tuple[int | None, int | None, int],
    ) -> None:
        """Execute the policy's actions on the report: the simulated human answers at once."""
        report = state.report
        dimension = signal.dimension.value
        for action in actions:
            if isinstance(action, ResetDimension):
                if action.self_heal:
                    self._record(report, "self_heal", dimension, span, *at)
                self.guard.reset(report.session, action.dimension)
            elif isinstance(action, AskHuman):
                self._record(report, "hitl", dimension, span, *at)
                self._apply(state, signal, on_decision(signal, self._human, state.ladder), span, at)
            elif isinstance(action, Terminate):
                self._record(report, "terminate", dimension, span, *at)
                tool_index, turn_index, sequence = at
                report.terminated_at = TerminatedAt(
                    span_id=span.span_id,
                    tool_call_index=tool_index,
                    model_turn_index=turn_index,
                    reason=TerminationReason.for_dimension(signal.dimension).value,
                    dimension=dimension,
                    sequence=sequence,
                )
            # QueueMessage, Resume: nobody to tell offline

    @staticmethod
    def _record(
        report: SessionReport,
        stage: str,
        dimension: str,
        span: SpanData,
        tool_index: int | None,
        turn_index: int | None,
        sequence: int,
    ) -> None:
        report.escalations.append(
            EscalationRecord(
                stage=stage,
                dimension=dimension,
                span_id=span.span_id,
                tool_call_index=tool_index,
                model_turn_index=turn_index,
                sequence=sequence,
            )
        )


def _report_order(report: SessionReport) -> tuple[int, str]:
    """Sessions in a report: by first activity, then key (unique, so the order is total)."""
    return report.first_start_ns, report.session


def session_part(session: str, parts: int) -> int:
    """Which of ``parts`` processes replays ``session``: the same in every process (CRC-32 of
    the key; ``hash()`` of a str differs between processes)."""
    return zlib.crc32(session.encode("utf-8", "surrogatepass")) % parts


def _replay_part(
    paths: list[str],
    config: CycleGuardConfig | None,
    hitl: HitlMode,
    keep_steps: bool,
    max_spans_in_flight: int,
    part: tuple[int, int],
) -> tuple[list[SessionReport], dict[str, int]]:
    """One worker process of a parallel replay: the whole input, this part's sessions (and
    its missing-content notes)."""
    reader = TraceReader(paths, on_skip=lambda _problem: None)  # the parent reports problems
    replayer = Replayer(
        config,
        hitl=hitl,
        keep_steps=keep_steps,
        max_spans_in_flight=max_spans_in_flight,
        part=part,
    )
    _replay_documents(reader, replayer, None)
    return replayer.finish(), replayer.derived.notes


def _tokens(value: Any) -> int:
    if value.__class__ is int:  # what conventions give: the test below, without its cost
        return value if value > 0 else 0  # type: ignore[no-any-return]
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return int(value)
    return 0


def replay_spans(
    spans: Iterable[SpanData],
    config: CycleGuardConfig | None = None,
    *,
    hitl: HitlMode = "timeout",
    keep_steps: bool = False,
) -> Analysis:
    """Replay an iterable of spans (treated as one document) and return the analysis."""
    replayer = Replayer(config, hitl=hitl, keep_steps=keep_steps)
    for span in spans:
        replayer.add(span)
    return Analysis.build(replayer.finish(), replayer, spans_read=replayer.spans_seen)


def analyze_paths(
    paths: Sequence[str],
    config: CycleGuardConfig | None = None,
    *,
    hitl: HitlMode = "timeout",
    keep_steps: bool = False,
    on_skip: Callable[[InputProblem], None] | None = None,
    on_progress: ProgressCallback | None = None,
    max_spans_in_flight: int = 200_000,
    jobs: int = 1,
) -> Analysis:
    """Read trace files (see :class:`TraceReader`) and replay them: the ``analyze`` command.

    ``jobs`` > 1 replays with that many processes (this one included), each reading the whole
    input and replaying its share of the sessions; the result is the same as with one. Standard
    input (``-``) can be read only once, so it is always replayed by this process alone.

    Raises :class:`~otel_cycleguard.analyze.InputError` (missing path, unknown format of a file
    named explicitly). Skipped input goes to ``on_skip`` and is counted in the summary.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    parts = 1 if "-" in paths else jobs
    problems: list[InputProblem] = []

    def skipped(problem: InputProblem) -> None:
        if len(problems) < MAX_PROBLEMS_LISTED:
            problems.append(problem)
        if on_skip is not None:
            on_skip(problem)

    reader = TraceReader(paths, on_skip=skipped)
    replayer = Replayer(
        config,
        hitl=hitl,
        keep_steps=keep_steps,
        max_spans_in_flight=max_spans_in_flight,
        part=(0, parts),
    )
    if parts == 1:
        return _finish_analysis(reader, replayer, problems, on_progress, [])
    # "spawn": a fresh interpreter per worker, safe whatever threads this process runs
    with ProcessPoolExecutor(
        max_workers=parts - 1, mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        others = [
            pool.submit(
                _replay_part,
                list(paths),
                config,
                hitl,
                keep_steps,
                max_spans_in_flight,
                (index, parts),
            )
            for index in range(1, parts)
        ]
        try:
            return _finish_analysis(reader, replayer, problems, on_progress, others)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


#: Allocations between two young-generation collections while a replay runs (CPython's
#: default is 700). A replay allocates a few container objects per span (records, scopes,
#: tuples) that die young; collecting after every 700 of them cost 2-5 % of ``analyze``'s
#: time on the generated benchmark. Restored when the replay ends.
REPLAY_GC_THRESHOLD = 50_000


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Raise the young generation's collection threshold for a batch replay, then restore it
    (cycles are still collected, a few tens of thousands of allocations later)."""
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], REPLAY_GC_THRESHOLD), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)


def _replay_documents(
    reader: TraceReader, replayer: Replayer, on_progress: ProgressCallback | None
) -> None:
    """Feed every document the reader yields to the replayer; with ``on_progress``, report
    every ``PROGRESS_EVERY`` spans (spans read, sessions found)."""
    with _fewer_collections():
        _feed(reader, replayer, on_progress)


def _feed(reader: TraceReader, replayer: Replayer, on_progress: ProgressCallback | None) -> None:
    read = 0
    countdown = PROGRESS_EVERY
    for spans in reader.iter_documents():
        if not spans:
            continue  # as when iterating spans: a document without spans ends nothing
        replayer.end_document()
        if on_progress is None:
            replayer.add_all(spans)
            continue
        for span in spans:
            replayer.add(span)
            read += 1
            countdown -= 1
            if not countdown:
                countdown = PROGRESS_EVERY
                on_progress(read, replayer.sessions_seen)


def _finish_analysis(
    reader: TraceReader,
    replayer: Replayer,
    problems: list[InputProblem],
    on_progress: ProgressCallback | None,
    others: list[Future[tuple[list[SessionReport], dict[str, int]]]],
) -> Analysis:
    """Replay this process's part (with progress), then merge the other parts' sessions."""
    _replay_documents(reader, replayer, on_progress)
    sessions = replayer.finish()
    for other in others:
        part_sessions, part_notes = other.result()
        sessions.extend(part_sessions)
        notes = replayer.derived.notes
        for hint, count in part_notes.items():
            notes[hint] = notes.get(hint, 0) + count
    if others:
        sessions.sort(key=_report_order)
    if on_progress is not None:
        on_progress(reader.spans_read, len(sessions))
    return Analysis.build(
        sessions,
        replayer,
        spans_read=reader.spans_read,
        problems=problems,
        problem_counts=Counter(dict(reader.problems)),
        formats=Counter(reader.formats),
    )
