"""Offline replay: real SDK spans, exported as OTLP, Jaeger and Tempo, give the same report."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import jsonschema
import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from otel_cycleguard import CycleGuard, CycleGuardSpanProcessor
from otel_cycleguard.analyze import Replayer, analyze_paths, replay_spans, schema
from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.guard import Observer
from otel_cycleguard.otel import SignalAnnotator
from otel_cycleguard.spans import SpanData

T0 = 1_704_067_200_000_000_000
MS = 1_000_000


class Recorder(Observer):
    """Collects every signal the live engine fired."""

    def __init__(self) -> None:
        self.fired: list = []

    def signals(self, entry, signals, span_ref):
        self.fired.extend((entry.key, signal) for signal in signals)


def tool_attrs(tool: str, args: str, result: str) -> dict:
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.arguments": args,
        "gen_ai.tool.call.result": result,
    }


def run_agent(
    loops: int = 12, *, conversation: str | None = "conv-1", recorder: Recorder | None = None
) -> list[ReadableSpan]:
    """An agent-like run on the real SDK: a few varied calls, then the same search over and over.

    Explicit millisecond timestamps keep Jaeger's microsecond times exact.
    """
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    if recorder is not None:
        guard = CycleGuard(CycleGuardConfig(), observers=[recorder, SignalAnnotator(provider)])
        provider.add_span_processor(CycleGuardSpanProcessor(guard))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent-under-test")
    attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "demo"}
    if conversation is not None:
        attrs["gen_ai.conversation.id"] = conversation
    clock = T0
    root = tracer.start_span("invoke_agent demo", attributes=attrs, start_time=clock)
    from opentelemetry import trace

    with trace.use_span(root, end_on_exit=False):
        steps = [("read_file", f'{{"path": "src/{i}.py"}}', f"contents {i}") for i in range(3)]
        steps += [("search", '{"q": "where is the bug"}', "no results")] * loops
        for number, (tool, args, result) in enumerate(steps):
            turn = tracer.start_span(
                "chat gpt-4o",
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.usage.input_tokens": 100,
                    "gen_ai.usage.output_tokens": 10,
                    "gen_ai.output.messages": json.dumps(
                        [
                            {
                                "role": "assistant",
                                "parts": [{"type": "text", "content": f"step {number}"}],
                            }
                        ]
                    ),
                },
                start_time=clock,
            )
            turn.end(end_time=clock + 5 * MS)
            clock += 10 * MS
            span = tracer.start_span(
                f"execute_tool {tool}", attributes=tool_attrs(tool, args, result), start_time=clock
            )
            if tool == "read_file" and number == 1:
                span.set_status(Status(StatusCode.ERROR, "boom"))
            span.end(end_time=clock + 20 * MS)
            clock += 30 * MS
    root.end(end_time=clock)
    provider.force_flush()
    spans = list(exporter.get_finished_spans())
    provider.shutdown()
    return spans


# -- exporters of the same spans, in the three formats -------------------------------------------


def otlp_document(spans: list[ReadableSpan]) -> dict:
    """The real OTLP encoder, as protobuf JSON (base64 ids, the way MessageToDict writes them)."""
    return MessageToDict(encode_spans(spans))


def _value(value) -> tuple[str, object]:
    if isinstance(value, bool):
        return "bool", value
    if isinstance(value, int):
        return "int64", value
    if isinstance(value, float):
        return "float64", value
    return "string", str(value)


def jaeger_document(spans: list[ReadableSpan]) -> dict:
    """What Jaeger's UI 'download JSON' gives for the same spans (times in microseconds)."""
    traces: dict[str, list] = {}
    for span in spans:
        trace_id = f"{span.context.trace_id:032x}"
        tags = []
        for key, value in (span.attributes or {}).items():
            kind, converted = _value(value)
            tags.append({"key": key, "type": kind, "value": converted})
        if span.status.status_code is StatusCode.ERROR:
            tags.append({"key": "otel.status_code", "type": "string", "value": "ERROR"})
            tags.append({"key": "error", "type": "bool", "value": True})
        references = []
        if span.parent is not None:
            references.append(
                {
                    "refType": "CHILD_OF",
                    "traceID": trace_id,
                    "spanID": f"{span.parent.span_id:016x}",
                }
            )
        logs = [
            {
                "timestamp": event.timestamp // 1000,
                "fields": [{"key": "event", "type": "string", "value": event.name}]
                + [
                    {"key": k, "type": _value(v)[0], "value": _value(v)[1]}
                    for k, v in (event.attributes or {}).items()
                ],
            }
            for event in span.events
        ]
        traces.setdefault(trace_id, []).append(
            {
                "traceID": trace_id,
                "spanID": f"{span.context.span_id:016x}",
                "operationName": span.name,
                "references": references,
                "startTime": span.start_time // 1000,
                "duration": (span.end_time - span.start_time) // 1000,
                "tags": tags,
                "logs": logs,
                "processID": "p1",
            }
        )
    return {
        "data": [
            {
                "traceID": trace_id,
                "spans": items,
                "processes": {"p1": {"serviceName": "agent-under-test", "tags": []}},
            }
            for trace_id, items in traces.items()
        ]
    }


