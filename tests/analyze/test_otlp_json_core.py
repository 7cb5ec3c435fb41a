"""The core's OTLP/JSON decoder (``spans_from_json``) gives what orjson and the Python
conversion (``spans_from_resource_spans``) give, span for span and field for field, and leaves
to that path every document it is not sure to read the same way.

The variants are the ones the Python fast paths are held to (tests/analyze/test_fast_paths.py):
each field set to each odd value, each odd ``AnyValue``, odd statuses and events, random
mutations; here every one of them is also written as one JSON document and given to the core.
"""

from __future__ import annotations

import gzip
import itertools
import json
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from _corpus import CORPUS

from otel_cycleguard.analyze import TraceReader
from otel_cycleguard.analyze import readers as readers_module
from otel_cycleguard.service.convert import from_json, from_json_core, from_json_python
from otel_cycleguard.spans import SpanData
from otel_cycleguard.wire import otlp_json as otlp
from otel_cycleguard.wire.otlp_json import MAX_VALUE_DEPTH, spans_from_json
from tests.analyze.test_fast_paths import (
    ODD_ANY_VALUES,
    ODD_EVENTS,
    ODD_STATUSES,
    SPAN_FIELDS,
    good_span,
    mutated_spans,
    odd_field_spans,
)
from tests.service.test_convert_core import same

# -- comparing ---------------------------------------------------------------------------


def python_path(document: bytes) -> tuple[list[SpanData], list[str]] | None:
    """The reference: orjson, then the Python conversion; None when it is no OTLP document."""
    try:
        data = orjson.loads(document)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("resourceSpans"), list):
        return None
    problems: list[str] = []
    return list(otlp.spans_from_resource_spans(data["resourceSpans"], problems.append)), problems


def check(document: bytes, *, fast: bool | None = None) -> None:
    """The core answers as the Python path, or leaves the document to it.

    ``fast``: True when the core must take the document, False when it must leave it.
    """
    got = spans_from_json(document)
    want = python_path(document)
    if fast is not None:
        assert (got is not None) == fast, document[:300]
    if got is None:
        return
    assert want is not None, document[:300]
    want_spans, problems = want
    assert problems == [], (problems, document[:300])  # the core took a document with a skip
    assert len(got) == len(want_spans)
    for g, w in zip(got, want_spans, strict=True):
        assert type(g) is SpanData
        assert same(g, w), (g, w)
    # one resource dict per resourceSpans entry, shared by its spans, as in the Python path
    assert sharing(got) == sharing(want_spans)


def sharing(spans: list[SpanData]) -> list[int]:
    first: dict[int, int] = {}
    return [first.setdefault(id(s.resource), n) for n, s in enumerate(spans)]


