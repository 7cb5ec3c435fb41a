"""Offline analysis of exported traces: read spans from OTLP JSON, Jaeger and Tempo files."""

from otel_cycleguard.analyze.problems import InputError, InputProblem, UnknownFormatError
from otel_cycleguard.analyze.readers import TraceReader, read_spans

__all__ = ["InputError", "InputProblem", "TraceReader", "UnknownFormatError", "read_spans"]
