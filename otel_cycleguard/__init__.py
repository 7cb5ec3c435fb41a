"""otel-cycleguard: loop protection for AI agents, from the OpenTelemetry traces they emit."""

from otel_cycleguard.config import ConfigError, CycleGuardConfig, load_config
from otel_cycleguard.detect import (
    Detector,
    Dimension,
    Level,
    ModelTurn,
    SessionDetector,
    Signal,
    ToolCall,
)
from otel_cycleguard.guard import CycleGuard, Observer, SessionEntry
from otel_cycleguard.otel.autoconfig import install
from otel_cycleguard.otel.processor import CycleGuardSpanProcessor

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "CycleGuard",
    "CycleGuardConfig",
    "CycleGuardSpanProcessor",
    "Detector",
    "Dimension",
    "Level",
    "ModelTurn",
    "Observer",
    "SessionDetector",
    "SessionEntry",
    "Signal",
    "ToolCall",
    "__version__",
    "install",
    "load_config",
]