def document(*spans: dict[str, Any], resource: Any = None) -> bytes:
    block: dict[str, Any] = {"scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}
    if resource is not None:
        block["resource"] = resource
    return json.dumps({"resourceSpans": [block]}).encode()


# -- the usual documents -----------------------------------------------------------------


class TestUsualDocuments:
    def test_a_well_formed_span_is_read_by_the_core(self) -> None:
        check(document(good_span(), resource={"attributes": []}), fast=True)

    def test_several_blocks_keep_their_own_resource(self) -> None:
        resources = [
            {"attributes": [{"key": "service.name", "value": {"stringValue": name}}]}
            for name in ("a", "b")
        ]
        body = {
            "resourceSpans": [
                {"resource": r, "scopeSpans": [{"spans": [good_span(), good_span()]}]}
                for r in resources
            ]
        }
        spans = spans_from_json(json.dumps(body).encode())
        assert spans is not None
        assert [s.resource["service.name"] for s in spans] == ["a", "a", "b", "b"]
        check(json.dumps(body).encode(), fast=True)

    def test_nanosecond_times_and_large_integers_stay_exact(self) -> None:
        span = good_span()
        span["startTimeUnixNano"] = "1704067200123456789"
        span["endTimeUnixNano"] = 1704067200123456790
        span["attributes"] = [
            {"key": "big", "value": {"intValue": "-9223372036854775808"}},
            {"key": "u", "value": {"intValue": 18446744073709551615}},
        ]
        (read,) = spans_from_json(document(span)) or [None]
        assert read is not None
        assert read.start_ns == 1704067200123456789 and read.end_ns == 1704067200123456790
        assert read.attributes == {"big": -(2**63), "u": 2**64 - 1}
        check(document(span), fast=True)

    def test_escaped_and_non_ascii_strings_are_read_as_orjson_reads_them(self) -> None:
        span = good_span()
        span["name"] = 'exécute "tool" \\ \u2603 \U0001f600'
        span["attributes"] = [{"key": "k\n", "value": {"stringValue": "tab\there \u00e9"}}]
        check(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode())
        check(document(span, resource={}), fast=True)

    def test_a_known_key_given_twice_is_left_to_python_an_unknown_one_is_not(self) -> None:
        text = document(good_span()).decode()
        doubled = text.replace('"name": "execute_tool search"', '"name": "a", "name": "b"')
        check(doubled.encode(), fast=False)  # orjson keeps the last: Python decides
        check(text.replace('"kind": 1', '"kind": 1, "kind": 2').encode(), fast=True)
        escaped = text.replace('"name": "execute_tool search"', '"n\\u0061me": "b"')
        check(escaped.encode(), fast=True)
        assert [s.name for s in spans_from_json(escaped.encode()) or []] == ["b"]

    def test_values_nested_past_the_limit_are_cut_as_in_python(self) -> None:
        for depth in (MAX_VALUE_DEPTH - 1, MAX_VALUE_DEPTH, MAX_VALUE_DEPTH + 1):
            value: dict[str, Any] = {"stringValue": "leaf"}
            for level in range(depth):
                if level % 2:
                    value = {"arrayValue": {"values": [value]}}
                else:
                    value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
            span = good_span()
            span["attributes"] = [{"key": "deep", "value": value}]
            check(document(span))

    def test_empty_and_missing_lists_read_as_python_reads_them(self) -> None:
        for body in (
            {"resourceSpans": []},
            {"resourceSpans": [{}]},
            {"resourceSpans": [{"scopeSpans": []}]},
            {"resourceSpans": [{"scopeSpans": [{}]}]},
            {"resourceSpans": [{"scopeSpans": None, "instrumentationLibrarySpans": []}]},
        ):
            check(json.dumps(body).encode(), fast=True)


# -- what the core leaves to Python ------------------------------------------------------


class TestLeftToPython:
    @pytest.mark.parametrize(
        "body",
        [
            b"",
            b"not json",
            b'{"resourceSpans": [}',
            b"\xef\xbb\xbf{}",
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "\xff"}]}]}]}',
            b"[]",
            b"{}",
            b'{"batches": []}',
            b'{"resourceSpans": null}',
            b'{"resourceSpans": {}}',
            b'{"resourceSpans": "x"}',
            b"[" * 200 + b"]" * 200,
        ],
    )
    def test_no_otlp_document_is_taken(self, body: bytes) -> None:
        assert spans_from_json(body) is None

    def test_a_document_with_a_span_python_skips_is_left_whole(self) -> None:
        bad = good_span()
        bad["traceId"] = "0" * 32
        body = document(good_span(), bad)
        assert spans_from_json(body) is None
        result = python_path(body)
        assert result is not None
        spans, problems = result
        assert len(spans) == 1 and len(problems) == 1

    def test_only_bytes_are_read(self) -> None:
        assert spans_from_json(bytearray(document(good_span()))) is None  # type: ignore[arg-type]


# -- every odd variant -------------------------------------------------------------------


class TestOddVariants:
    @pytest.mark.parametrize("field", SPAN_FIELDS)
    def test_every_odd_field_value(self, field: str) -> None:
        for span in odd_field_spans(field):
            check(document(span, good_span()))

    def test_every_odd_attribute_value(self) -> None:
        for value in ODD_ANY_VALUES:
            span = good_span()
            span["attributes"] = [
                {"key": "k", "value": value},
                {"key": "s", "value": {"stringValue": "v"}},
            ]
            check(document(span))
            check(document(good_span(), resource={"attributes": span["attributes"]}))

    def test_odd_statuses_events_and_resources(self) -> None:
        for status, event_list in itertools.product(ODD_STATUSES, ODD_EVENTS):
            span = good_span()
            span["status"] = status
            span["events"] = event_list
            check(document(span))
        for resource in ([], "x", {"attributes": None}, {"attributes": "x"}, 5):
            check(document(good_span(), resource=resource))

    def test_random_mutations(self) -> None:
        rng = random.Random(11)
        taken = 0
        for _ in range(1500):
            spans = mutated_spans(rng)
            body = document(*spans)
            check(body)
            taken += spans_from_json(body) is not None
        assert 100 < taken < 1400  # both paths were exercised

    def test_cut_and_corrupted_bytes_are_never_taken_for_other_spans(self) -> None:
        """Truncated, spliced and byte-flipped documents: the core gives the Python answer
        or leaves them (it never takes text orjson refuses, and never crashes)."""
        rng = random.Random(5)
        span = good_span()
        span["events"] = [{"name": "e", "attributes": [{"key": "a", "value": {"intValue": 1}}]}]
        base = document(span, good_span(), resource={"attributes": []})
        taken = 0
        for _ in range(3000):
            data = bytearray(base)
            kind = rng.randrange(3)
            if kind == 0:
                data = data[: rng.randrange(len(data))]
            elif kind == 1:
                for _ in range(rng.randrange(1, 4)):
                    data[rng.randrange(len(data))] = rng.randrange(256)
            else:
                at = rng.randrange(len(data))
                data[at:at] = rng.choice([b",", b"}", b"]", b'"', b"\\", b"null", b"\x00", b" "])
            check(bytes(data))
            taken += spans_from_json(bytes(data)) is not None
        assert taken > 0  # some mutations (inside strings, spaces) are still documents


