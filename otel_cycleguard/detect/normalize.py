"""Canonical hashing of arguments and results, with volatile content masked.

"Same call, same answer" must survive real logs: a result that differs only in a timestamp, a
duration, a PID or ``line 11616`` is the same answer. Short numbers (``42%``) are kept, they are
progress. Nothing here raises on odd input: whatever arrives is hashed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import xxhash

try:
    from otel_cycleguard import _core
except ImportError as exc:  # pragma: no cover - a checkout installed without building
    raise ImportError(
        "otel_cycleguard._core (the compiled detection core) is missing: install the package "
        "with pip, which builds it (a Rust toolchain, cargo, is needed from a checkout)"
    ) from exc

try:  # orjson is ~10x faster than json for canonical dumps; the hot path wants it.
    import orjson

    _ORJSON_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
except ModuleNotFoundError:  # pragma: no cover - exercised only without the dependency
    orjson = None  # type: ignore[assignment]

__all__ = [
    "DEFAULT_MASK_PATTERNS",
    "TOKEN_MIN_FLIPS",
    "TOKEN_MIN_LENGTH",
    "Normalizer",
    "canonical_json",
    "hash_bytes",
    "hex_digest",
    "mask_temp_names",
    "mask_tokens",
]

# The documented default masks (the reference; ``Normalizer`` runs a faster equivalent).
DEFAULT_MASK_PATTERNS: tuple[str, ...] = (
    # ISO-8601 and log timestamps: 2024-01-02T03:04:05.123Z, 2024/01/02 03:04:05
    r"\d{4}[-/]\d\d[-/]\d\d(?:[T ]\d\d:\d\d(?::\d\d)?(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)?",
    # clock times 03:04:05(.123)
    r"\d\d:\d\d:\d\d(?:[.,]\d+)?",
    # UUIDs
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    # 0x-prefixed hex and hex ids of 7+ chars that contain a digit (commit shas, object ids),
    # also after an underscore: the prefixed ids of APIs (req_9f1c2a7b3e4d, off_5e0c...)
    r"0x[0-9a-fA-F]+",
    r"(?<![^\W_])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b",
    # durations: 1.23s, 45ms, 0.5 sec, 12 µs, 3h, and each part of 1m11s or 2h05m (a unit
    # followed by a digit: the ages and elapsed times kubectl, CI and progress bars print)
    r"\d+(?:\.\d+)?\s?(?:ms|us|µs|ns|s|sec|secs|seconds|m|min|h)(?:\b|(?=\d))",
    # pid 1234, pid=1234
    r"(?i:pid)[=: ]\s*\d+",
    # runs of 4 or more digits (line 11616, byte counts, ports)
    r"\d{4,}",
    # decimals with a fraction (0.123): timings, memory figures
    r"\d+\.\d{2,}",
)

#: With the defaults, long tokens are masked first, before the patterns: a run of at least
#: ``TOKEN_MIN_LENGTH`` ASCII letters and digits (bounded by any other character) that changes
#: between a letter and a digit at least ``TOKEN_MIN_FLIPS`` times, such as an AWS request id
#: (``HZBYGNG0AT62833C89YSQ…``), a key or base64. A name with versions in it changes fewer
#: times (``Base64EncoderVariant2Test``: 4). ``rust/cycleguard-core/src/mask.rs`` does the same.
TOKEN_MIN_LENGTH = 16
TOKEN_MIN_FLIPS = 6
_ALNUM_RUN = re.compile(rf"[A-Za-z0-9]{{{TOKEN_MIN_LENGTH},}}")
_FLIP = re.compile(r"[A-Za-z](?=[0-9])|[0-9](?=[A-Za-z])")


def _token_or_run(match: re.Match[str]) -> str:
    run = match.group()
    return "#" if len(_FLIP.findall(run)) >= TOKEN_MIN_FLIPS else run


def mask_tokens(text: str) -> str:
    """``text`` with each long token of letters and digits replaced by ``#`` (see
    ``TOKEN_MIN_LENGTH``): the pass the defaults run before their patterns."""
    return _ALNUM_RUN.sub(_token_or_run, text) if len(text) >= TOKEN_MIN_LENGTH else text


#: Then the random part of Python's temporary names: the 8 characters of ``[a-z0-9_]`` that
#: ``tempfile`` puts after ``tmp`` and that pip puts after ``pip-<kind>-`` (``/tmp/tmpa1b2c3d4``,
#: ``/tmp/pip-build-env-v3uow3pb/overlay/...``), with a digit among them (so that a name such as
#: ``tmp_results`` is kept). Each run of a build or an install gets new ones, so an install that
#: fails the same way again would otherwise print a new error every time.
_TEMP_NAME = re.compile(
    r"(?<![A-Za-z0-9_])(tmp|pip-[a-z]+(?:-[a-z]+)*-)(?=[a-z0-9_]{0,7}[0-9])[a-z0-9_]{8}"
    r"(?![A-Za-z0-9_])"
)


def mask_temp_names(text: str) -> str:
    """``text`` with the random part of each temporary name replaced by ``#`` (see
    ``_TEMP_NAME``): the defaults' second pass, after :func:`mask_tokens`."""
    return _TEMP_NAME.sub(r"\1#", text) if "p" in text else text


