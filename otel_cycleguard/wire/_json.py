"""The JSON parser for trace files: orjson when installed, else the standard library.

orjson parses the multi-megabyte lines of agent traces several times faster and is optional;
both raise a ``ValueError`` subclass on bad input, which is all the readers rely on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["PARSER", "loads", "loads_shared"]

loads: Callable[[bytes | str], Any]
try:
    import orjson
except ImportError:  # pragma: no cover - depends on the environment
    loads = json.loads
    PARSER = "json"
else:
    loads = orjson.loads
    PARSER = "orjson"


# The last text ``loads_shared`` parsed and its value, replaced whole (threads read a
# consistent pair); holding the text keeps its identity from being reused.
_recent: tuple[object, Any] = (None, None)


def loads_shared(text: str) -> Any:
    """``loads(text)``, remembering the last answer by the text's identity.

    The Python readers of the rarer message shapes (per-message events, text the compiled
    core leaves to Python) read the same text twice in a row, for the calls the model asked
    for and for the turn's text: the second read costs nothing. The value is shared between those
    readers: read it, never change it. Errors are raised each time (nothing is remembered).
    """
    global _recent
    last_text, last_value = _recent
    if text is last_text:
        return last_value
    value = loads(text)
    _recent = (text, value)
    return value
