"""The core's protobuf decoder (``from_protobuf_core``) gives what the Python path
(``from_protobuf_upb``: upb and ``from_request``) gives, span for span and field for field,
and leaves to that path whatever it is not sure to read as upb does."""

from __future__ import annotations

import dataclasses
import math
import random
import struct
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, StatusCode, TraceFlags
from opentelemetry.trace import Status as SdkStatus

from otel_cycleguard import _core
from otel_cycleguard.service.convert import (
    Converted,
    from_protobuf,
    from_protobuf_core,
    from_protobuf_upb,
)
from otel_cycleguard.spans import SpanData, SpanEvent
from otel_cycleguard.wire._spandata import FIELDS
from otel_cycleguard.wire.otlp_json import MAX_VALUE_DEPTH

# -- comparing ---------------------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (1, 1.0 and True differ; dict order and
    NaN and -0.0 count)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, (SpanData, SpanEvent)):
        return all(same(getattr(a, f), getattr(b, f)) for f in a.__slots__)
    return bool(a == b)


def outcome(convert: Any, body: bytes) -> Converted | str:
    try:
        return convert(body)
    except ValueError as exc:
        return f"ValueError: {exc}"


def assert_same(got: Converted | str, want: Converted | str) -> None:
    if isinstance(want, str) or isinstance(got, str):
        assert got == want
        return
    assert (got.rejected, got.reason) == (want.rejected, want.reason)
    assert len(got.spans) == len(want.spans)
    for g, w in zip(got.spans, want.spans, strict=True):
        assert type(g) is SpanData
        for name in FIELDS:
            assert same(getattr(g, name), getattr(w, name)), (name, g, w)
    # one resource dict per ResourceSpans, shared by its spans, as in the Python path
    assert sharing(got) == sharing(want)


def sharing(converted: Converted) -> list[int]:
    first: dict[int, int] = {}
    return [first.setdefault(id(s.resource), n) for n, s in enumerate(converted.spans)]


def check(body: bytes, *, fast: bool) -> None:
    """The core's answer is the Python path's; ``fast``: the core must give it itself."""
    want = outcome(from_protobuf_upb, body)
    core = from_protobuf_core(body)
    if fast:
        assert core is not None, "the core left a common request to the Python path"
        assert_same(core, want)
    assert_same(outcome(from_protobuf, body), want)


def checked_by_upb(body: bytes) -> None:
    """Input the core leaves to the Python path, which gives its own answer."""
    assert from_protobuf_core(body) is None
    assert_same(outcome(from_protobuf, body), outcome(from_protobuf_upb, body))


# -- requests from the SDK encoder -------------------------------------------------------


def nested(depth: int, kind: str) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value, 1] if kind == "array" else {"k": value, "n": 2}
    return value


def ctx(trace: int, span: int) -> SpanContext:
    return SpanContext(trace, span, is_remote=False, trace_flags=TraceFlags(1))


ATTRIBUTES: dict[str, Any] = {
    "gen_ai.operation.name": "execute_tool",
    "text": "héllo ✓ \U0001f600",
    "empty": "",
    "int": 7,
    "zero": 0,
    "negative": -(2**63),
    "big": 2**63 - 1,
    "true": True,
    "false": False,
    "float": 0.25,
    "float_zero": 0.0,
    "minus_zero": -0.0,
    "inf": float("inf"),
    "nan": float("nan"),
    "bytes": b"\x00\xff\x10",
    "empty_bytes": b"",
    "none": None,
    "strings": ("a", "", "b"),
    "mixed": ["a", 1, 2.5, True, None, b"\x01", {"x": None, "y": [1]}],
    "empty_list": [],
    "map": {"k": "v", "n": 1, "none": None, "inner": {"deep": (1, 2)}},
    "empty_map": {},
    "nested_arrays": nested(10, "array"),
    "nested_maps": nested(10, "map"),
}


