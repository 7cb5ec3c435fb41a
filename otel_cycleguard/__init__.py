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
from otel_cycleguard.escalate.directives import CycleTerminated, Directive
from otel_cycleguard.escalate.progress import resume
from otel_cycleguard.guard import CycleGuard, Observer, SessionEntry
from otel_cycleguard.integrations.generic import acheck, check, checkpoint, guard_tool
from otel_cycleguard.otel.autoconfig import install
from otel_cycleguard.otel.processor import CycleGuardSpanProcessor

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "CycleGuard",
    "CycleGuardConfig",
    "CycleGuardSpanProcessor",
    "CycleTerminated",
    "Detector",
    "Dimension",
    "Directive",
    "Level",
    "ModelTurn",
    "Observer",
    "SessionDetector",
    "SessionEntry",
    "Signal",
    "ToolCall",
    "__version__",
    "acheck",
    "check",
    "checkpoint",
    "guard_tool",
    "install",
    "load_config",
    "resume",
]
