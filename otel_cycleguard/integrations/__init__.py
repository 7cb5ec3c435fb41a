"""Enforcement points: the generic API here, framework adapters in submodules (extras)."""

from otel_cycleguard.integrations.generic import (
    CycleTerminated,
    acheck,
    check,
    checkpoint,
    current_session,
    default_processor,
    guard_tool,
    resolve_engine,
    set_default_engine,
)

__all__ = [
    "CycleTerminated",
    "acheck",
    "check",
    "checkpoint",
    "current_session",
    "default_processor",
    "guard_tool",
    "resolve_engine",
    "set_default_engine",
]