def tempo_document(spans: list[ReadableSpan]) -> dict:
    """Tempo's /api/traces/<id> shape: batches of instrumentationLibrarySpans, enum names."""
    request = otlp_document(spans)
    batches = []
    for block in request["resourceSpans"]:
        scopes = []
        for scope in block.get("scopeSpans", []):
            items = []
            for span in scope["spans"]:
                span = dict(span)
                span["kind"] = "SPAN_KIND_INTERNAL"
                if span.get("status", {}).get("code") in ("STATUS_CODE_ERROR", 2):
                    span["status"] = {"code": "STATUS_CODE_ERROR"}
                items.append(span)
            scopes.append({"instrumentationLibrary": scope.get("scope", {}), "spans": items})
        batches.append(
            {"resource": block.get("resource", {}), "instrumentationLibrarySpans": scopes}
        )
    return {"batches": batches}


@pytest.fixture(name="spans", scope="module")
def fixture_spans() -> list[ReadableSpan]:
    return run_agent()


def analysis_json(path: Path, **kwargs) -> dict:
    return analyze_paths([str(path)], **kwargs).to_dict()


class TestRoundTrip:
    """The same SDK spans, written in every format, give the identical JSON report."""

    def test_formats_agree(self, spans, tmp_path):
        """OTLP JSON lines (gz), pretty OTLP JSON, Jaeger and Tempo: one report."""
        otlp = tmp_path / "otlp.jsonl.gz"
        with gzip.open(otlp, "wt") as handle:
            handle.write(json.dumps(otlp_document(spans)) + "\n")
        pretty = tmp_path / "otlp.json"
        pretty.write_text(json.dumps(otlp_document(spans), indent=2))
        jaeger = tmp_path / "jaeger.json"
        jaeger.write_text(json.dumps(jaeger_document(spans)))
        tempo = tmp_path / "tempo.json"
        tempo.write_text(json.dumps(tempo_document(spans)))
        reports = [analysis_json(p) for p in (otlp, pretty, jaeger, tempo)]
        assert reports[0]["summary"]["sessions_with_loops"] == 1
        for other in reports[1:]:
            assert other == reports[0]

    def test_report_validates_and_has_expected_shape(self, spans, tmp_path):
        """The report follows the schema; the loop's first TERM is on the expected call."""
        path = tmp_path / "otlp.jsonl"
        path.write_text(json.dumps(otlp_document(spans)) + "\n")
        report = analysis_json(path)
        jsonschema.Draft202012Validator.check_schema(schema())
        jsonschema.validate(report, schema())
        (session,) = report["sessions"]
        assert session["session"] == "conv-1"
        assert session["agent"] == "demo"
        assert session["profile"] == "general"
        assert session["tool_calls"] == 15
        assert session["model_turns"] == 15
        terms = [s for s in session["signals"] if s["level"] == "term"]
        # identical_call general: term 5; the search loop starts at call 3, so call 7
        assert terms[0]["dimension"] == "identical_call"
        assert terms[0]["tool_call_index"] == 7
        assert terms[0]["tool"] == "search"
        assert terms[0]["model_turn_index"] is None
        by_id = {f"{s.context.span_id:016x}": s for s in spans}
        assert by_id[terms[0]["span_id"]].name == "execute_tool search"
        # after self-heal at 7 the counter restarts: the second TERM at 12 terminates
        stages = [(e["stage"], e["tool_call_index"]) for e in session["escalations"]]
        assert stages == [("self_heal", 7), ("hitl", 12), ("terminate", 12)]
        assert session["terminated_at"]["tool_call_index"] == 12
        assert session["terminated_at"]["reason"] == "cycle_detected"
        wasted = session["wasted"]
        assert wasted["tool_calls"] == 15 - 8
        assert wasted["tokens"] == 7 * 110  # the model turns started after call 7
        assert wasted["seconds"] == pytest.approx(7 * 0.040, abs=0.001)