def sdk_request(seed: int) -> bytes:
    rng = random.Random(seed)
    resources = [
        Resource({"service.name": f"agent-{n}", "n": n, "tags": ("x", "y")}) for n in range(3)
    ] + [Resource({})]
    scopes = [InstrumentationScope(f"scope-{n}", "1.0") for n in range(2)] + [
        InstrumentationScope("attributed", None, None, {"scope.attr": [1, 2]})
    ]
    spans = []
    for n in range(rng.randrange(1, 40)):
        keys = rng.sample(sorted(ATTRIBUTES), rng.randrange(len(ATTRIBUTES)))
        parent = rng.choice([None, ctx(1, 0), ctx(rng.getrandbits(128) or 1, rng.getrandbits(64))])
        status = rng.choice(
            [
                SdkStatus(StatusCode.UNSET),
                SdkStatus(StatusCode.OK),
                SdkStatus(StatusCode.ERROR, "boom ✗"),
                SdkStatus(StatusCode.ERROR),
            ]
        )
        events = [
            Event(f"event-{k}", {"attempt": k, "why": "timeout", "blob": b"\x01"}, 10**18 + k)
            for k in range(rng.randrange(3))
        ] + ([Event("", {}, 0)] if rng.random() < 0.2 else [])
        links = [Link(ctx(5, 6), {"link.attr": "x"})] if rng.random() < 0.2 else []
        trace_id = rng.choice([rng.getrandbits(128) or 1, 0x1234, 0])
        span_id = rng.choice([rng.getrandbits(64) or 1, 1, 0]) if rng.random() < 0.2 else n + 1
        spans.append(
            ReadableSpan(
                name=rng.choice(["execute_tool grep", "chat", "", "naïve ✓", "'quote\""]),
                context=ctx(trace_id, span_id),
                parent=parent,
                resource=rng.choice(resources),
                attributes={k: ATTRIBUTES[k] for k in keys},
                events=events,
                links=links,
                status=status,
                start_time=rng.choice([0, 1, 2**64 - 1, 1_700_000_000_000_000_000 + n]),
                end_time=rng.choice([0, 1_700_000_000_000_000_999 + n]),
                instrumentation_scope=rng.choice(scopes),
            )
        )
    return encode_spans(spans).SerializeToString()


@pytest.mark.parametrize("seed", range(60))
def test_sdk_encoded_requests_give_the_python_paths_spans(seed: int) -> None:
    check(sdk_request(seed), fast=True)


def test_the_benchmark_mix_is_decoded_by_the_core() -> None:
    spans = [
        ReadableSpan(
            name="execute_tool grep",
            context=ctx(99, n + 1),
            parent=ctx(99, 1000),
            resource=Resource({"service.name": "agent"}),
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "grep"},
            start_time=n,
            end_time=n + 1,
        )
        for n in range(512)
    ]
    body = encode_spans(spans).SerializeToString()
    check(body, fast=True)
    converted = from_protobuf_core(body)
    assert converted is not None and len(converted.spans) == 512


# -- hand-built messages -----------------------------------------------------------------


def request(*spans: Span, resource: list[KeyValue] | None = None) -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    if resource is not None:
        rs.resource.attributes.extend(resource)
    rs.scope_spans.add().spans.extend(spans)
    return req


def span(name: str = "s", trace: bytes = b"\x01" * 16, sid: bytes = b"\x02" * 8, **kw: Any) -> Span:
    return Span(name=name, trace_id=trace, span_id=sid, **kw)


def test_bad_ids_and_missing_names_are_rejected_with_the_same_reasons() -> None:
    cases = [
        span(trace=b""),
        span(trace=b"\x01" * 15),
        span(trace=bytes(16), name='it\'s "quoted" ✓'),
        span(sid=b""),
        span(sid=bytes(8)),
        span(sid=b"\x01" * 9),
        span(name=""),
        span(parent_span_id=bytes(8)),
        span(parent_span_id=b"\x03" * 7),
        span(parent_span_id=b"\x03" * 8),
        span(parent_span_id=b"\x03" * 9),
    ]
    for n in range(len(cases)):
        check(request(*cases[n:]).SerializeToString(), fast=True)
    converted = from_protobuf_core(request(*cases).SerializeToString())
    assert converted is not None and converted.rejected == 7 and len(converted.spans) == 4


