"""The pure detection core: standard library, xxhash and the compiled ``_core`` only; no
OpenTelemetry, no pydantic, no I/O. It receives its settings as plain data
(:class:`DetectorSettings`, compiled from the configuration by
``CycleGuardConfig.detector_settings()``)."""

from otel_cycleguard.detect.records import ModelTurn, ToolCall
from otel_cycleguard.detect.session import Detector, SessionDetector
from otel_cycleguard.detect.settings import DetectorSettings, ProfileSettings
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
    "DetectorSettings",
    "Dimension",
    "Level",
    "ModelTurn",
    "ProfileSettings",
    "SessionDetector",
    "Signal",
    "ToolCall",
]