# -- real runs and the callers -----------------------------------------------------------


def corpus_lines(limit: int) -> list[bytes]:
    files = sorted(Path(CORPUS).glob("*.otlp.jsonl.gz")) if Path(CORPUS).is_dir() else []
    lines: list[bytes] = []
    for path in files:
        with gzip.open(path, "rb") as handle:
            for number, line in enumerate(handle):
                if number % 7 == 0:
                    lines.append(line)
                if len(lines) >= limit * (files.index(path) + 1) / len(files):
                    break
    return lines


@pytest.mark.skipif(not Path(CORPUS).is_dir(), reason="the development corpus is not here")
def test_real_runs_of_the_corpus_are_read_by_the_core_as_by_python() -> None:
    lines = corpus_lines(120)
    assert len(lines) >= 20
    for line in lines:
        check(line, fast=True)


def test_the_reader_gives_the_same_spans_and_problems_with_the_core_or_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = good_span()
    bad["spanId"] = "not an id"
    lines = [
        document(good_span()),
        b"{broken",
        document(bad, good_span()),
        document(good_span(), resource={"attributes": []}),
        b'{"something": "else"}',
    ]
    path = tmp_path / "traces.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")

    def read() -> tuple[list[list[SpanData]], list[Any], dict[str, int]]:
        problems: list[Any] = []
        reader = TraceReader([str(path)], on_skip=problems.append)
        documents = list(reader.iter_documents())
        return documents, problems, dict(reader.formats)

    with_core = read()
    monkeypatch.setattr(readers_module, "spans_from_json", lambda _line: None)
    without = read()
    assert with_core[1] == without[1] and with_core[2] == without[2]
    assert [len(d) for d in with_core[0]] == [len(d) for d in without[0]] == [1, 1, 1]
    for got, want in zip(with_core[0], without[0], strict=True):
        assert all(same(g, w) for g, w in zip(got, want, strict=True))
    assert [p.line for p in with_core[1]] == [2, 3, 5]


def test_the_service_reads_a_json_body_with_the_core_as_without() -> None:
    body = document(good_span(), good_span(), resource={"attributes": []})
    fast = from_json_core(body)
    slow = from_json_python(body)
    assert fast is not None
    assert (fast.rejected, fast.reason) == (slow.rejected, slow.reason) == (0, None)
    assert len(fast.spans) == 2 and all(map(same, fast.spans, slow.spans))
    assert all(map(same, from_json(body).spans, slow.spans))


def test_the_service_leaves_a_body_with_a_rejected_span_to_python() -> None:
    bad = good_span()
    bad["name"] = ""
    body = document(good_span(), bad)
    assert from_json_core(body) is None
    converted = from_json(body)
    assert len(converted.spans) == 1 and converted.rejected == 1
    assert converted.reason is not None and "without a name" in converted.reason


def test_loads_shared_parses_a_repeated_text_once_and_any_other_text_again() -> None:
    from otel_cycleguard.wire._json import loads_shared

    text = json.dumps([{"role": "assistant", "parts": []}])
    first = loads_shared(text)
    assert loads_shared(text) is first  # the same text object: the remembered value
    copy = "".join(list(text))  # equal, another object: parsed afresh, equal value
    assert copy is not text
    again = loads_shared(copy)
    assert again == first and again is not first
    with pytest.raises(ValueError):
        loads_shared("{not json")
    assert loads_shared(copy) is again  # an error remembers nothing
