"""Shared test helpers: a real SDK TracerProvider with the guard and an in-memory exporter."""

from __future__ import annotations

from dataclasses import dataclass, field

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_cycleguard import CycleGuard, CycleGuardSpanProcessor, load_config
from otel_cycleguard.guard import Observer
from otel_cycleguard.otel import SignalAnnotator


class Recorder(Observer):
    """Remembers every signal with the session key and profile it fired in."""

    def __init__(self) -> None:
        self.fired: list[tuple[str, str, object]] = []
        self.calls: list[tuple[str, str]] = []

    def tool_call(self, entry, call):
        self.calls.append((entry.key, call.tool))

    def signals(self, entry, signals, span_ref):
        for signal in signals:
            self.fired.append((entry.key, entry.detector.profile_name, signal))


@dataclass
class Rig:
    provider: TracerProvider
    exporter: InMemorySpanExporter
    processor: CycleGuardSpanProcessor
    recorder: Recorder
    tracer: object = field(init=False)

    def __post_init__(self) -> None:
        self.tracer = self.provider.get_tracer("agent-under-test")

    def finished(self, name: str | None = None):
        spans = self.exporter.get_finished_spans()
        return [s for s in spans if name is None or s.name == name]

    def sessions(self) -> set[str]:
        return {key for key, _ in self.recorder.calls}


def make_rig(annotate: bool = True, **config) -> Rig:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    recorder = Recorder()
    observers: list[Observer] = [recorder]
    if annotate:
        observers.append(SignalAnnotator(provider))
    guard = CycleGuard(load_config(environ={}, **config), observers=observers)
    processor = CycleGuardSpanProcessor(guard)
    provider.add_span_processor(processor)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Rig(provider, exporter, processor, recorder)


def genai_tool(tool: str = "grep", args: str = '{"q": "x"}', result: str = "none") -> dict:
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.arguments": args,
        "gen_ai.tool.call.result": result,
    }


def agent_attrs(name: str, **extra) -> dict:
    return {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name, **extra}
