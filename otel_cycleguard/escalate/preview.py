"""The short redacted preview a human may be shown with an escalation (``include_raw``).

The detector keeps hashes only, so a human asked "is this a loop?" sees tool names and hashes.
When the user opts in, the escalation also carries the last call (or model turn) of the
session: its arguments and result, with volatile content masked as for hashing, values under
secret-looking keys replaced, and each text cut to :data:`PREVIEW_CHARS` characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from otel_cycleguard.detect.normalize import Normalizer, canonical_json
from otel_cycleguard.detect.records import ModelTurn, ToolCall

__all__ = ["PREVIEW_CHARS", "preview_call", "preview_turn"]

PREVIEW_CHARS = 200
REDACTED = "[redacted]"
_SECRET_KEY = re.compile(
    r"pass(word|wd)?|secret|token|api[_-]?key|auth(orization)?|credential|cookie|private[_-]?key",
    re.IGNORECASE,
)


def _redact(value: Any, depth: int = 0) -> Any:
    """``value`` with every value under a secret-looking key replaced (nested, bounded)."""
    if depth > 8:
        return value
    if isinstance(value, Mapping):
        return {
            k: REDACTED if _SECRET_KEY.search(str(k)) else _redact(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_redact(v, depth + 1) for v in value]
    return value


def _structured(value: Any) -> Any:
    """A JSON string as the structure it holds (so keys can be redacted), else ``value``."""
    if isinstance(value, bytes | bytearray):
        value = bytes(value).decode("utf-8", "replace")
    if isinstance(value, str) and value.lstrip().startswith(("{", "[")):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _text(value: Any, normalizer: Normalizer) -> str | None:
    if value is None:
        return None
    value = _structured(value)
    if isinstance(value, str):
        text = value
    else:
        text = canonical_json(_redact(value)).decode("utf-8", "replace")
    text = normalizer.mask(text[: PREVIEW_CHARS * 4])
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def preview_call(call: ToolCall, normalizer: Normalizer | None = None) -> dict[str, Any]:
    """``{"tool", "arguments", "result", "error"}`` of one call, short and redacted."""
    normalizer = normalizer or Normalizer()
    return {
        "tool": call.tool,
        "arguments": _text(call.arguments, normalizer),
        "result": _text(call.result, normalizer),
        "error": call.error,
    }


def preview_turn(turn: ModelTurn, normalizer: Normalizer | None = None) -> dict[str, Any]:
    """``{"text"}`` of one model turn, short and masked."""
    return {"text": _text(turn.text, normalizer or Normalizer())}