class TestLiveAgreement:
    """The live span processor and the offline replay point at the same call."""

    def test_first_term_index(self, tmp_path):
        """Same loop, same tool_call_index for the first TERM; the annotations are ignored."""
        recorder = Recorder()
        spans = run_agent(recorder=recorder)
        live = [(s.dimension.value, s.step) for _, s in recorder.fired if s.level.value == "term"]
        assert live
        path = tmp_path / "live.jsonl"
        path.write_text(json.dumps(otlp_document(spans)) + "\n")
        assert any(s.name.startswith("cycleguard.") for s in spans) or any(
            e.name.startswith("cycleguard") for s in spans for e in s.events
        )
        (session,) = analysis_json(path)["sessions"]
        offline = [
            (s["dimension"], s["tool_call_index"])
            for s in session["signals"]
            if s["level"] == "term"
        ]
        assert offline[0] == live[0]
        assert {key for key, _ in recorder.fired} == {session["session"]}


class TestHitlModes:
    """``timeout`` terminates on the second TERM of a dimension; ``continue`` goes on."""

    def test_continue_vs_timeout(self, spans):
        data = [_as_span_data(s) for s in spans]
        timeout = replay_spans(data, hitl="timeout").sessions[0]
        go_on = replay_spans(data, hitl="continue").sessions[0]
        assert timeout.terminated_at is not None
        assert go_on.terminated_at is None
        assert [e.stage for e in go_on.escalations] == ["self_heal", "hitl"]
        assert [e.stage for e in timeout.escalations] == ["self_heal", "hitl", "terminate"]
        # waste is measured from the first TERM, whatever the human does
        assert go_on.wasted.tool_calls == timeout.wasted.tool_calls
        # continuing keeps detecting: more signals than the terminated replay
        assert len(go_on.signals) >= len(timeout.signals)

    def test_more_loops_continue_asks_again(self):
        """With the human continuing, every later TERM asks again (no termination)."""
        spans = [_as_span_data(s) for s in run_agent(loops=30)]
        report = replay_spans(spans, hitl="continue").sessions[0]
        stages = [e.stage for e in report.escalations]
        assert stages[0] == "self_heal"
        assert stages.count("hitl") >= 4
        assert "terminate" not in stages


class TestSessions:
    """Session keys as the live processor makes them."""

    def test_trace_id_when_no_session(self):
        spans = [_as_span_data(s) for s in run_agent(loops=2, conversation=None)]
        analysis = replay_spans(spans)
        (session,) = analysis.sessions
        assert session.keyed_by == "trace_id"
        assert session.session == spans[0].trace_id
        assert analysis.summary()["sessions_keyed_by_trace_id"] == 1

    def test_subagent_under_delegating_tool(self):
        """A child agent under delegate_task gets its own session and the subagent profile."""
        trace = "ab" * 16
        spans = [
            SpanData(
                trace,
                "0000000000000001",
                "invoke_agent boss",
                None,
                T0,
                T0 + 100 * MS,
                {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "boss",
                    "gen_ai.conversation.id": "c",
                },
            ),
            SpanData(
                trace,
                "0000000000000002",
                "execute_tool delegate_task",
                "0000000000000001",
                T0 + MS,
                T0 + 90 * MS,
                tool_attrs("delegate_task", "{}", "ok"),
            ),
            SpanData(
                trace,
                "0000000000000003",
                "invoke_agent helper",
                "0000000000000002",
                T0 + 2 * MS,
                T0 + 80 * MS,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"},
            ),
        ]
        for i in range(6):
            spans.append(
                SpanData(
                    trace,
                    f"{0x10 + i:016x}",
                    "execute_tool grep",
                    "0000000000000003",
                    T0 + (3 + i) * MS,
                    T0 + (3 + i) * MS + 500,
                    tool_attrs("grep", '{"q": 1}', "nothing"),
                )
            )
        reports = {r.session: r for r in replay_spans(spans).sessions}
        child = reports["c/sub:0000000000000003"]
        assert child.subagent and child.profile == "subagent" and child.agent == "helper"
        assert child.tool_calls == 6
        assert reports["c"].tool_calls == 1
        # subagent identical_call term is 5: calls 0..4 -> TERM at index 4
        assert [s.tool_call_index for s in child.signals if s.level == "term"][:1] == [4]

    def test_model_turn_signal_has_turn_index(self):
        """A text loop fires on model turns: tool_call_index None, model_turn_index set."""
        trace = "cd" * 16
        spans = [
            SpanData(
                trace,
                "00000000000000aa",
                "invoke_agent x",
                None,
                T0,
                T0 + 10**9,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "t"},
            )
        ]
        text = json.dumps(
            [
                {
                    "role": "assistant",
                    "parts": [
                        {
                            "type": "text",
                            "content": "I will now look at the file again to find the bug",
                        }
                    ],
                }
            ]
        )
        for i in range(6):
            spans.append(
                SpanData(
                    trace,
                    f"{0x100 + i:016x}",
                    "chat m",
                    "00000000000000aa",
                    T0 + i * MS,
                    T0 + i * MS + 10,
                    {"gen_ai.operation.name": "chat", "gen_ai.output.messages": text},
                )
            )
        (report,) = replay_spans(spans).sessions
        term = next(s for s in report.signals if s.level == "term")
        assert term.dimension == "text_loop"
        assert term.tool_call_index is None and term.model_turn_index == 4
        jsonschema.validate(replay_spans(spans).to_dict(), schema())