_HEX = "[0-9a-fA-F]"
_UUID_TAIL = rf"{_HEX}{{7}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
# The defaults above, refactored for speed (same matches: a differential property test checks
# it). A single alternation makes the engine try all nine alternatives at every character; here
# each regex starts with one character class, so the engine skips straight to candidate
# characters (CPython's sre "charset prefix"), and the alternatives continue from there.
# Letter-led matches (UUIDs and hex ids that start with a letter, ``pid N``) are replaced first,
# by a placeholder that is a word character like the text it replaces, so that the digit-led
# pass sees the same word boundaries as the single alternation would.
_LETTER_LED = re.compile(
    r"[a-fA-FpP](?:"
    rf"(?<=[a-fA-F]){_UUID_TAIL}"
    r"|(?<![^\W_][a-f])(?<=[a-f])(?=[0-9a-f]*\d)[0-9a-f]{6,}\b"
    r"|(?<=[pP])[iI][dD][=: ]\s*\d+"
    r")"
)
_DIGIT_LED = re.compile(
    r"\d(?:"
    r"\d{3}[-/]\d\d[-/]\d\d(?:[T ]\d\d:\d\d(?::\d\d)?(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)?"
    r"|\d:\d\d:\d\d(?:[.,]\d+)?"
    rf"|{_UUID_TAIL}"
    r"|(?<=0)x[0-9a-fA-F]+"
    r"|(?<![^\W_]\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}\b"
    r"|\d*(?:\.\d+)?\s?(?:ms|us|µs|ns|s|sec|secs|seconds|m|min|h)(?:\b|(?=\d))"
    r"|\d{3,}"
    r"|\d*\.\d{2,}"
    r")"
)
# Hex characters -> "h", other ASCII -> " ": a C-speed test for 7 hex characters in a row.
_HEX_CLASS = str.maketrans(
    {chr(c): ("h" if chr(c) in "0123456789abcdefABCDEF" else " ") for c in range(128)}
)


def _letter_candidate(text: str) -> bool:
    """True when the letter-led patterns might match (a superset test, ~6 ns per character)."""
    return "hhhhhhh" in text.translate(_HEX_CLASS) or "pid" in text.lower()


# ASCII text (most results) is masked by the compiled core in one pass over the bytes, with
# exactly the two passes' result that the patterns above give (rust/cycleguard-core/src/mask.rs
# says how, and where that differs from the single alternation).
_mask_ascii = _core.mask_ascii
_text_hash_ascii = _core.text_hash_ascii


_SEEN_LIMIT = 8192
_ANY_DIGIT = re.compile(r"\d").search
_PLACEHOLDER = "\u02b0"  # a letter (so \w) that real text practically never contains

