"""otel-cycleguard: loop protection for AI agents, from the OpenTelemetry traces they emit.

The root imports lazily (PEP 562): ``import otel_cycleguard.detect`` or ``cycleguard analyze``
must not pay for OpenTelemetry, prometheus-client or the webhook client. Each public name is
imported from its module the first time it is read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from otel_cycleguard._lazy import lazy_exports as _lazy_exports

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "ConfigError": "otel_cycleguard.config",
    "CycleGuardConfig": "otel_cycleguard.config",
    "load_config": "otel_cycleguard.config",
    "Detector": "otel_cycleguard.detect",
    "Dimension": "otel_cycleguard.detect",
    "Level": "otel_cycleguard.detect",
    "ModelTurn": "otel_cycleguard.detect",
    "SessionDetector": "otel_cycleguard.detect",
    "Signal": "otel_cycleguard.detect",
    "ToolCall": "otel_cycleguard.detect",
    "CycleTerminated": "otel_cycleguard.escalate.directives",
    "Directive": "otel_cycleguard.escalate.directives",
    "resume": "otel_cycleguard.escalate.progress",
    "CycleGuard": "otel_cycleguard.guard",
    "Observer": "otel_cycleguard.guard",
    "SessionEntry": "otel_cycleguard.guard",
    "acheck": "otel_cycleguard.integrations.generic",
    "check": "otel_cycleguard.integrations.generic",
    "checkpoint": "otel_cycleguard.integrations.generic",
    "guard_tool": "otel_cycleguard.integrations.generic",
    "install": "otel_cycleguard.otel.autoconfig",
    "CycleGuardSpanProcessor": "otel_cycleguard.otel.processor",
}

__all__ = sorted([*_EXPORTS, "__version__"])

if TYPE_CHECKING:  # what type checkers and IDEs see; nothing is imported at run time
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


__getattr__, __dir__ = _lazy_exports(__name__, globals(), _EXPORTS)
