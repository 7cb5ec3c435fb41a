"""What can go wrong while reading traces, as values (skipped input) and errors (unusable input).

Bad pieces of otherwise readable input (a broken line, a span without an id, a truncated gzip
tail) are skipped and described by an :class:`InputProblem`, so one bad line does not cost the
analysis of a large export. Input that cannot be read at all raises :class:`InputError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from otel_cycleguard.wire.ids import BadSpan

__all__ = [
    "READABLE_FORMATS",
    "BadSpan",
    "InputError",
    "InputProblem",
    "ProblemKind",
    "UnknownFormatError",
]

ProblemKind = Literal[
    "invalid_json",
    "not_a_trace",
    "invalid_span",
    "truncated",
    "unknown_format",
    "empty",
    "unreadable",
]

#: The formats the readers understand, as named in error messages.
READABLE_FORMATS: tuple[str, ...] = (
    "OTLP JSON (an ExportTraceServiceRequest / TracesData document with resourceSpans)",
    "OTLP JSON lines (one such document per line, as the OpenTelemetry Collector file exporter "
    "writes them)",
    'Jaeger JSON (UI download or /api/traces response: {"data": [{"spans": ...}]})',
    'Grafana Tempo JSON (/api/traces response: {"batches": ...} or {"trace": ...})',
)


@dataclass(frozen=True, slots=True)
class InputProblem:
    """A skipped piece of input, with enough context to find it again.

    ``line`` is 1-based, or None when the problem is not tied to one line (a whole-file
    document, the end of a truncated gzip stream).
    """

    source: str
    line: int | None
    kind: ProblemKind
    reason: str

    def __str__(self) -> str:
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        return f"{where}: {self.reason}"


class InputError(Exception):
    """An input path that cannot be read at all (missing, unreadable, not a file)."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


class UnknownFormatError(InputError):
    """A readable file in none of the trace formats; the message lists the ones we read."""

    def __init__(self, source: str, detail: str) -> None:
        formats = "; ".join(READABLE_FORMATS)
        super().__init__(
            source,
            f"not a trace format cycleguard can read ({detail}). Readable formats: {formats}",
        )
        self.detail = detail
