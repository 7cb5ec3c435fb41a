"""The trace readers: every format, compression, inputs, and what happens with bad input."""

from __future__ import annotations

import base64
import dataclasses
import gzip
import io
import json
import logging
import os
import random
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _corpus import CORPUS
from google.protobuf.json_format import MessageToDict, MessageToJson
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

import otel_cycleguard.analyze
from otel_cycleguard.analyze import (
    InputError,
    InputProblem,
    TraceReader,
    UnknownFormatError,
    read_spans,
)
from otel_cycleguard.spans import SpanData, SpanEvent
from otel_cycleguard.wire.ids import hex_id
from otel_cycleguard.wire.otlp_json import any_value

DATA = Path(__file__).parent / "data"
TRACE = "0b8efff798038103d269b633813fc60c"
ROOT = "0af7651916cd43dd"
RESOURCE = {"service.name": "demo-agent", "deployment.environment": "test"}

#: The spans every fixture in ``data/`` holds, written out independently of the fixtures.
EXPECTED = [
    SpanData(
        trace_id=TRACE,
        span_id=ROOT,
        name="invoke_agent demo",
        start_ns=1704067200000000000,
        end_ns=1704067203000000000,
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "run-1"},
        resource=RESOURCE,
    ),
    SpanData(
        trace_id=TRACE,
        span_id="b7ad6b7169203331",
        name="chat gpt-4o",
        parent_span_id=ROOT,
        start_ns=1704067200000001234,
        end_ns=1704067200750004321,
        attributes={"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 1200},
        resource=RESOURCE,
    ),
    SpanData(
        trace_id=TRACE,
        span_id="eee19b7ec3c1b174",
        name="execute_tool search",
        parent_span_id=ROOT,
        start_ns=1704067200750004321,
        end_ns=1704067201900000999,
        attributes={
            "gen_ai.tool.name": "search",
            "gen_ai.tool.call.arguments": '{"q": "loops"}',
            "loop_eval.step": 3,
            "search.score": 0.5,
            "search.cached": False,
        },
        events=(SpanEvent("retry", {"attempt": 2}, 1704067201000000000),),
        status_error=True,
        status_message="no results",
        resource=RESOURCE,
    ),
]


def at_microseconds(span: SpanData) -> SpanData:
    """The span with its times cut to whole microseconds, as Jaeger stores them."""
    events = tuple(
        dataclasses.replace(event, time_ns=event.time_ns // 1000 * 1000) for event in span.events
    )
    return dataclasses.replace(
        span,
        start_ns=span.start_ns // 1000 * 1000,
        end_ns=span.end_ns // 1000 * 1000,
        events=events,
    )


def read_all(*paths: str | Path) -> tuple[list[SpanData], list[InputProblem]]:
    """All spans and all reported problems of the given paths."""
    problems: list[InputProblem] = []
    spans = list(read_spans([str(path) for path in paths], on_skip=problems.append))
    return spans, problems


def otlp_line(trace_id: str, span_id: str, name: str = "op", **extra: Any) -> str:
    """A one-span OTLP JSON document on one line."""
    span = {"traceId": trace_id, "spanId": span_id, "name": name, **extra}
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})


def numbered_lines(count: int) -> list[str]:
    """``count`` one-span OTLP lines with distinct, hard to compress ids."""
    rng = random.Random(7)
    return [otlp_line(f"{rng.getrandbits(128):032x}", f"{i + 1:016x}") for i in range(count)]