class TestStreaming:
    """Traces are replayed when the input moves past them; the buffer is bounded."""

    def test_flush_per_document(self, spans):
        data = [_as_span_data(s) for s in spans]
        replayer = Replayer()
        for span in data:
            replayer.add(span)
        assert replayer._in_flight == len(data)
        replayer.end_document()
        assert replayer._in_flight == 0 and len(replayer._sessions) == 1

    def test_trace_without_root_waits(self, spans):
        """A trace whose root has not arrived stays buffered across documents."""
        data = [_as_span_data(s) for s in spans]
        children = [s for s in data if s.parent_span_id]
        root = [s for s in data if not s.parent_span_id]
        replayer = Replayer()
        for span in children:
            replayer.add(span)
        replayer.end_document()
        assert replayer._in_flight == len(children)
        for span in root:
            replayer.add(span)
        replayer.end_document()
        assert replayer._in_flight == 0
        (report,) = replayer.finish()
        assert report.session == "conv-1"  # resolved through the late root

    def test_bounded_buffer(self, spans):
        data = [_as_span_data(s) for s in spans]
        replayer = Replayer(max_spans_in_flight=5)
        for span in data:
            replayer.add(span)
            assert replayer._in_flight <= 5


def _as_span_data(span: ReadableSpan) -> SpanData:
    """Through the OTLP reader, so SpanData is exactly what analyze sees."""
    from otel_cycleguard.wire.otlp_json import spans_from_resource_spans

    request = otlp_document([span])
    (converted,) = spans_from_resource_spans(request["resourceSpans"], lambda reason: None)
    return converted


def test_base64_ids_really_used(spans):
    """The OTLP document is protobuf JSON (base64 ids): the reader's conversion is exercised."""
    span = otlp_document(spans)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert len(base64.b64decode(span["traceId"])) == 16


class TestPartitions:
    """Replayers given disjoint parts of the sessions add up to the whole replay."""

    def test_the_parts_replay_exactly_the_sessions_of_the_whole(self):
        spans = []
        for index in range(8):
            for span in run_agent(loops=6 + index, conversation=f"conv-{index}"):
                spans.append(_as_span_data(span))
        whole = Replayer()
        parts = [Replayer(part=(index, 2)) for index in range(2)]
        for replayer in (whole, *parts):
            for span in spans:
                replayer.add(span)
        expected = {r.session: r.to_dict() for r in whole.finish()}
        got = [{r.session: r.to_dict() for r in part.finish()} for part in parts]
        assert sum(len(g) for g in got) == len(expected) == 8
        assert all(got), "every part replays some session"
        merged = {key: value for part in got for key, value in part.items()}
        assert merged == expected

    def test_a_part_outside_the_count_is_refused(self):
        with pytest.raises(ValueError, match="part"):
            Replayer(part=(2, 2))


def test_progress_counts_every_session_when_the_replay_is_split(tmp_path):
    """With --jobs, this process replays only its share, yet progress reports all sessions."""
    lines = []
    for index in range(120):  # 120 sessions of 40 spans: progress fires every 4,096 spans
        spans = []
        for call in range(40):
            spans.append(
                {
                    "traceId": f"{index + 1:032x}",
                    "spanId": f"{index + 1:08x}{call + 1:08x}",
                    "name": "execute_tool read",
                    "startTimeUnixNano": str(T0 + call * MS),
                    "endTimeUnixNano": str(T0 + call * MS + MS // 2),
                    "attributes": [
                        {"key": k, "value": {"stringValue": v}}
                        for k, v in tool_attrs(
                            "read", f'{{"path": "{call}"}}', f"text {call}"
                        ).items()
                    ],
                }
            )
        lines.append(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(lines) + "\n")
    seen: dict[int, list[tuple[int, int]]] = {}
    for jobs in (1, 2):
        calls: list[tuple[int, int]] = []
        analyze_paths([str(path)], on_progress=lambda s, n, c=calls: c.append((s, n)), jobs=jobs)
        seen[jobs] = calls
    assert len(seen[1]) > 1  # at least one progress report before the final one
    assert seen[2] == seen[1]
