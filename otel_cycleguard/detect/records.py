"""The two things the detector observes: a tool call and a model turn.

They carry raw content on the way in; the session hashes it at once and keeps only hashes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from otel_cycleguard.detect._slotted import slotted_constructor

__all__ = ["ModelTurn", "ToolCall", "new_model_turn", "new_tool_call"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One finished tool call.

    ``arguments`` and ``result`` may be a dict, a JSON string, a plain string, bytes or None:
    they are canonicalised and hashed, never stored. Times are seconds (any epoch, used only
    for differences). ``read_only`` is tool metadata from the span or config (None: unknown).
    """

    tool: str
    arguments: Any = None
    result: Any = None
    error: bool = False
    start_s: float | None = None
    end_s: float | None = None
    read_only: bool | None = None
    state_fingerprint: str | None = None
    span_id: str | None = None


@dataclass(frozen=True, slots=True)
class ModelTurn:
    """One finished model turn: its output text and token usage.

    ``error`` marks a turn that failed (a span status ERROR or an ``error.type``: a format
    error the harness rejected, a refusal, a provider error); ``error_text`` says what failed
    (hashed on arrival, never kept), so the same rejection turn after turn is the same error.
    """

    text: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    start_s: float | None = None
    end_s: float | None = None
    state_fingerprint: str | None = None
    span_id: str | None = None
    error: bool = False
    error_text: str | None = None


#: ``ToolCall`` from every field, positionally, in declaration order: the converters' fast
#: constructor (see :mod:`otel_cycleguard.detect._slotted`).
new_tool_call: Callable[..., ToolCall] = slotted_constructor(ToolCall)
#: ``ModelTurn`` from every field, positionally, in declaration order.
new_model_turn: Callable[..., ModelTurn] = slotted_constructor(ModelTurn)