class TestFormats:
    """Each supported format yields the same SpanData for the same spans."""

    @pytest.mark.parametrize(
        ("fixture", "format_name"),
        [
            ("otlp_document.json", "OTLP JSON"),
            ("otlp_lines.jsonl", "OTLP JSON"),
            ("tempo_batches.json", "Tempo JSON"),
            ("tempo_trace.json", "Tempo JSON"),
        ],
    )
    def test_otlp_and_tempo_fixtures_read_exactly(self, fixture: str, format_name: str) -> None:
        """OTLP documents, OTLP lines and both Tempo responses give the expected spans."""
        problems: list[InputProblem] = []
        reader = TraceReader([str(DATA / fixture)], on_skip=problems.append)
        assert list(reader) == EXPECTED
        assert problems == []
        assert set(reader.formats) == {format_name}
        assert reader.spans_read == 3

    def test_jaeger_fixture_reads_to_microsecond_precision(self) -> None:
        """Jaeger's µs times and stripped id zeros still give the expected spans."""
        spans, problems = read_all(DATA / "jaeger.json")
        assert spans == [at_microseconds(span) for span in EXPECTED]
        assert problems == []

    def test_jaeger_and_tempo_shapes_of_the_same_spans_read_the_same(self) -> None:
        """The same trace downloaded from Jaeger and from Tempo gives the same records."""
        jaeger, _ = read_all(DATA / "jaeger.json")
        tempo, _ = read_all(DATA / "tempo_batches.json")
        assert jaeger == [at_microseconds(span) for span in tempo]

    def test_jaeger_error_tag_alone_marks_the_status_as_error(self, tmp_path: Path) -> None:
        """Older Jaeger clients only set ``error=true``; that is an error status too."""
        span = {
            "traceID": "1",
            "spanID": "2",
            "operationName": "op",
            "startTime": 5,
            "duration": 1,
            "tags": [{"key": "error", "type": "bool", "value": True}],
            "logs": [{"timestamp": 6, "fields": [{"key": "msg", "type": "string", "value": "x"}]}],
        }
        path = tmp_path / "trace.json"
        path.write_text(json.dumps({"data": [{"spans": [span], "processes": {}}]}))
        [read], problems = read_all(path)
        assert read.status_error is True
        assert read.attributes == {}
        assert (read.trace_id, read.span_id) == ("0" * 31 + "1", "0" * 15 + "2")
        assert read.events == (SpanEvent("log", {"msg": "x"}, 6000),)
        assert problems == []

    def test_jaeger_api_v3_result_reads_as_otlp(self, tmp_path: Path) -> None:
        """Jaeger's v3 API wraps OTLP JSON in ``result``."""
        document = json.loads((DATA / "otlp_document.json").read_text())
        path = tmp_path / "v3.json"
        path.write_text(json.dumps({"result": document}))
        reader = TraceReader([str(path)])
        assert list(reader) == EXPECTED
        assert set(reader.formats) == {"Jaeger API v3 (OTLP JSON)"}