_DIGITS = b"0123456789"
_JSON_OPENERS = ("{", "[")
_MASK = "#"


def hash_bytes(data: bytes) -> int:
    """xxh3_64 of ``data`` as an int (cheap to compare and to store)."""
    return xxhash.xxh3_64_intdigest(data)


def hex_digest(value: int) -> str:
    """16-hex-digit rendering of a hash, for evidence and span attributes."""
    return f"{value:016x}"


def _dumps(value: Any) -> bytes:
    if orjson is not None:
        try:
            return orjson.dumps(value, option=_ORJSON_OPTS, default=_fallback)
        except (TypeError, orjson.JSONEncodeError):
            pass
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_fallback
    ).encode("utf-8", "surrogatepass")


def _fallback(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, set | frozenset):
        return sorted(map(repr, value))
    return repr(value)


def _loads(text: str) -> Any:
    if orjson is not None:
        return orjson.loads(text)
    return json.loads(text)


def canonical_json(value: Any) -> bytes:
    """Canonical JSON bytes (sorted keys, no whitespace) of arguments in whatever form.

    A dict or list is dumped; a string holding JSON is parsed first, so ``'{"b":1, "a":2}'``
    and ``{"a": 2, "b": 1}`` agree; any other string or bytes is taken as text. Never raises.
    """
    try:
        if type(value) is dict:  # the usual arguments: skip the (slower) union isinstance tests
            return _dumps(value)
        if isinstance(value, bytes | bytearray | memoryview):
            value = bytes(value).decode("utf-8", "replace")
        if isinstance(value, str):
            stripped = value.lstrip()
            if stripped.startswith(_JSON_OPENERS):
                try:
                    return _dumps(_loads(value))
                except ValueError:
                    pass
            return value.encode("utf-8", "replace")
        return _dumps(value)
    except Exception:  # canonicalisation must never fail the caller
        try:
            return repr(value).encode("utf-8", "replace")
        except Exception:
            return b"<unrepresentable>"