def test_values_the_python_path_leaves_out_are_left_out() -> None:
    attrs = [
        KeyValue(key="unset"),
        KeyValue(key="empty_value", value=AnyValue()),
        KeyValue(key="strindex", value=AnyValue(string_value_strindex=3)),
        KeyValue(key="strindex_in_array", value=AnyValue(array_value={"values": [AnyValue()]})),
        KeyValue(key="dup", value=AnyValue(int_value=1)),
        KeyValue(key="", value=AnyValue(string_value="no key")),
        KeyValue(key="dup", value=AnyValue(string_value="second")),
        KeyValue(key="dup", value=AnyValue()),
    ]
    s = span(attributes=attrs, status=Status(code=Status.STATUS_CODE_ERROR))
    check(request(s, resource=attrs).SerializeToString(), fast=True)


def test_values_nested_to_the_limit_are_the_python_paths() -> None:
    for depth in (1, 5, 20, 24):  # nested(24): its innermost array is 23 deep
        for kind in ("array", "map"):
            s = ReadableSpan(
                name="n", context=ctx(1, 2), attributes={"v": nested(depth, kind), "w": 1}
            )
            body = encode_spans([s]).SerializeToString()
            check(body, fast=True)


@pytest.mark.parametrize("depth", [25, MAX_VALUE_DEPTH, MAX_VALUE_DEPTH + 1, 34, 40, 60])
@pytest.mark.parametrize("kind", ["array", "map"])
def test_values_nested_deeper_are_left_to_the_python_path(depth: int, kind: str) -> None:
    # by hand: the SDK's encoder cannot build what upb refuses (past 100 nested messages)
    value = field(1, 2, b"leaf")
    for _ in range(depth):
        if kind == "array":
            value = field(5, 2, field(1, 2, value) + field(1, 2, field(3, 0, varint(1))))
        else:
            value = field(6, 2, field(1, 2, field(1, 2, b"k") + field(2, 2, value)))
    checked_by_upb(wrap_span(BASE + field(9, 2, field(1, 2, b"v") + field(2, 2, value))))


# -- the wire format: field order, repeats, unknown fields -------------------------------


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, wire: int, payload: bytes) -> bytes:
    if wire == 2:
        payload = varint(len(payload)) + payload
    return varint(number << 3 | wire) + payload


def wrap_span(span_bytes: bytes, resource: bytes = b"") -> bytes:
    """A request holding one span given as wire bytes (and a resource's)."""
    scope_spans = field(2, 2, span_bytes)
    resource_spans = field(2, 2, scope_spans) + (field(1, 2, resource) if resource else b"")
    return field(1, 2, resource_spans)


BASE = span(attributes=[KeyValue(key="k", value=AnyValue(string_value="v"))]).SerializeToString()


def test_the_resource_after_the_spans_still_applies_to_them() -> None:
    resource = field(
        1, 2, KeyValue(key="service.name", value=AnyValue(string_value="a")).SerializeToString()
    )
    check(wrap_span(BASE, resource), fast=True)


def test_a_repeated_scalar_keeps_its_last_value() -> None:
    later = span(
        name="renamed", trace=b"\x07" * 16, start_time_unix_nano=5, parent_span_id=b"\x04" * 8
    ).SerializeToString()
    check(wrap_span(BASE + later), fast=True)  # concatenation: a merge, scalars replaced
    check(wrap_span(BASE + span(trace=b"").SerializeToString()), fast=True)
    # AnyValue's oneof: the last scalar wins
    value = AnyValue(string_value="first").SerializeToString()
    value += (
        AnyValue(int_value=3).SerializeToString() + AnyValue(bool_value=True).SerializeToString()
    )
    kv = field(1, 2, b"k") + field(2, 2, value)
    check(wrap_span(BASE + field(9, 2, kv)), fast=True)


def test_unknown_fields_are_skipped() -> None:
    unknown = field(99, 0, varint(5)) + field(100, 1, bytes(8)) + field(101, 5, bytes(4))
    unknown += field(102, 2, b"\xff\xfe not utf-8")  # unknown: never checked
    kv = field(1, 2, b"k") + unknown + field(2, 2, unknown + field(1, 2, b"v"))
    body = wrap_span(unknown + BASE + field(9, 2, kv) + unknown)
    check(field(50, 2, b"x") + body + field(51, 0, varint(1)), fast=True)


