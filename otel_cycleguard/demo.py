"""``cycleguard demo``: scripted agents fall into loops, the guard catches each one.

Everything runs in-process on embedded defaults: a real OpenTelemetry ``TracerProvider`` whose
spans follow the GenAI conventions, the guard installed with ``install()``, a Prometheus
``/metrics`` endpoint, a scripted "human" answering escalations, and an OTLP JSON lines trace
file that ``cycleguard analyze`` can replay afterwards. The agents are scripts, not models:
each step asks the guard for directives (``check()``) the way a real agent adapter does, and
either heeds a corrective message or keeps looping, as its script says.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Status, StatusCode, Tracer

import otel_cycleguard
from otel_cycleguard.config import load_config
from otel_cycleguard.detect import Level, Signal
from otel_cycleguard.escalate.directives import CycleTerminated
from otel_cycleguard.escalate.hitl import CallableEscalator, EscalationRequest, HumanDecision
from otel_cycleguard.escalate.progress import DirectoryProgressStore
from otel_cycleguard.guard import Observer, SessionEntry
from otel_cycleguard.metrics import CycleGuardMetrics

__all__ = ["main", "run_demo"]

#: Seconds between the quiet rounds run while lingering (``--round-pause`` overrides it).
LINGER_PACE_S = 5.0

# A step: (tool, arguments, result, failed). A script yields steps; heeding switches scripts.
Step = tuple[str, dict[str, Any], str, bool]


class JsonLinesSpanExporter(SpanExporter):
    """Writes each export batch as one OTLP JSON line (the Collector file exporter's format)."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("w", encoding="utf-8")
        self._lock = threading.Lock()
        self._pending: dict[int, list[ReadableSpan]] = {}

    def export(self, spans: Any) -> SpanExportResult:
        """Buffer spans per trace; write a trace as one line when its root span ends."""
        with self._lock:
            for span in spans:
                trace_spans = self._pending.setdefault(span.context.trace_id, [])
                trace_spans.append(span)
                if span.parent is None:
                    self._write(self._pending.pop(span.context.trace_id))
        return SpanExportResult.SUCCESS

    def _write(self, spans: list[ReadableSpan]) -> None:
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        document = MessageToDict(encode_spans(spans))
        _hex_ids(document)
        self._file.write(json.dumps(document, separators=(",", ":")) + "\n")
        self._file.flush()

    def shutdown(self) -> None:
        with self._lock:
            for spans in self._pending.values():
                self._write(spans)
            self._pending.clear()
            self._file.close()


def _hex_ids(document: dict[str, Any]) -> None:
    """protobuf's JSON mapping writes ids as base64; the OTLP JSON spec wants lowercase hex."""
    import base64

    for resource_spans in document.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64decode(span[key]).hex()


@dataclass
class Scenario:
    """One scripted agent run."""

    agent: str
    title: str
    expect: str
    loop: Callable[[int], Step]
    heed: Callable[[int], Step] | None = None
    heeds_after: int = 1  # how many corrective messages it takes before the agent changes course
    max_steps: int = 40
    texts: Callable[[int, bool], str] | None = None
    human: str = "silent"  # what the scripted human answers: silent | continue | modify
    results: list[str] = field(default_factory=list)


def _scenarios() -> list[Scenario]:
    def grep_same(i: int) -> Step:
        return (
            "grep",
            {"pattern": "def parse_config", "path": "src/"},
            "src/app.py:88: def parse_config(",
            False,
        )

    def read_around(i: int) -> Step:
        return (
            "read",
            {"path": "src/app.py", "offset": 80 + 40 * i, "limit": 40},
            f"lines {80 + 40 * i}..",
            False,
        )

    def fix_cycle(i: int) -> Step:
        phase = i % 3
        if phase == 0:
            return ("read", {"path": "src/auth.py"}, "def login(user): ...", False)
        if phase == 1:
            return (
                "edit",
                {"path": "src/auth.py", "old": "user", "new": "user or guest"},
                "ok",
                False,
            )
        return ("bash", {"command": "pytest tests/test_auth.py -q"}, "1 failed in 0.31s", True)

    def build_fail(i: int) -> Step:
        if i % 2:
            return ("edit", {"path": "lib/core.c", "patch": f"fix attempt {i}"}, "patched", False)
        return (
            "bash",
            {"command": "make"},
            f"core.c:{100 + i}: error: expected ';' (attempt {i})",
            True,
        )

    def build_ok(i: int) -> Step:
        return ("bash", {"command": "make"}, "build succeeded", False)

    def poll(i: int) -> Step:
        return (
            "job_status",
            {"job": "train-42"},
            f"state=RUNNING progress=37% elapsed=00:0{i % 10}:1{i % 10}",
            False,
        )

    def healthy(i: int) -> Step:
        plan: list[Step] = [
            ("grep", {"pattern": "TODO", "path": "src/"}, "src/a.py:3: TODO", False),
            ("open", {"path": "src/a.py"}, "[lines 1-100 of 400]", False),
            ("scroll_down", {}, "[lines 101-200 of 400]", False),
            ("scroll_down", {}, "[lines 201-300 of 400]", False),
            ("scroll_down", {}, "[lines 301-400 of 400]", False),
            ("edit", {"path": "src/a.py", "line": 3, "new": "done()"}, "ok", False),
            ("bash", {"command": "pytest -q"}, "1 failed, 9 passed", True),
            ("edit", {"path": "src/a.py", "line": 7, "new": "return x"}, "ok", False),
            ("bash", {"command": "pytest -q"}, "10 passed", False),
        ]
        return plan[i] if i < len(plan) else ("submit", {}, "submitted", False)

    def chatty(i: int, told: bool) -> str:
        if told:
            return f"Decision: I will book flight {i} now."
        return "Let me think again about which flight option is best for the user before acting."

    return [
        Scenario(
            "researcher",
            "the same grep, over and over",
            "identical_call: WARN, self-heal, then it reads on",
            grep_same,
            read_around,
            max_steps=12,
        ),
        Scenario(
            "fixer",
            "read -> edit -> test, round and round",
            "the lap replayed with the same results: self-heal, ignored, human silent, terminated",
            fix_cycle,
            None,
            max_steps=60,
        ),
        Scenario(
            "builder",
            "the build fails differently every time",
            "error_streak: self-heal, human says continue",
            build_fail,
            build_ok,
            heeds_after=2,
            max_steps=40,
            human="continue",
        ),
        Scenario(
            "poller",
            "polling a job that never moves",
            "poll_no_progress: WARN and self-heal",
            poll,
            build_ok,
            max_steps=24,
        ),
        Scenario(
            "planner",
            "thinking the same thought every turn",
            "text_loop (reasoning cycle): self-heal",
            lambda i: ("think", {"note": f"option {i}"}, "noted", False),
            None,
            max_steps=8,
            texts=chatty,
        ),
        Scenario(
            "healthy",
            "scrolls, edits, re-runs tests: real work",
            "no signal at all",
            healthy,
            None,
            max_steps=10,
        ),
    ]


class _Narrator(Observer):
    """Prints each signal as it fires, in words a person reads."""

    def __init__(self, out: Callable[[str], None]) -> None:
        self.out = out
        self.signals_seen: list[Signal] = []

    def signals(self, entry: SessionEntry, signals: list[Signal], span_ref: Any) -> None:
        for signal in signals:
            self.signals_seen.append(signal)
            where = (
                f"step {signal.step}"
                if signal.step is not None
                else f"turn {signal.model_turn_index}"
            )
            tag = "TERM" if signal.level is Level.TERM else "WARN"
            self.out(
                f"   {tag:4} {signal.dimension.value:<17} at {where:<8} {signal.streak}/{signal.threshold}  {signal.explanation}"
            )


class _EscalationPrinter(logging.Handler):
    """Turns the engine's structured escalation log lines into demo narration."""

    def __init__(self, out: Callable[[str], None]) -> None:
        super().__init__(logging.INFO)
        self.out = out

    def emit(self, record: logging.LogRecord) -> None:
        info = getattr(record, "cycleguard", None)
        if not isinstance(info, dict):
            return
        step = info.get("step")
        if step == "self_heal":
            self.out(
                "         -> self-heal: a corrective system message is queued for the next model turn"
            )
        elif step == "hitl":
            self.out("         -> second TERM in this dimension: asking a human (run paused)")
        elif step == "decision":
            self.out(f"         -> human decision: {info.get('decision')}")
        elif step == "terminate":
            self.out(
                f"         -> TERMINATED ({info.get('reason')}); progress saved as {info.get('progress')}"
            )


def _scripted_human(
    scenarios: dict[str, Scenario], deadline_s: float
) -> Callable[[EscalationRequest], Any]:
    def answer(request: EscalationRequest) -> Any:
        scenario = scenarios.get(request.agent or "")
        choice = scenario.human if scenario else "silent"
        if choice == "continue":
            return HumanDecision("continue", detail="scripted human")
        if choice == "modify":
            return HumanDecision(
                "modify", message="Stop and summarise what you found.", detail="scripted human"
            )
        time.sleep(deadline_s + 5)  # silence: the deadline passes, the guard fails closed
        return HumanDecision("continue", detail="too late")

    return answer


def _session_key(round_no: int, index: int, scenario: Scenario) -> str:
    return (
        f"demo-{index}-{scenario.agent}"
        if round_no == 0
        else f"demo-r{round_no}-{index}-{scenario.agent}"
    )


def _run_scenario(
    tracer: Tracer, scenario: Scenario, session: str, out: Callable[[str], None]
) -> str:
    told = 0
    outcome = "finished"
    with tracer.start_as_current_span(
        f"invoke_agent {scenario.agent}",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": scenario.agent,
            "gen_ai.conversation.id": session,
        },
    ):
        for step in range(scenario.max_steps):
            try:
                directives = otel_cycleguard.check(session)
            except CycleTerminated as stop:
                out(f"   agent stopped: {stop.user_message}")
                return "terminated"
            for directive in directives:
                told += 1
                out(f"   agent receives ({directive.role}): {directive.content[:110]}...")
            heeding = told >= scenario.heeds_after and (
                scenario.heed is not None or scenario.texts is not None
            )
            with tracer.start_as_current_span(
                "chat scripted-model",
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "scripted-model",
                },
            ) as chat:
                text = (
                    scenario.texts(step, heeding)
                    if scenario.texts
                    else f"Step {step}: next action."
                )
                chat.set_attribute(
                    "gen_ai.output.messages",
                    json.dumps(
                        [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
                    ),
                )
                chat.set_attribute("gen_ai.usage.input_tokens", 800 + 40 * step)
                chat.set_attribute("gen_ai.usage.output_tokens", 60)
            script = scenario.heed if heeding and scenario.heed is not None else scenario.loop
            tool, arguments, result, failed = script(step)
            with tracer.start_as_current_span(
                f"execute_tool {tool}",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": tool,
                    "gen_ai.tool.call.arguments": json.dumps(arguments),
                },
            ) as span:
                span.set_attribute("gen_ai.tool.call.result", result)
                if failed:
                    span.set_status(Status(StatusCode.ERROR, result[:80]))
                    span.set_attribute("error.type", "ToolError")
            if heeding and scenario.heed is None and scenario.texts is None:
                break
            if scenario.heed is not None and heeding and step >= scenario.max_steps // 2:
                break
    return outcome


