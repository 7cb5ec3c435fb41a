"""Trace and span ids to lowercase hex, whatever encoding the exporter chose.

The OTLP JSON spec says hex; the protobuf JSON mapping (``MessageToJson``, Tempo's API) gives
base64 of the raw bytes; Jaeger gives hex with leading zeros dropped and 64-bit trace ids.
"""

from __future__ import annotations

import base64
import binascii
import re

__all__ = ["SPAN_ID_BYTES", "TRACE_ID_BYTES", "BadSpan", "hex_id"]

TRACE_ID_BYTES = 16
SPAN_ID_BYTES = 8
_HEX = re.compile(r"[0-9a-fA-F]+")
_LOWER_HEX = "0123456789abcdef"


class BadSpan(ValueError):
    """Raised by a span converter for a span it must skip; the message is the reason."""


def hex_id(value: object, size: int, *, pad: bool = False) -> str | None:
    """Return the id as ``2 * size`` lowercase hex chars, or None when absent or all zero.

    ``value`` may be hex of exactly that length (shorter hex is left-padded when ``pad``,
    for Jaeger) or base64 (standard or URL-safe, padding optional) of ``size`` bytes.
    Raises ``ValueError`` for anything else.
    """
    # Fast path, what OTLP JSON exporters write: lowercase hex of the exact width (``strip``
    # with the hex digits leaves nothing). The general code below gives the same answer.
    if value.__class__ is str and len(value) == 2 * size and not value.strip(_LOWER_HEX):
        return value if value.strip("0") else None
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"id is not a string: {value!r}")
    width = 2 * size
    if (len(value) == width or (pad and len(value) < width)) and _HEX.fullmatch(value):
        text = value.lower().zfill(width)
    else:
        text = _from_base64(value, size)
    return None if not text.strip("0") else text


def _from_base64(value: str, size: int) -> str:
    """Decode a base64 id of ``size`` bytes to hex, or raise ``ValueError`` naming both forms."""
    padded = value + "=" * (-len(value) % 4)
    altchars = b"-_" if ("-" in value or "_" in value) else None
    try:
        raw = base64.b64decode(padded, altchars=altchars, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != size:
        raise ValueError(f"not a {size}-byte id in hex or base64: {value!r}")
    return raw.hex()