class Normalizer:
    """Hashes arguments and results for one configuration.

    ``mask_patterns`` are added to (or, with ``mask_defaults=False``, replace) the defaults.
    ``result_fields`` picks fields of structured results per tool before hashing (e.g. an exec
    result: ``("exit_code", "output")``). Masking works on at most ``max_mask_chars``
    characters (head and tail); the middle of a larger result contributes with its digits
    folded, so the cost per call stays bounded whatever the result size.
    """

    __slots__ = (
        "_fast",
        "_fold",
        "_mask",
        "_max_mask_chars",
        "_result_fields",
        "_seen",
        "_tokens",
    )

    def __init__(
        self,
        mask_patterns: Sequence[str] = (),
        *,
        mask_defaults: bool = True,
        result_fields: Mapping[str, Sequence[str]] | None = None,
        max_mask_chars: int = 8192,
    ) -> None:
        patterns = (
            (*DEFAULT_MASK_PATTERNS, *mask_patterns) if mask_defaults else tuple(mask_patterns)
        )
        # Defaults alone take the fast two-pass path; with custom patterns, one alternation.
        self._fast = mask_defaults and not mask_patterns
        self._tokens = mask_defaults  # the token and temporary-name passes are defaults
        self._mask = (
            re.compile("|".join(f"(?:{p})" for p in patterns))
            if patterns and not self._fast
            else None
        )
        self._result_fields = {k.lower(): tuple(v) for k, v in (result_fields or {}).items()}
        self._max_mask_chars = max(64, max_mask_chars)
        self._fold = bytes.maketrans(_DIGITS, b"0" * 10)
        self._seen: dict[int, int] = {}

    @property
    def fast_masks(self) -> bool:
        """The default masks alone (the compiled core's masking applies)."""
        return self._fast

    def args_hash(self, tool: str, arguments: Any) -> int:
        """Hash of (tool, canonical arguments): the identity of a call."""
        return self.call_key(tool, arguments)[0]

    def call_key(self, tool: str, arguments: Any) -> tuple[int, bytes]:
        """(:meth:`args_hash`, the canonical arguments it hashed): the session reuses the
        canonical JSON (near_duplicate_edit) instead of dumping the arguments twice."""
        raw = canonical_json(arguments)
        return hash_bytes(tool.encode("utf-8", "replace") + b"\x00" + raw), raw

    def mask(self, text: str) -> str:
        """``text`` with volatile content replaced by ``#``."""
        if self._fast:
            if text.isascii():  # a flag of the str object: free
                return _mask_ascii(text)
            # Every default pattern needs a digit: text without one (code, prose) is skipped
            # at the cost of one scan.
            if _ANY_DIGIT(text) is None:
                return text
            text = mask_temp_names(mask_tokens(text))  # (every token and name has a digit)
            # The letter-led pass tries its alternatives at every a-f/p letter (slow on prose);
            # only run it when a candidate (7 hex characters in a row, or "pid") exists.
            if _letter_candidate(text):
                text = _LETTER_LED.sub(_PLACEHOLDER, text)
            text = _DIGIT_LED.sub(_MASK, text)
            return text.replace(_PLACEHOLDER, _MASK) if _PLACEHOLDER in text else text
        if self._tokens:
            text = mask_temp_names(mask_tokens(text))
        if self._mask is None:
            return text
        return self._mask.sub(_MASK, text)

    def result_text(self, tool: str, result: Any) -> str:
        """The result as text, after the tool's field picker (if any). Never raises."""
        try:
            return self._result_text(tool, result)
        except Exception:
            return canonical_json(result).decode("utf-8", "replace")

    def _result_text(self, tool: str, result: Any) -> str:
        fields = self._result_fields.get(tool.lower()) if self._result_fields else None
        if fields:
            structured = result
            if isinstance(result, str | bytes | bytearray):
                try:
                    structured = _loads(result if isinstance(result, str) else bytes(result))
                except ValueError:
                    structured = None
            if isinstance(structured, Mapping):
                result = {name: structured.get(name) for name in fields}
        if isinstance(result, str) and not result.lstrip().startswith(_JSON_OPENERS):
            return result
        # Structured results, and strings holding JSON, are canonicalised like arguments
        # (docs/detection.md: results likewise), so key order and whitespace do not make a new answer.
        return canonical_json(result).decode("utf-8", "replace")

    def result_hash(self, tool: str, result: Any) -> int:
        """Hash of the result with volatile content masked."""
        try:
            return self.text_hash(self.result_text(tool, result))
        except Exception:
            return hash_bytes(repr(type(result)).encode())

    def text_hash(self, text: str) -> int:
        """Hash of a result's text (see :meth:`result_text`) with volatile content masked."""
        try:
            if self._fast and text.isascii():  # the compiled core: masking costs ~1 ns a byte
                return _text_hash_ascii(text, self._max_mask_chars)
            # Loops repeat results verbatim: remember raw -> masked hashes (bounded, shared by
            # all sessions; hashes only) so a repeated answer is not masked again.
            raw = hash_bytes(text.encode("utf-8", "replace"))
            cached = self._seen.get(raw)
            if cached is not None:
                return cached
            limit = self._max_mask_chars
            if len(text) <= limit:
                value = hash_bytes(self.mask(text).encode("utf-8", "replace"))
            else:
                half = limit // 2
                head = self.mask(text[:half])
                tail = self.mask(text[-half:])
                middle = text[half:-half].encode("utf-8", "replace").translate(self._fold)
                value = hash_bytes(f"{head}\x00{tail}\x00".encode("utf-8", "replace") + middle)
            if len(self._seen) >= _SEEN_LIMIT:
                self._seen.clear()
            self._seen[raw] = value
            return value
        except Exception:  # never fail the caller: an odd text still gets a stable hash
            return hash_bytes(b"<unhashable result>")