@pytest.fixture(name="sdk_spans")
def fixture_sdk_spans() -> list[ReadableSpan]:
    """Spans made by the real opentelemetry-sdk, with every attribute type and an error."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "sdk-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("cycleguard.tests", "0.1")
    with tracer.start_as_current_span("invoke_agent sdk") as root:
        root.set_attribute("gen_ai.conversation.id", "sdk-run")
        with tracer.start_as_current_span("execute_tool grep") as tool:
            tool.set_attributes(
                {
                    "gen_ai.tool.name": "grep",
                    "count": 3,
                    "ratio": 0.25,
                    "cached": True,
                    "paths": ("a.py", "b.py"),
                    "lines": (1, 2, 3),
                }
            )
            tool.add_event("retry", {"attempt": 2, "why": "timeout"})
            tool.set_status(Status(StatusCode.ERROR, "grep failed"))
    provider.shutdown()
    return list(exporter.get_finished_spans())


def from_sdk(span: ReadableSpan) -> SpanData:
    """What the readers should make of an SDK span."""
    assert span.context is not None
    return SpanData(
        trace_id=f"{span.context.trace_id:032x}",
        span_id=f"{span.context.span_id:016x}",
        name=span.name,
        parent_span_id=f"{span.parent.span_id:016x}" if span.parent else None,
        start_ns=span.start_time or 0,
        end_ns=span.end_time or 0,
        attributes=dict(span.attributes or {}),
        events=tuple(
            SpanEvent(event.name, dict(event.attributes or {}), event.timestamp)
            for event in span.events
        ),
        status_error=span.status.status_code is StatusCode.ERROR,
        status_message=span.status.description,
        resource=dict(span.resource.attributes),
    )


def ids_to_hex(value: Any) -> Any:
    """Turn the protobuf mapping's base64 ids into the hex the OTLP JSON spec asks for."""
    if isinstance(value, dict):
        return {
            key: base64.b64decode(item).hex()
            if key in {"traceId", "spanId", "parentSpanId"}
            else ids_to_hex(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [ids_to_hex(item) for item in value]
    return value


class TestRealEncoder:
    """The readers against the JSON of the real OTLP protobuf encoder."""

    def test_protobuf_json_mapping_with_base64_ids(
        self, sdk_spans: list[ReadableSpan], tmp_path: Path
    ) -> None:
        """``MessageToJson`` output (base64 ids, enum names) reads back as the SDK spans."""
        path = tmp_path / "export.json"
        path.write_text(MessageToJson(encode_spans(sdk_spans)))
        spans, problems = read_all(path)
        assert sorted(spans, key=lambda s: s.span_id) == sorted(
            map(from_sdk, sdk_spans), key=lambda s: s.span_id
        )
        assert problems == []

    def test_otlp_json_lines_with_hex_ids(
        self, sdk_spans: list[ReadableSpan], tmp_path: Path
    ) -> None:
        """The spec's hex ids, one request per line, read back as the SDK spans."""
        document = ids_to_hex(MessageToDict(encode_spans(sdk_spans)))
        path = tmp_path / "export.jsonl"
        path.write_text(json.dumps(document) + "\n" + json.dumps(document) + "\n")
        spans, problems = read_all(path)
        expected = sorted(map(from_sdk, sdk_spans), key=lambda s: s.span_id)
        assert sorted(spans, key=lambda s: s.span_id) == sorted(
            expected * 2, key=lambda s: s.span_id
        )
        assert problems == []


class TestValues:
    """OTLP AnyValue unwrapping and id normalisation."""

    @pytest.mark.parametrize(
        ("wrapped", "plain"),
        [
            ({"stringValue": "x"}, "x"),
            ({"stringValue": ""}, ""),
            ({"intValue": "42"}, 42),
            ({"intValue": -7}, -7),
            ({"doubleValue": 1.5}, 1.5),
            ({"doubleValue": 2}, 2.0),
            ({"doubleValue": "Infinity"}, float("inf")),
            ({"boolValue": False}, False),
            ({"arrayValue": {"values": [{"intValue": "1"}, {"stringValue": "a"}]}}, (1, "a")),
            ({"arrayValue": {}}, ()),
            (
                {"kvlistValue": {"values": [{"key": "k", "value": {"boolValue": True}}]}},
                {"k": True},
            ),
            ({"bytesValue": "AQI="}, "AQI="),
            ({}, None),
        ],
    )
    def test_any_value_unwraps_to_plain_python(self, wrapped: dict[str, Any], plain: Any) -> None:
        """Each AnyValue kind becomes the matching Python value and type."""
        result = any_value(wrapped)
        assert result == plain
        assert type(result) is type(plain)

    @pytest.mark.parametrize(
        ("raw", "size", "pad", "expected"),
        [
            ("5B8EFFF798038103D269B633813FC60C", 16, False, "5b8efff798038103d269b633813fc60c"),
            ("W47/95gDgQPSabYzgT/GDA==", 16, False, "5b8efff798038103d269b633813fc60c"),
            ("W47_95gDgQPSabYzgT_GDA", 16, False, "5b8efff798038103d269b633813fc60c"),
            ("7uGbfsPBsXQ=", 8, False, "eee19b7ec3c1b174"),
            ("af7651916cd43dd", 8, True, "0af7651916cd43dd"),
            ("d269b633813fc60c", 16, True, "0000000000000000d269b633813fc60c"),
            ("", 8, False, None),
            (None, 8, False, None),
            ("0000000000000000", 8, False, None),
        ],
    )
    def test_ids_become_lowercase_hex(
        self, raw: str | None, size: int, pad: bool, expected: str | None
    ) -> None:
        """Hex of any case, base64 (standard, URL-safe, unpadded) and short Jaeger hex."""
        assert hex_id(raw, size, pad=pad) == expected

    @pytest.mark.parametrize("raw", ["xyz", "af7651916cd43dd", "AQI=", 12])
    def test_malformed_ids_are_rejected(self, raw: object) -> None:
        """Wrong lengths, non-hex text and non-strings raise ValueError."""
        with pytest.raises(ValueError, match="id"):
            hex_id(raw, 8)


class CountingStream(io.RawIOBase):
    """A readable byte stream that remembers how far it has been read."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)
        self.position = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = self._data.readinto(buffer)
        self.position += count
        return count


class FakeStdin:
    """Stands in for ``sys.stdin``: only ``buffer`` is used."""

    def __init__(self, data: bytes) -> None:
        self.raw = CountingStream(data)
        self.buffer = io.BufferedReader(self.raw)


class TestInputs:
    """Files, gzip, directories and stdin."""

    def test_gzip_is_read_transparently(self, tmp_path: Path) -> None:
        """A ``.gz`` file reads like the plain file."""
        path = tmp_path / "trace.jsonl.gz"
        path.write_bytes(gzip.compress((DATA / "otlp_lines.jsonl").read_bytes()))
        assert read_all(path) == (EXPECTED, [])

    def test_gzip_is_recognised_by_its_magic_bytes_not_its_suffix(self, tmp_path: Path) -> None:
        """Gzip data named ``.json`` is unpacked; plain text named ``.gz`` is not."""
        zipped = tmp_path / "zipped.json"
        zipped.write_bytes(gzip.compress((DATA / "otlp_document.json").read_bytes()))
        plain = tmp_path / "plain.json.gz"
        shutil.copy(DATA / "tempo_trace.json", plain)
        assert read_all(zipped, plain) == (EXPECTED * 2, [])

    def test_directory_is_read_recursively_in_sorted_order(self, tmp_path: Path) -> None:
        """Files under a directory are read sorted by path; hidden ones are left out."""
        (tmp_path / "b").mkdir()
        (tmp_path / ".hidden").mkdir()
        (tmp_path / "b" / "z.jsonl").write_text(otlp_line("c" * 32, "3" * 16) + "\n")
        (tmp_path / "a.json").write_text(otlp_line("a" * 32, "1" * 16))
        (tmp_path / "b" / "a.json").write_text(otlp_line("b" * 32, "2" * 16))
        (tmp_path / "c.json.gz").write_bytes(gzip.compress(otlp_line("d" * 32, "4" * 16).encode()))
        (tmp_path / ".secret.json").write_text(otlp_line("e" * 32, "5" * 16))
        (tmp_path / ".hidden" / "x.json").write_text(otlp_line("f" * 32, "6" * 16))
        spans, problems = read_all(tmp_path)
        assert [span.span_id[0] for span in spans] == ["1", "2", "3", "4"]
        assert problems == []

    def test_unknown_files_met_in_a_directory_are_reported_not_raised(self, tmp_path: Path) -> None:
        """A README or metadata file next to the traces is skipped with a reason."""
        (tmp_path / "README.md").write_text("# traces\n")
        (tmp_path / "runs.jsonl").write_text('{"run_id": "x"}\n')
        shutil.copy(DATA / "otlp_lines.jsonl", tmp_path / "trace.jsonl")
        spans, problems = read_all(tmp_path)
        assert spans == EXPECTED
        assert [(p.source, p.kind) for p in problems] == [
            (str(tmp_path / "README.md"), "unknown_format"),
            (str(tmp_path / "runs.jsonl"), "unknown_format"),
        ]

    @pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
    def test_dash_reads_stdin(self, compress: bool, monkeypatch: pytest.MonkeyPatch) -> None:
        """``-`` reads standard input, gzip or not."""
        data = (DATA / "otlp_lines.jsonl").read_bytes()
        monkeypatch.setattr(sys, "stdin", FakeStdin(gzip.compress(data) if compress else data))
        assert list(read_spans(["-"])) == EXPECTED

    def test_json_lines_are_read_one_line_at_a_time(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The first spans arrive before most of a large JSON-lines input has been read."""
        padding = {"attributes": [{"key": "pad", "value": {"stringValue": "x" * 100_000}}]}
        lines = [otlp_line(f"{i + 1:032x}", f"{i + 1:016x}", **padding) for i in range(30)]
        data = "\n".join(lines).encode()
        stdin = FakeStdin(data)
        monkeypatch.setattr(sys, "stdin", stdin)
        spans = read_spans(["-"])
        next(spans), next(spans)  # the second comes from the line loop, past the sniffing
        assert stdin.raw.position < len(data) / 10
        assert len(list(spans)) == 28

    def test_missing_path_raises_input_error_before_reading(self, tmp_path: Path) -> None:
        """A path that does not exist fails at once, naming the path."""
        shutil.copy(DATA / "otlp_lines.jsonl", tmp_path / "good.jsonl")
        missing = tmp_path / "nope.jsonl"
        with pytest.raises(InputError, match=r"nope\.jsonl: no such file") as error:
            read_spans([str(tmp_path / "good.jsonl"), str(missing)])
        assert not isinstance(error.value, UnknownFormatError)

    @pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
    def test_path_that_is_not_a_file_raises_input_error(self, tmp_path: Path) -> None:
        """A named pipe (or device) is refused up front rather than read forever."""
        fifo = tmp_path / "pipe"
        os.mkfifo(fifo)
        with pytest.raises(InputError, match="not a regular file"):
            read_spans([str(fifo)])

    def test_a_single_string_is_refused_rather_than_read_letter_by_letter(self) -> None:
        """``read_spans("trace.json")`` is a mistake worth a clear error."""
        with pytest.raises(TypeError, match="sequence of path strings"):
            read_spans(str(DATA / "jaeger.json"))  # type: ignore[arg-type]

    def test_empty_file_yields_nothing_and_is_named(self, tmp_path: Path) -> None:
        """The Collector creates its file before the first batch: harmless, but said, so that
        an export that wrote nothing is not mistaken for a run without loops."""
        blank, empty = tmp_path / "blank.jsonl", tmp_path / "empty.jsonl"
        blank.write_text("\n\n")
        empty.write_bytes(b"")
        assert read_all(blank, empty) == (
            [],
            [
                InputProblem(str(blank), None, "empty", "empty (only blank lines)"),
                InputProblem(str(empty), None, "empty", "empty (0 bytes)"),
            ],
        )


class TestBadInput:
    """Bad input is skipped and reported, never a crash."""

    def test_an_unlistable_subdirectory_is_skipped_and_the_rest_read(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """os.walk reports the directory it could not list; the files it could list still count."""
        import os

        from otel_cycleguard.analyze import sources

        (tmp_path / "good.jsonl").write_text(otlp_line("a" * 32, "b" * 16) + "\n")
        real_walk = os.walk

        def walk(top, onerror=None):
            onerror(PermissionError(13, "Permission denied", str(tmp_path / "locked")))
            yield from real_walk(top, onerror=onerror)

        monkeypatch.setattr(sources.os, "walk", walk)
        spans, problems = read_all(tmp_path)
        assert len(spans) == 1
        assert problems == [
            InputProblem(
                str(tmp_path / "locked"), None, "unreadable", "cannot read (Permission denied)"
            )
        ]

    def test_invalid_json_line_is_skipped_reported_and_counted(self, tmp_path: Path) -> None:
        """The broken line is named by file and 1-based line; the other lines still read."""
        good = numbered_lines(3)
        path = tmp_path / "trace.jsonl"
        path.write_text(f"{good[0]}\n{good[1][:40]}\n\n{good[1]}\n{good[2]}\n")
        problems: list[InputProblem] = []
        reader = TraceReader([str(path)], on_skip=problems.append)
        assert [span.span_id for span in reader] == [f"{i:016x}" for i in (1, 2, 3)]
        assert [(p.source, p.line, p.kind) for p in problems] == [(str(path), 2, "invalid_json")]
        assert reader.problem_count == 1
        assert str(problems[0]).startswith(f"{path}:2: ")

    def test_broken_first_line_of_json_lines_is_skipped(self, tmp_path: Path) -> None:
        """A damaged first line does not make the rest look like one broken document."""
        good = numbered_lines(3)
        path = tmp_path / "trace.jsonl"
        path.write_text(f"{good[0][:-5]}\n{good[1]}\n{good[2]}\n")
        spans, problems = read_all(path)
        assert [span.span_id for span in spans] == [f"{i:016x}" for i in (2, 3)]
        assert [(p.line, p.kind) for p in problems] == [(1, "invalid_json")]

    def test_json_line_that_is_not_a_trace_is_reported(self, tmp_path: Path) -> None:
        """Valid JSON of another shape in a trace file is skipped with its line number."""
        path = tmp_path / "trace.jsonl"
        path.write_text(numbered_lines(1)[0] + '\n{"hello": 1}\n[1, 2]\n')
        spans, problems = read_all(path)
        assert len(spans) == 1
        assert [(p.line, p.kind) for p in problems] == [(2, "not_a_trace"), (3, "not_a_trace")]

    def test_truncated_gzip_keeps_what_it_read_and_reports(self, tmp_path: Path) -> None:
        """Lines before the cut are read; the cut is reported once, naming the file."""
        lines = numbered_lines(400)
        whole = gzip.compress("\n".join(lines).encode())
        path = tmp_path / "cut.jsonl.gz"
        path.write_bytes(whole[: len(whole) // 2])
        spans, problems = read_all(path)
        assert 0 < len(spans) < len(lines)
        assert [span.span_id for span in spans] == [f"{i + 1:016x}" for i in range(len(spans))]
        assert [(p.source, p.kind) for p in problems] == [(str(path), "truncated")]
        assert f"after line {len(spans)}" in problems[0].reason

    def test_truncated_gzip_document_is_reported(self, tmp_path: Path) -> None:
        """A cut single document cannot be parsed; the truncation is what gets reported."""
        whole = gzip.compress((DATA / "jaeger.json").read_bytes())
        path = tmp_path / "cut.json.gz"
        path.write_bytes(whole[: len(whole) - 30])
        spans, problems = read_all(path)
        assert spans == []
        assert [p.kind for p in problems] == ["truncated"]

    @pytest.mark.parametrize(
        ("content", "detail"),
        [
            ('{"traces": [{"traceID": "abc"}]}', "Tempo search result"),
            ('{"resource": {}, "spans": []}', "keys 'resource', 'spans'"),
            ("timestamp,span\n1,2\n", "does not start with a JSON object"),
            ('{\n  "spans": [\n  ]\n}\n', "keys 'spans'"),
        ],
        ids=["tempo-search", "json-object", "csv", "pretty-json"],
    )
    def test_unknown_format_raises_naming_the_readable_formats(
        self, content: str, detail: str, tmp_path: Path
    ) -> None:
        """The error names the file, what it looked like, and every format we read."""
        path = tmp_path / "mystery.json"
        path.write_text(content)
        with pytest.raises(UnknownFormatError) as error:
            list(read_spans([str(path)]))
        message = str(error.value)
        assert str(path) in message
        assert detail in message
        for name in ("OTLP JSON", "OTLP JSON lines", "Jaeger", "Tempo"):
            assert name in message

    def test_invalid_single_document_is_reported(self, tmp_path: Path) -> None:
        """A pretty-printed document with a syntax error is skipped, not a crash."""
        path = tmp_path / "broken.json"
        path.write_text((DATA / "otlp_document.json").read_text().replace('"name"', "name", 1))
        spans, problems = read_all(path)
        assert spans == []
        assert [(p.line, p.kind) for p in problems] == [(None, "invalid_json")]

    def test_spans_missing_ids_or_names_are_skipped_with_a_reason(self, tmp_path: Path) -> None:
        """Each bad span is reported with why; the good spans around it still read."""
        good = {"traceId": "a" * 32, "spanId": "1" * 16, "name": "ok"}
        bad = [
            {"spanId": "2" * 16, "name": "no trace"},
            {"traceId": "a" * 32, "name": "no span"},
            {"traceId": "a" * 32, "spanId": "3" * 16},
            {"traceId": "not-an-id", "spanId": "4" * 16, "name": "bad trace"},
            {**good, "spanId": "5" * 16, "startTimeUnixNano": "soon"},
            {**good, "attributes": [{"key": "n", "value": {"intValue": "many"}}]},
            {**good, "attributes": [{"value": {"intValue": "1"}}]},
            "not a span",
        ]
        document = {"resourceSpans": [{"scopeSpans": [{"spans": [good, *bad, good]}]}]}
        path = tmp_path / "trace.jsonl"
        path.write_text(json.dumps(document) + "\n")
        spans, problems = read_all(path)
        assert [span.name for span in spans] == ["ok", "ok"]
        assert [p.kind for p in problems] == ["invalid_span"] * len(bad)
        assert all(p.line == 1 for p in problems)
        reasons = [p.reason for p in problems]
        assert "without traceId" in reasons[0]
        assert "without spanId" in reasons[1]
        assert "without a name" in reasons[2]
        assert "not-an-id" in reasons[3]
        assert "soon" in reasons[4]
        assert "attribute 'n'" in reasons[5]
        assert "missing field 'key'" in reasons[6]

    def test_default_on_skip_logs_a_warning(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        """Without ``on_skip`` a skipped line is still visible, as a warning."""
        path = tmp_path / "trace.jsonl"
        path.write_text(numbered_lines(1)[0] + "\n{oops\n")
        with caplog.at_level(logging.WARNING, logger="otel_cycleguard.analyze"):
            assert len(list(read_spans([str(path)]))) == 1
        assert f"{path}:2: invalid JSON line" in caplog.text


def test_package_exports_its_public_names() -> None:
    """The package's ``__all__`` includes the reader API (replay and reports add theirs)."""
    assert {
        "InputError",
        "InputProblem",
        "TraceReader",
        "UnknownFormatError",
        "read_spans",
    } <= set(otel_cycleguard.analyze.__all__)


def corpus_files() -> list[Path]:
    """The development corpus, or a skip when this machine has none."""
    files = sorted(CORPUS.glob("*.otlp.jsonl.gz"))
    if not files:
        pytest.skip(f"no corpus at {CORPUS}")
    return files


def conversation_ids(spans: Iterator[SpanData]) -> Iterator[str]:
    """The ``gen_ai.conversation.id`` of each span that has one."""
    for span in spans:
        value = span.attributes.get("gen_ai.conversation.id")
        if value is not None:
            yield value


@pytest.mark.slow
def test_whole_corpus_reads_without_problems() -> None:
    """Every corpus file reads cleanly, and every run of runs.jsonl is in the traces."""
    files = corpus_files()
    problems: list[InputProblem] = []
    reader = TraceReader([str(path) for path in files], on_skip=problems.append)
    started = time.perf_counter()
    seen = set(conversation_ids(iter(reader)))
    elapsed = time.perf_counter() - started
    print(f"corpus: {reader.spans_read} spans in {elapsed:.2f} s")  # informational only
    run_ids = {json.loads(line)["run_id"] for line in (CORPUS / "runs.jsonl").open()}
    assert reader.spans_read > 0
    assert problems == []
    assert run_ids <= seen
