"""The pure detection core: standard library and xxhash only; no OpenTelemetry, no I/O."""

from otel_cycleguard.detect.records import ModelTurn, ToolCall
from otel_cycleguard.detect.session import Detector, SessionDetector
from otel_cycleguard.detect.signals import (
    DIMENSIONS,
    BreakStrategy,
    CallDigest,
    CycleClass,
    Dimension,
    Level,
    Signal,
)

__all__ = [
    "DIMENSIONS",
    "BreakStrategy",
    "CallDigest",
    "CycleClass",
    "Detector",
    "Dimension",
    "Level",
    "ModelTurn",
    "SessionDetector",
    "Signal",
    "ToolCall",
]