def test_odd_scalars_read_as_upb_reads_them() -> None:
    status = field(3, 0, varint(2 + 2**32)) + field(2, 2, "é".encode())  # enum: low 32 bits
    values = [
        field(2, 0, varint(2**32)),  # bool: any non-zero varint
        field(2, 0, varint(2**64 - 1)),
        field(3, 0, varint(2**64 - 1)),  # int64 -1
        field(4, 1, struct.pack("<d", -0.0)),
        field(1, 2, b""),
    ]
    attrs = b"".join(
        field(9, 2, field(1, 2, b"k%d" % n) + field(2, 2, v)) for n, v in enumerate(values)
    )
    check(wrap_span(BASE + attrs + field(15, 2, status)), fast=True)
    check(wrap_span(BASE + field(15, 2, field(3, 0, varint(2**64 - 2)))), fast=True)  # -2


# -- malformed and unusual input ---------------------------------------------------------


def test_truncated_bodies_give_the_python_paths_answer() -> None:
    body = sdk_request(1)
    for end in range(len(body)):
        assert_same(outcome(from_protobuf, body[:end]), outcome(from_protobuf_upb, body[:end]))
        core = from_protobuf_core(body[:end])
        if core is not None:
            assert_same(core, outcome(from_protobuf_upb, body[:end]))


def test_random_garbage_and_mutations_give_the_python_paths_answer() -> None:
    rng = random.Random(7)
    bodies = [sdk_request(s) for s in range(5)]
    for _ in range(3000):
        if rng.random() < 0.2:
            body = rng.randbytes(rng.randrange(64))
        else:
            body = bytearray(rng.choice(bodies))
            for _ in range(rng.randrange(1, 4)):
                body[rng.randrange(len(body))] = rng.randrange(256)
            body = bytes(body)
        want = outcome(from_protobuf_upb, body)
        core = from_protobuf_core(body)
        if core is not None:
            assert_same(core, want)
        assert_same(outcome(from_protobuf, body), want)


BAD_UTF8 = b"\xff\xfe"


@pytest.mark.parametrize(
    "where",
    [
        "name",
        "trace_state",
        "key",
        "value",
        "event",
        "status",
        "scope",
        "scope_attribute",
        "link",
        "schema",
        "replaced_name",
        "replaced_value",
        "array_item",
        "link_attribute",
        "event_key",
    ],
)
def test_invalid_utf8_in_a_string_field_is_left_to_upb(where: str) -> None:
    bad = BAD_UTF8
    if where == "schema":
        body = field(1, 2, field(3, 2, bad) + field(2, 2, field(2, 2, BASE)))
    elif where == "scope":
        body = field(1, 2, field(2, 2, field(1, 2, field(1, 2, bad)) + field(2, 2, BASE)))
    elif where == "scope_attribute":
        attribute = field(1, 2, b"k") + field(2, 2, field(1, 2, bad))
        body = field(1, 2, field(2, 2, field(1, 2, field(3, 2, attribute)) + field(2, 2, BASE)))
    else:
        extra = {
            "name": field(5, 2, bad),
            "trace_state": field(3, 2, bad),
            "key": field(9, 2, field(1, 2, bad)),
            "value": field(9, 2, field(1, 2, b"k") + field(2, 2, field(1, 2, bad))),
            "event": field(11, 2, field(2, 2, bad)),
            "status": field(15, 2, field(2, 2, bad)),
            "link": field(13, 2, field(3, 2, bad)),
            # upb checks a string even where a later value replaces it
            "replaced_name": field(5, 2, bad) + field(5, 2, b"ok"),
            "replaced_value": field(
                9, 2, field(1, 2, b"k") + field(2, 2, field(1, 2, bad) + field(3, 0, b"\x01"))
            ),
            "array_item": field(
                9, 2, field(1, 2, b"k") + field(2, 2, field(5, 2, field(1, 2, field(1, 2, bad))))
            ),
            "link_attribute": field(
                13, 2, field(4, 2, field(1, 2, b"k") + field(2, 2, field(1, 2, bad)))
            ),
            "event_key": field(11, 2, field(3, 2, field(1, 2, bad))),
        }[where]
        body = wrap_span(BASE + extra)
    checked_by_upb(body)
    assert isinstance(outcome(from_protobuf, body), str)  # upb refuses it: ValueError


