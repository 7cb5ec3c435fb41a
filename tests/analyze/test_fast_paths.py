"""The readers' fast paths give exactly what the plain, checked code gives.

The oracle below is the OTLP JSON conversion as it was before the fast paths (every field
checked in order, each value unwrapped by a chain of ``in`` tests); the converters must agree
with it on the real encoder's output and on every malformed variant, down to the wording of
the problems reported.
"""

from __future__ import annotations

import base64
import binascii
import copy
import itertools
import json
import random
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan

from otel_cycleguard.analyze import InputProblem, Replayer, TraceReader
from otel_cycleguard.analyze.problems import BadSpan
from otel_cycleguard.spans import SpanData, SpanEvent
from otel_cycleguard.wire import otlp_json as otlp
from otel_cycleguard.wire._spandata import FIELDS, new_span
from otel_cycleguard.wire.ids import hex_id
from tests.analyze.test_readers import fixture_sdk_spans, ids_to_hex  # noqa: F401 - the fixture

# -- the oracle: the conversion without fast paths ----------------------------------------

_HEX = re.compile(r"[0-9a-fA-F]+")
_ERROR_CODES = frozenset({2, "2", "STATUS_CODE_ERROR", "ERROR"})


def ref_hex_id(value: object, size: int, *, pad: bool = False) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"id is not a string: {value!r}")
    width = 2 * size
    if (len(value) == width or (pad and len(value) < width)) and _HEX.fullmatch(value):
        text = value.lower().zfill(width)
    else:
        padded = value + "=" * (-len(value) % 4)
        altchars = b"-_" if ("-" in value or "_" in value) else None
        try:
            raw = base64.b64decode(padded, altchars=altchars, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) != size:
            raise ValueError(f"not a {size}-byte id in hex or base64: {value!r}")
        text = raw.hex()
    return None if not text.strip("0") else text


def ref_any_value(value: Mapping[str, Any]) -> Any:
    if "stringValue" in value:
        text = value["stringValue"]
        if not isinstance(text, str):
            raise ValueError(f"stringValue is not a string: {text!r}")
        return text
    if "intValue" in value:
        number = value["intValue"]
        if isinstance(number, bool) or not isinstance(number, (int, str)):
            raise ValueError(f"intValue is not an integer: {number!r}")
        return int(number)
    if "boolValue" in value:
        flag = value["boolValue"]
        if not isinstance(flag, bool):
            raise ValueError(f"boolValue is not a boolean: {flag!r}")
        return flag
    if "doubleValue" in value:
        real = value["doubleValue"]
        if isinstance(real, bool) or not isinstance(real, (int, float, str)):
            raise ValueError(f"doubleValue is not a number: {real!r}")
        return float(real)
    if "arrayValue" in value:
        return tuple(ref_any_value(item) for item in value["arrayValue"].get("values", ()))
    if "kvlistValue" in value:
        return ref_attributes(value["kvlistValue"].get("values", ()))
    if "bytesValue" in value:
        return str(value["bytesValue"])
    return None


def ref_attributes(items: Any) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for item in items or ():
        key = item["key"]
        try:
            value = ref_any_value(item.get("value") or {})
        except (ValueError, TypeError, AttributeError) as exc:
            raise ValueError(f"attribute {key!r}: {exc}") from exc
        if value is not None:
            result[key] = value
    return result


