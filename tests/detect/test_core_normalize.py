"""The compiled normalisation (rust/cycleguard-core: json.rs, canon.rs, normalize.rs) against
the Python reference (detect/normalize.py), on generated values: canonical JSON byte for byte,
call keys, result texts and hashes. benchmarks/differential.py does the same over the corpus.
"""

from __future__ import annotations

import json
import math
import string
import sys

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_cycleguard import _core
from otel_cycleguard.detect.normalize import Normalizer, canonical_json

# JSON-like values of every exact type the core reads, with the edges orjson has: -0.0, NaN
# and infinities (null), ints at and beyond the 64-bit bounds, lone surrogates, control
# characters, non-ASCII keys.
_INTS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**63) - 1, 0]),
)
_FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e16, 1e15, 1e-5, 1e-6, 1e-7, 5e-324, 1e22]),
)
_TEXT = st.one_of(
    st.text(),
    st.text(alphabet=string.printable),
    st.text(alphabet=st.characters(codec="utf-8")),
    st.sampled_from(["", "\ud800", "a\udfffb", "\x00\x1f\x7f\u2028", "é😀"]),
)
_LEAVES = st.one_of(st.none(), st.booleans(), _INTS, _FLOATS, _TEXT)
VALUES = st.recursive(
    _LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=6),
        st.tuples(children, children),
        st.dictionaries(_TEXT, children, max_size=6),
    ),
    max_leaves=40,
)
# what the core leaves to Python: other types anywhere in the value
_ODD = st.one_of(
    st.sets(st.integers(), max_size=3),
    st.binary(max_size=8),
    st.builds(object),
    st.dictionaries(st.integers(), st.integers(), min_size=1, max_size=3),
)
ODD_VALUES = st.recursive(
    st.one_of(_LEAVES, _ODD),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(_TEXT, children, max_size=4)
    ),
    max_leaves=12,
)


def _plain(value: object) -> bool:
    """JSON-like, 64-bit ints, no lone surrogate: the core must answer itself."""
    if isinstance(value, str):
        return not any(0xD800 <= ord(c) < 0xE000 for c in value)
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return True
    if isinstance(value, int):
        return -(2**63) <= value <= 2**64 - 1
    if isinstance(value, list | tuple):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    return False


@settings(max_examples=1000, deadline=None)
@given(VALUES)
def test_canonical_json_of_values_is_the_python_one_byte_for_byte(value):
    rust = _core.canonical_json(value)
    if _plain(value) and not isinstance(value, str):
        assert rust is not None  # the core answers JSON-like values itself
    if rust is not None:
        assert rust == canonical_json(value)


@settings(max_examples=500, deadline=None)
@given(ODD_VALUES)
def test_values_the_core_cannot_read_are_left_to_python(value):
    rust = _core.canonical_json(value)
    if rust is not None:
        assert rust == canonical_json(value)


def _json_texts():
    def render(value, indent, ascii_only):
        try:
            return json.dumps(value, indent=indent, ensure_ascii=ascii_only, allow_nan=False)
        except (ValueError, TypeError):
            return "[]"

    return st.builds(
        render,
        st.recursive(
            st.one_of(
                st.none(),
                st.booleans(),
                _INTS,
                st.floats(allow_nan=False, allow_infinity=False),
                st.text(),
            ),
            lambda c: st.one_of(st.lists(c, max_size=5), st.dictionaries(st.text(), c, max_size=5)),
            max_leaves=25,
        ).filter(lambda v: isinstance(v, list | dict)),
        st.sampled_from([None, 0, 1, 2, "\t"]),
        st.booleans(),
    )


# near-JSON texts: JSON with a character changed, inserted or dropped (most are invalid)
@st.composite
def _mangled(draw):
    text = draw(_json_texts())
    at = draw(st.integers(0, len(text)))
    how = draw(st.sampled_from(["insert", "drop", "replace", "prefix", "suffix"]))
    junk = draw(
        st.sampled_from([*list(',:[]{}"\\ \t\n0-.eE+tfn\xa0\x1c\ufeff'), "NaN", "1e400", "\\ud800"])
    )
    if how == "insert":
        return text[:at] + junk + text[at:]
    if how == "drop":
        return text[:at] + text[at + 1 :]
    if how == "replace":
        return text[:at] + junk + text[at + 1 :]
    if how == "prefix":
        return junk + text
    return text + junk


@settings(max_examples=1000, deadline=None)
@given(
    st.one_of(_json_texts(), _mangled(), st.text(), st.from_regex(r"\s*[\[{].*", fullmatch=True))
)
def test_canonical_json_of_texts_parses_what_orjson_parses(text):
    rust = _core.canonical_json(text)
    assert (
        rust is not None
        or any(0xD800 <= ord(c) < 0xE000 for c in text)
        or text.count("[") + text.count("{") > 100
    )
    if rust is not None:
        assert rust == canonical_json(text)