class _Voice:
    """The demo's ``out``, which can go quiet: rounds run while lingering are not narrated."""

    def __init__(self, out: Callable[[str], None]) -> None:
        self.out = out
        self.quiet = False

    def __call__(self, line: str) -> None:
        if not self.quiet:
            self.out(line)


def _run_round(
    tracer: Tracer,
    processor: Any,
    scenarios: list[Scenario],
    round_no: int,
    out: Callable[[str], None],
) -> dict[str, str]:
    outcomes: dict[str, str] = {}
    for index, scenario in enumerate(scenarios):
        session = _session_key(round_no, index, scenario)
        out(f"[{scenario.agent}] {scenario.title}  (expect: {scenario.expect})")
        outcomes[scenario.agent] = _run_scenario(tracer, scenario, session, out)
        processor.escalation.end_session(session)
        out(f"   outcome: {outcomes[scenario.agent]}\n")
    return outcomes


def run_demo(
    *,
    metrics_port: int = 9464,
    output_dir: Path = Path("cycleguard-demo"),
    hitl_timeout_s: float = 2.0,
    linger_s: float = 0.0,
    rounds: int = 1,
    round_pause_s: float = 0.0,
    out: Callable[[str], None] = print,
) -> dict[str, str]:
    """Run every scenario ``rounds`` times; returns {agent: outcome of the last narrated round}.

    With ``linger_s`` the agents keep running afterwards, one quiet round every
    ``round_pause_s`` seconds (default :data:`LINGER_PACE_S`), and the metrics stay up that
    long: a Prometheus scraping meanwhile sees the counters move, so its rates have data.
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    traces = output_dir / "traces.otlp.jsonl"
    provider = TracerProvider(resource=Resource.create({"service.name": "cycleguard-demo"}))
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(traces)))
    scenarios = _scenarios()
    by_agent = {s.agent: s for s in scenarios}
    config = load_config(environ={}, escalation={"hitl_timeout_s": hitl_timeout_s})
    voice = _Voice(out)
    narrator = _Narrator(voice)
    metrics = CycleGuardMetrics()
    processor = otel_cycleguard.install(
        config,
        tracer_provider=provider,
        observers=[narrator],
        escalator=CallableEscalator(_scripted_human(by_agent, hitl_timeout_s)),
        progress_store=DirectoryProgressStore(output_dir / "progress"),
        metrics=metrics,
    )
    assert processor is not None
    server, _ = metrics.start_http_server(metrics_port)
    port = server.server_address[1]
    url = f"http://127.0.0.1:{port}/metrics"
    printer = _EscalationPrinter(voice)
    escalation_logger = logging.getLogger("otel_cycleguard.escalation")
    escalation_logger.addHandler(printer)
    escalation_logger.setLevel(logging.INFO)
    escalation_logger.propagate = False
    tracer = provider.get_tracer("cycleguard-demo")
    outcomes: dict[str, str] = {}
    out(f"otel-cycleguard demo: {len(scenarios)} scripted agents, metrics on {url}\n")
    try:
        for round_no in range(rounds):
            if round_no:
                time.sleep(round_pause_s)
                out(f"--- round {round_no + 1} of {rounds} ---")
            outcomes = _run_round(tracer, processor, scenarios, round_no, voice)
        provider.force_flush()
        out("Where to look:")
        if linger_s > 0:
            out(f"  metrics     {url}   (grafana/ has rules, alerts and a dashboard)")
        else:
            out(
                "  metrics     served only while the demo runs: --linger 120 keeps the agents "
                "running and the endpoint up for a Prometheus (see grafana/)"
            )
        out(
            f"  traces      {traces}   (OTLP JSON lines; cycleguard.signal spans sit under the looping tool spans)"
        )
        out(
            f"  progress    {output_dir / 'progress'}   (saved state of terminated runs; otel_cycleguard.resume(ref))"
        )
        out(
            f"  replay      cycleguard analyze {traces} --format html -o {output_dir / 'report.html'}"
        )
        if linger_s > 0:
            pace = round_pause_s if round_pause_s > 0 else LINGER_PACE_S
            out(
                f"\nAgents keep running (a round every {pace:g} s) and metrics stay on {url} "
                f"for {linger_s:.0f} s more (Ctrl-C to stop)..."
            )
            with contextlib.suppress(KeyboardInterrupt):
                _linger(tracer, processor, scenarios, rounds, linger_s, pace, voice, out)
    finally:
        escalation_logger.removeHandler(printer)
        provider.force_flush()
        server.shutdown()
        provider.shutdown()
    if linger_s > 0:
        out("Metrics endpoint stopped.")
    return outcomes


def _linger(
    tracer: Tracer,
    processor: Any,
    scenarios: list[Scenario],
    first_round: int,
    linger_s: float,
    pace_s: float,
    voice: _Voice,
    out: Callable[[str], None],
) -> None:
    """Quiet rounds, one every ``pace_s`` seconds, until ``linger_s`` is over."""
    end = time.monotonic() + linger_s
    round_no = first_round
    voice.quiet = True
    try:
        while time.monotonic() + pace_s < end:
            time.sleep(pace_s)
            outcomes = _run_round(tracer, processor, scenarios, round_no, voice)
            stopped = sum(1 for outcome in outcomes.values() if outcome == "terminated")
            out(
                f"  round {round_no + 1}: {len(outcomes)} agents, {stopped} terminated "
                f"({max(0.0, end - time.monotonic()):.0f} s left)"
            )
            round_no += 1
        time.sleep(max(0.0, end - time.monotonic()))
    finally:
        voice.quiet = False


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(prog="cycleguard demo")
    parser.description = "Scripted agents fall into loops; watch the guard catch each one."
    parser.add_argument(
        "--port",
        type=int,
        default=9464,
        help="metrics port on 127.0.0.1 (0: any free port; default 9464)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=Path("cycleguard-demo"),
        help="folder for traces and saved progress",
    )
    parser.add_argument(
        "--hitl-timeout",
        type=float,
        default=2.0,
        help="seconds the scripted human gets to answer (default 2)",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="run all scenarios this many times (default 1)"
    )
    parser.add_argument(
        "--round-pause",
        type=float,
        default=0.0,
        help=f"seconds between rounds (default 0; while lingering {LINGER_PACE_S:g})",
    )
    parser.add_argument(
        "--linger",
        type=float,
        default=0.0,
        help="after the run, keep the agents running (quietly, a round every few seconds) and "
        "the metrics up this many seconds, so a Prometheus scraping them sees rates",
    )
    return parser


def _line_printer() -> Callable[[str], None]:
    """print() for several threads: each line is written whole (escalations run on workers)."""
    lock = threading.Lock()

    def out(line: str) -> None:
        with lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    return out


def main(argv: list[str] | None = None) -> int:
    return main_with(build_parser().parse_args(argv))


def main_with(args: argparse.Namespace) -> int:
    """Run the demo for parsed arguments (``cycleguard demo`` and ``python -m``)."""
    run_demo(
        metrics_port=args.port,
        output_dir=args.output,
        hitl_timeout_s=args.hitl_timeout,
        linger_s=args.linger,
        rounds=max(1, args.rounds),
        round_pause_s=max(0.0, args.round_pause),
        out=_line_printer(),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
