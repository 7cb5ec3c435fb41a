"""Offline analysis of exported traces: read spans from OTLP JSON, Jaeger and Tempo files,
replay them through the live engine, and report the loops found."""

from otel_cycleguard.analyze.problems import InputError, InputProblem, UnknownFormatError
from otel_cycleguard.analyze.readers import TraceReader, read_spans
from otel_cycleguard.analyze.replay import (
    HITL_MODES,
    Replayer,
    analyze_paths,
    replay_spans,
    session_part,
)
from otel_cycleguard.analyze.report import (
    SCHEMA_ID,
    Analysis,
    EscalationRecord,
    SessionReport,
    SignalRecord,
    TerminatedAt,
    Wasted,
    schema,
)

__all__ = [
    "HITL_MODES",
    "SCHEMA_ID",
    "Analysis",
    "EscalationRecord",
    "InputError",
    "InputProblem",
    "Replayer",
    "SessionReport",
    "SignalRecord",
    "TerminatedAt",
    "TraceReader",
    "UnknownFormatError",
    "Wasted",
    "analyze_paths",
    "read_spans",
    "replay_spans",
    "schema",
    "session_part",
]
