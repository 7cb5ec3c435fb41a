"""The JSON parser for trace files: orjson when installed, else the standard library.

orjson parses the multi-megabyte lines of agent traces several times faster and is optional;
both raise a ``ValueError`` subclass on bad input, which is all the readers rely on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["PARSER", "loads"]

loads: Callable[[bytes | str], Any]
try:
    import orjson
except ImportError:  # pragma: no cover - depends on the environment
    loads = json.loads
    PARSER = "json"
else:
    loads = orjson.loads
    PARSER = "orjson"