def _describe(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing field {exc}"
    return str(exc) or type(exc).__name__


def ref_span(span: Mapping[str, Any], resource: Mapping[str, Any]) -> SpanData:
    name = span.get("name")
    label = f"span {name!r}" if name else "span"
    try:
        trace_id = ref_hex_id(span.get("traceId"), 16)
        span_id = ref_hex_id(span.get("spanId"), 8)
        if trace_id is None:
            raise BadSpan(f"{label} without traceId")
        if span_id is None:
            raise BadSpan(f"{label} without spanId")
        if not name or not isinstance(name, str):
            raise BadSpan(f"span {span_id} without a name")
        status = span.get("status") or {}
        message = status.get("message") or None
        return SpanData(
            trace_id=trace_id,
            span_id=span_id,
            name=name,
            parent_span_id=ref_hex_id(span.get("parentSpanId"), 8),
            start_ns=int(span.get("startTimeUnixNano") or 0),
            end_ns=int(span.get("endTimeUnixNano") or 0),
            attributes=ref_attributes(span.get("attributes")),
            events=tuple(
                SpanEvent(
                    name=str(event.get("name") or ""),
                    attributes=ref_attributes(event.get("attributes")),
                    time_ns=int(event.get("timeUnixNano") or 0),
                )
                for event in span.get("events") or ()
            ),
            status_error=status.get("code") in _ERROR_CODES,
            status_message=str(message) if message is not None else None,
            resource=resource,
        )
    except BadSpan:
        raise
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise BadSpan(f"{label}: {_describe(exc)}") from exc


def ref_spans(resource_spans: Any, report: Any) -> Iterator[SpanData]:
    for block in resource_spans or ():
        try:
            resource = ref_attributes((block.get("resource") or {}).get("attributes"))
            scopes = block.get("scopeSpans") or block.get("instrumentationLibrarySpans") or ()
            span_lists = [scope.get("spans") or () for scope in scopes]
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            report(f"resourceSpans entry skipped: {_describe(exc)}")
            continue
        for spans in span_lists:
            if not isinstance(spans, (list, tuple)):
                report(f"scopeSpans entry skipped: spans is {type(spans).__name__}, not a list")
                continue
            for span in spans:
                try:
                    converted = ref_span(span, resource)
                except BadSpan as exc:
                    report(str(exc))
                    continue
                except AttributeError:
                    report(f"span entry is not an object: {span!r:.80}")
                    continue
                yield converted


# -- helpers ------------------------------------------------------------------------------


def outcome(fn: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """("ok", repr) or ("error", (type, message)), comparable across implementations.

    The repr tells 1, 1.0 and True apart, and a NaN equals itself in it.
    """
    try:
        return "ok", repr(fn(*args, **kwargs))
    except Exception as exc:  # the type and message are what is compared
        return "error", (type(exc), str(exc))


def run_both(resource_spans: Any) -> tuple[Any, Any]:
    """(span reprs, problems) from the converter and from the oracle."""
    got: list[Any] = []
    want: list[Any] = []
    got_spans = list(otlp.spans_from_resource_spans(copy.deepcopy(resource_spans), got.append))
    want_spans = list(ref_spans(copy.deepcopy(resource_spans), want.append))
    return (list(map(repr, got_spans)), got), (list(map(repr, want_spans)), want)


def assert_same_span(got: SpanData, want: SpanData) -> None:
    assert got == want
    assert type(got) is SpanData
    # equal values of equal types, field by field (1 == 1.0 == True would hide a difference)
    for name in FIELDS:
        assert type(getattr(got, name)) is type(getattr(want, name)), name
    for key, value in want.attributes.items():
        assert type(got.attributes[key]) is type(value), key


TRACE = "5b8efff798038103d269b633813fc60c"
SPAN = "eee19b7ec3c1b174"
PARENT = "a1b2c3d4e5f60718"


def good_span() -> dict[str, Any]:
    return {
        "traceId": TRACE,
        "spanId": SPAN,
        "parentSpanId": PARENT,
        "name": "execute_tool search",
        "kind": 1,
        "startTimeUnixNano": "1704067200000000000",
        "endTimeUnixNano": "1704067201000000000",
        "attributes": [
            {"key": "gen_ai.tool.name", "value": {"stringValue": "search"}},
            {"key": "n", "value": {"intValue": "42"}},
            {"key": "flag", "value": {"boolValue": True}},
            {"key": "x", "value": {"doubleValue": 1.5}},
            {"key": "list", "value": {"arrayValue": {"values": [{"intValue": 1}]}}},
        ],
        "events": [{"name": "retry", "timeUnixNano": "5", "attributes": []}],
        "status": {"code": 2, "message": "boom"},
    }


#: Values each field is set to in the malformed variants.
ODD_VALUES: list[Any] = [
    None,
    "",
    0,
    1,
    True,
    False,
    1.5,
    [],
    [1],
    {},
    {"a": 1},
    "x",
    "00000000000000000000000000000000",
    "0000000000000000",
    TRACE.upper(),
    SPAN.upper(),
    "W47/95gDgQPSabYzgT/GDA==",
    "7uGbfsPBsXQ=",
    "7uGbfsPBsXQ",
    "7uGb-sPBsXQ",
    TRACE[:-1] + "g",
    SPAN[:-1] + " ",
    "0x" + SPAN[2:],
    "1_" + SPAN[2:],
    "१२३",
    " 12 ",
    "-5",
    "1e3",
    "NaN",
]

ODD_ANY_VALUES: list[Any] = [
    None,
    {},
    [],
    "",
    "stringValue",
    ["stringValue"],
    5,
    {"stringValue": None},
    {"stringValue": 5},
    {"stringValue": "a", "intValue": "1"},
    {"intValue": "1", "stringValue": "a"},
    {"intValue": None},
    {"intValue": True},
    {"intValue": "x"},
    {"intValue": " 7 "},
    {"intValue": "-7"},
    {"intValue": "१२"},
    {"intValue": 1.5},
    {"intValue": "1", "boolValue": True},
    {"boolValue": 1},
    {"doubleValue": True},
    {"doubleValue": "x"},
    {"doubleValue": "NaN"},
    {"arrayValue": []},
    {"arrayValue": {"values": [{"stringValue": 1}]}},
    {"kvlistValue": {"values": [{"value": {"stringValue": "a"}}]}},
    {"kvlistValue": {"values": [{"key": ["k"], "value": {"stringValue": "a"}}]}},
    {"bytesValue": 5},
    {"unknownValue": 1},
    {"unknownValue": 1, "stringValue": "s"},
]


#: Values a span's ``status`` is set to in the malformed variants.
ODD_STATUSES: list[Any] = [
    {"code": "STATUS_CODE_ERROR"},
    {"code": "ERROR", "message": "m"},
    {"code": "2"},
    {"code": 2.0},
    {"code": True},
    {"code": [2]},
    {"message": 5},
    {"message": ""},
    {"code": 1, "message": "fine"},
    "ERROR",
    [2],
    0,
]

#: Values a span's ``events`` are set to in the malformed variants.
ODD_EVENTS: list[Any] = [
    [{"name": None}],
    [{"name": 5, "timeUnixNano": 3}],
    [{"name": "e", "timeUnixNano": "12"}],
    ["x"],
    "ab",
    {"name": "e"},
    [{"attributes": [{"key": "a", "value": {"intValue": "1"}}]}],
]

#: The span fields the variants change.
SPAN_FIELDS = [
    "traceId",
    "spanId",
    "parentSpanId",
    "name",
    "startTimeUnixNano",
    "endTimeUnixNano",
    "attributes",
    "events",
    "status",
]


def odd_field_spans(field: str) -> Iterator[dict[str, Any]]:
    """A good span with ``field`` set to each odd value in turn, then without it."""
    for value in ODD_VALUES:
        span = good_span()
        span[field] = value
        yield span
    span = good_span()
    del span[field]
    yield span


def mutated_spans(rng: random.Random) -> list[dict[str, Any]]:
    """One to three good spans, each with up to two fields changed or dropped at random."""
    fields = list(good_span())
    spans = []
    for _ in range(rng.randrange(1, 4)):
        span = good_span()
        for _ in range(rng.randrange(0, 3)):
            field = rng.choice(fields)
            if rng.random() < 0.2:
                span.pop(field, None)
            else:
                span[field] = rng.choice(ODD_VALUES)
        if rng.random() < 0.3:
            span["attributes"] = [
                {"key": "k", "value": rng.choice(ODD_ANY_VALUES)},
                {"key": "s", "value": {"stringValue": "v"}},
            ]
        spans.append(span)
    return spans


# -- tests --------------------------------------------------------------------------------


class TestOtlpJson:
    def test_real_encoder_output_converts_like_the_oracle(
        self, sdk_spans: list[ReadableSpan]
    ) -> None:
        """Hex ids (the spec) and base64 ids (the protobuf mapping), from the real encoder."""
        mapping = MessageToDict(encode_spans(sdk_spans))
        for document in (ids_to_hex(mapping), mapping):
            got_problems: list[str] = []
            got = list(
                otlp.spans_from_resource_spans(document["resourceSpans"], got_problems.append)
            )
            want = list(ref_spans(document["resourceSpans"], got_problems.append))
            assert len(got) == len(want) == len(sdk_spans)
            for one, other in zip(got, want, strict=True):
                assert_same_span(one, other)
            assert got_problems == []

    @pytest.mark.parametrize("field", SPAN_FIELDS)
    def test_every_odd_field_value_gives_the_oracle_result(self, field: str) -> None:
        for span in odd_field_spans(field):
            value = span.get(field, "<missing>")
            (got, got_problems), (want, want_problems) = run_both(
                [{"scopeSpans": [{"spans": [span, good_span()]}]}]
            )
            assert got_problems == want_problems, (field, value)
            assert got == want, (field, value)
            direct = outcome(otlp.span_from_otlp, span, {})
            assert direct == outcome(ref_span, span, {}), (field, value)

    def test_every_odd_attribute_value_gives_the_oracle_result(self) -> None:
        for value in ODD_ANY_VALUES:
            items = [{"key": "k", "value": value}, {"key": "s", "value": {"stringValue": "v"}}]
            assert outcome(otlp.attributes, items) == outcome(ref_attributes, items), value
            if isinstance(value, dict):
                assert outcome(otlp.any_value, value) == outcome(ref_any_value, value), value
            span = good_span()
            span["attributes"] = items
            (got, got_problems), (want, want_problems) = run_both(
                [{"scopeSpans": [{"spans": [span]}]}]
            )
            assert (got, got_problems) == (want, want_problems), value

    def test_odd_status_and_events(self) -> None:
        for status, event_list in itertools.product(ODD_STATUSES, ODD_EVENTS):
            span = good_span()
            span["status"] = status
            span["events"] = event_list
            (got, got_problems), (want, want_problems) = run_both(
                [{"scopeSpans": [{"spans": [span]}]}]
            )
            assert (got, got_problems) == (want, want_problems), (status, event_list)

    def test_non_object_entries_and_blocks(self) -> None:
        blocks: list[Any] = [
            [{"scopeSpans": [{"spans": [None, 5, "x", [good_span()], good_span()]}]}],
            [None, {"scopeSpans": None}, {"scopeSpans": [{"spans": None}]}],
            [{"resource": {"attributes": [{"key": "a"}]}, "scopeSpans": []}],
            [{"instrumentationLibrarySpans": [{"spans": [good_span()]}]}],
        ]
        for resource_spans in blocks:
            assert run_both(resource_spans)[0] == run_both(resource_spans)[1]

    def test_random_mutations_agree_with_the_oracle(self) -> None:
        rng = random.Random(7)
        for _ in range(1500):
            spans = mutated_spans(rng)
            (got, got_problems), (want, want_problems) = run_both(
                [{"scopeSpans": [{"spans": spans}]}]
            )
            assert got_problems == want_problems, spans
            assert got == want, spans

    def test_the_id_memo_does_not_leak_between_spans(self) -> None:
        """A remembered trace or parent id is reused only for the very same text."""
        first = good_span()
        second = good_span()
        second["traceId"] = ""
        third = good_span()
        third["parentSpanId"] = PARENT.upper()
        fourth = good_span()
        fourth["traceId"] = None
        (got, got_problems), (want, want_problems) = run_both(
            [{"scopeSpans": [{"spans": [first, second, third, first, fourth]}]}]
        )
        assert (got, got_problems) == (want, want_problems)
        assert len(got) == 3 and len(got_problems) == 2


class TestIds:
    @pytest.mark.parametrize("pad", [False, True])
    @pytest.mark.parametrize("size", [8, 16])
    def test_hex_id_agrees_with_the_oracle(self, size: int, pad: bool) -> None:
        for value in [*ODD_VALUES, TRACE, SPAN, "abc", "ABC", "0" * 2 * size, "f" * 2 * size]:
            assert outcome(hex_id, value, size, pad=pad) == outcome(
                ref_hex_id, value, size, pad=pad
            ), value


class TestNewSpan:
    def test_new_span_is_a_plain_span_data(self) -> None:
        values = (TRACE, SPAN, "n", None, 1, 2, {"a": 1}, (SpanEvent("e"),), True, "m", {})
        made = new_span(*values)
        built = SpanData(*values)
        assert type(made) is SpanData
        assert made == built and repr(made) == repr(built)
        assert tuple(getattr(made, name) for name in FIELDS) == values
        with pytest.raises(AttributeError):
            made.name = "other"  # type: ignore[misc]

    def test_new_span_takes_every_field(self) -> None:
        with pytest.raises(TypeError):
            new_span(TRACE, SPAN, "n")


class TestDocuments:
    def test_iter_documents_reads_and_counts_like_iterating_spans(
        self, sdk_spans: list[ReadableSpan], tmp_path: Path
    ) -> None:
        document = json.dumps(ids_to_hex(MessageToDict(encode_spans(sdk_spans))))
        broken = document.replace('"spanId"', '"spanID"', 2)  # two spans skipped
        empty = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "x"}]}]}]})
        path = tmp_path / "export.jsonl"
        path.write_text("\n".join([document, "not json", broken, empty, document]) + "\n")

        problems: list[InputProblem] = []
        by_span = TraceReader([str(path)], on_skip=problems.append)
        spans = list(by_span)
        batched_problems: list[InputProblem] = []
        by_document = TraceReader([str(path)], on_skip=batched_problems.append)
        documents = list(by_document.iter_documents())

        assert [span for batch in documents for span in batch] == spans
        assert [len(batch) for batch in documents] == [
            len(sdk_spans),
            len(sdk_spans) - 2,
            0,
            len(sdk_spans),
        ]
        assert batched_problems == problems and len(problems) == 4
        for attribute in ("spans_read", "documents", "formats", "problems"):
            assert getattr(by_document, attribute) == getattr(by_span, attribute), attribute

    def test_add_all_is_add_span_by_span(self, sdk_spans: list[ReadableSpan]) -> None:
        spans = list(
            otlp.spans_from_resource_spans(
                ids_to_hex(MessageToDict(encode_spans(sdk_spans)))["resourceSpans"], print
            )
        )
        one, many = Replayer(max_spans_in_flight=2), Replayer(max_spans_in_flight=2)
        for span in spans * 3:
            one.add(span)
        many.add_all(spans * 3)
        assert many.spans_seen == one.spans_seen == 3 * len(spans)
        assert many._in_flight == one._in_flight
        assert list(many._traces) == list(one._traces)
        assert repr(many.finish()) == repr(one.finish())


class TestSessionHint:
    def test_the_c_speed_shortcut_agrees_with_the_full_lookup(self, monkeypatch) -> None:
        """session_hint answers None without looking only when no key it reads is set."""
        from otel_cycleguard import conventions

        keys = (
            {
                value
                for name in dir(conventions)
                for constant in [getattr(conventions, name)]
                for value in (constant if isinstance(constant, tuple) else (constant,))
                if isinstance(value, str) and "." in value
            }
            | set(conventions.HINT_KEYS)
            | {"session", "conversation.id", "gen_ai.agent.name"}
        )
        values: list[Any] = ["s1", "", 7, 0, None, True]
        cases = [{"other": "x", key: value} for key in sorted(keys) for value in values]
        fast = [conventions.session_hint(attributes) for attributes in cases]
        # with every candidate key declared, the shortcut never answers: the full lookup does
        monkeypatch.setattr(conventions, "HINT_KEYS", frozenset(keys | {"other"}))
        assert fast == [conventions.session_hint(attributes) for attributes in cases]
        assert conventions.session_hint({"gen_ai.conversation.id": "c"}) == "c"