@pytest.mark.parametrize(
    "extra",
    [
        field(5, 0, varint(1)),  # name as a varint
        field(7, 0, varint(1)),  # start time as a varint
        field(1, 5, bytes(4)),  # trace id as fixed32
        field(9, 0, varint(3)),  # attributes as a varint
        field(16, 0, varint(1)),  # flags as a varint
        field(15, 2, b"") + field(15, 2, field(3, 0, varint(2))),  # status twice: merged
        field(9, 2, field(2, 2, b"") + field(2, 2, b"")),  # KeyValue.value twice
        field(9, 2, field(1, 2, b"k") + field(2, 2, field(5, 2, b"") + field(1, 2, b"s"))),
        field(9, 2, field(1, 2, b"k") + field(2, 2, field(6, 2, b"") + field(6, 2, b""))),
        varint(20 << 3 | 3) + varint(20 << 3 | 4),  # a group
        varint(21 << 3 | 4),  # a stray end of group
        varint(22 << 3 | 6),  # wire type 6
    ],
)
def test_unusual_wire_data_is_left_to_upb(extra: bytes) -> None:
    checked_by_upb(wrap_span(BASE + extra))


def test_a_repeated_resource_scope_or_entity_ref_is_left_to_upb() -> None:
    resource = field(1, 2, field(1, 2, b"k") + field(2, 2, field(1, 2, b"v")))
    spans = field(2, 2, field(2, 2, BASE))
    checked_by_upb(field(1, 2, field(1, 2, resource) + spans + field(1, 2, resource)))
    checked_by_upb(
        field(1, 2, field(2, 2, field(1, 2, b"") + field(1, 2, b"") + field(2, 2, BASE)))
    )
    checked_by_upb(field(1, 2, field(1, 2, field(3, 2, b"")) + spans))


def test_bodies_that_are_not_bytes_go_to_upb() -> None:
    body = request(span()).SerializeToString()
    assert from_protobuf_core(bytearray(body)) is None
    assert_same(from_protobuf(memoryview(body)), from_protobuf_upb(body))


def test_empty_and_spanless_requests_give_nothing() -> None:
    for body in (
        b"",
        ExportTraceServiceRequest(
            resource_spans=[ResourceSpans(scope_spans=[ScopeSpans()])]
        ).SerializeToString(),
    ):
        check(body, fast=True)


def test_a_class_with_other_fields_is_refused_loudly() -> None:
    body = request(span()).SerializeToString()
    events = ("name", "attributes", "time_ns")
    with pytest.raises(ValueError, match="fields"):
        _core.otlp_spans(body, SpanData, (*FIELDS, "extra"), SpanEvent, events, MAX_VALUE_DEPTH)
    with pytest.raises(ValueError, match="fields"):
        _core.otlp_spans(body, SpanData, FIELDS, SpanEvent, events[::-1], MAX_VALUE_DEPTH)


def test_a_smaller_depth_limit_is_honoured_by_leaving_the_value_to_python() -> None:
    s = ReadableSpan(name="n", context=ctx(1, 2), attributes={"v": nested(3, "array")})
    body = encode_spans([s]).SerializeToString()
    events = ("name", "attributes", "time_ns")
    # its innermost array is 2 deep: a limit of 2 cuts it, 3 does not
    assert _core.otlp_spans(body, SpanData, FIELDS, SpanEvent, events, 2) is None
    assert _core.otlp_spans(body, SpanData, FIELDS, SpanEvent, events, 3) is not None


def test_the_cores_spans_are_ordinary_frozen_span_data() -> None:
    body = request(span(events=[Span.Event(name="e", time_unix_nano=3)])).SerializeToString()
    core = from_protobuf_core(body)
    assert core is not None
    (got,), (want,) = core.spans, from_protobuf_upb(body).spans
    assert got == want and repr(got) == repr(want)
    assert type(got.events[0]) is SpanEvent and got.events == want.events
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.name = "changed"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.events[0].name = "changed"  # type: ignore[misc]


def test_from_protobuf_takes_the_core_path_and_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from otel_cycleguard.service import convert

    good = request(span()).SerializeToString()
    want = from_protobuf_upb(good)
    calls: list[bytes] = []

    def upb(body: bytes) -> Converted:
        calls.append(body)
        return from_protobuf_upb(body)

    monkeypatch.setattr(convert, "from_protobuf_upb", upb)
    assert_same(convert.from_protobuf(good), want)
    assert calls == []  # the core answered
    bad = good[:-1]
    assert_same(outcome(convert.from_protobuf, bad), outcome(from_protobuf_upb, bad))
    assert calls == [bad]