@settings(max_examples=800, deadline=None)
@given(
    st.from_regex(r"-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,25})?([eE][+-]?[0-9]{1,3})?", fullmatch=True)
)
def test_numbers_are_read_and_written_as_orjson_does(number):
    for text in (f"[{number}]", f'{{"n": {number}}}'):
        assert _core.canonical_json(text) == canonical_json(text)


@settings(max_examples=3000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_are_written_in_orjsons_shortest_form(value):
    assert _core.canonical_json([value]) == orjson.dumps([value])


def test_python_space_is_the_cores_space():
    assert _core._class_chars("space") == "".join(
        c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()
    )


# -- the normaliser ------------------------------------------------------------------------

_TOOLS = st.sampled_from(["bash", "Bash", "get_details", "read", "ÉDIT", "t\udc80"])
_FIELDS = {"bash": ("exit_code", "output", "output"), "get_details": ("id",), "édit": ("a",)}


def _pair(py: Normalizer):
    return _core.Normalizer(py.fast_masks, dict(py._result_fields), py._max_mask_chars, py)


NORMALIZERS = [
    (py, _pair(py))
    for py in (
        Normalizer(),
        Normalizer((r"req-[a-z]+",)),
        Normalizer(result_fields=_FIELDS),
        Normalizer(max_mask_chars=64),
    )
]

_RESULT_TEXTS = st.one_of(
    st.text(),
    st.text(alphabet=string.printable + "µé"),
    st.builds(
        lambda d, pad: pad + json.dumps(d),
        st.dictionaries(
            st.sampled_from(["exit_code", "output", "id", "a", "x"]),
            _LEAVES.filter(lambda v: not (isinstance(v, float) and not math.isfinite(v))),
            max_size=4,
        ),
        st.sampled_from(["", " ", "\n"]),
    ),
    st.sampled_from(
        [
            "took 1.25s at 2024-01-02T03:04:05Z pid=42 sha deadbeef12",
            "line 11616 0x1F uuid 123e4567-e89b-12d3-a456-426614174000",
            "12 µs élan 2024/01/02",
            "[not json",
        ]
    ),
)


@settings(max_examples=600, deadline=None)
@given(_TOOLS, st.one_of(VALUES, ODD_VALUES, _RESULT_TEXTS, _json_texts()))
def test_call_keys_are_the_python_ones(tool, arguments):
    for py, rs in NORMALIZERS:
        assert rs.call_key(tool, arguments) == py.call_key(tool, arguments)


@settings(max_examples=600, deadline=None)
@given(_TOOLS, st.one_of(_RESULT_TEXTS, VALUES, ODD_VALUES, st.binary(max_size=30)))
def test_result_texts_and_hashes_are_the_python_ones(tool, result):
    for py, rs in NORMALIZERS:
        text = py.result_text(tool, result)
        assert rs.result_text(tool, result) == text
        assert rs.text_hash(text) == py.text_hash(text)
        assert rs.result_hash(tool, result) == py.result_hash(tool, result)


def test_the_picker_reads_json_results_and_dicts_alike():
    py, rs = NORMALIZERS[2]
    for result in ('{"output": "ok", "exit_code": 0, "x": 1}', {"exit_code": 0, "output": "ok"}):
        assert (
            rs.result_text("BASH", result)
            == py.result_text("BASH", result)
            == ('{"exit_code":0,"output":"ok"}')
        )


class _Key(str):
    """A str subclass: its text may not be what the core would read from it."""


@pytest.mark.parametrize(
    "value",
    [
        {"b": 1, "a": {"d": [1, "x"], "c": None}},
        {f"k{i}": i for i in range(8)},  # as many keys as the core sorts on the stack
        {f"k{i}": {"n": i} for i in range(9)},  # one more: the general path
        {"a\ud800": 1, "b": 2},  # a lone surrogate in a key
        {"a": 1, 2: 3},  # a key that is not a str
        {_Key("a"): 1, "b": 2},  # a key of a str subclass
        {"z": {"y": {"x": '\n"\\\x01é'}}},
    ],
)
def test_dicts_are_written_as_python_writes_them_or_left_to_python(value):
    """The core reads a dict's entries borrowed (no reference taken a key); a key it cannot
    read as an exact str makes it leave the whole value to Python."""
    rust = _core.canonical_json(value)
    plain = all(type(k) is str for k in value) and _plain(value)
    assert (rust is not None) == plain
    if rust is not None:
        assert rust == canonical_json(value)
