"""Write the reader fixtures: the same three spans as OTLP JSON, OTLP JSON lines, Jaeger, Tempo.

Run ``python tests/analyze/data/make_fixtures.py`` after changing the spans below; the tests
state the expected spans on their own, so a mistake here shows up as a failure there.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
TRACE = "0b8efff798038103d269b633813fc60c"
RESOURCE = {"service.name": "demo-agent", "deployment.environment": "test"}
SPANS: list[dict[str, Any]] = [
    {
        "id": "0af7651916cd43dd",
        "parent": None,
        "name": "invoke_agent demo",
        "kind": 1,
        "start": 1704067200000000000,
        "end": 1704067203000000000,
        "attributes": {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "run-1"},
    },
    {
        "id": "b7ad6b7169203331",
        "parent": "0af7651916cd43dd",
        "name": "chat gpt-4o",
        "kind": 3,
        "start": 1704067200000001234,
        "end": 1704067200750004321,
        "attributes": {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 1200},
    },
    {
        "id": "eee19b7ec3c1b174",
        "parent": "0af7651916cd43dd",
        "name": "execute_tool search",
        "kind": 1,
        "start": 1704067200750004321,
        "end": 1704067201900000999,
        "attributes": {
            "gen_ai.tool.name": "search",
            "gen_ai.tool.call.arguments": '{"q": "loops"}',
            "loop_eval.step": 3,
            "search.score": 0.5,
            "search.cached": False,
        },
        "error": "no results",
        "events": [("retry", 1704067201000000000, {"attempt": 2})],
    },
]
KIND_NAMES = {1: "SPAN_KIND_INTERNAL", 3: "SPAN_KIND_CLIENT"}


def any_value(value: Any) -> dict[str, Any]:
    """OTLP JSON AnyValue."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": value}


def key_values(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    """OTLP JSON KeyValue list."""
    return [{"key": key, "value": any_value(value)} for key, value in attributes.items()]


def b64(hex_id: str) -> str:
    """Base64 of the raw id bytes, as the protobuf JSON mapping writes ids."""
    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def otlp_span(span: dict[str, Any], *, base64_ids: bool, enum_names: bool) -> dict[str, Any]:
    """One span in OTLP JSON (hex ids and int enums) or Tempo's flavour (base64, names)."""
    encode = b64 if base64_ids else str
    out: dict[str, Any] = {
        "traceId": encode(TRACE),
        "spanId": encode(span["id"]),
        "parentSpanId": encode(span["parent"]) if span["parent"] else "",
        "name": span["name"],
        "kind": KIND_NAMES[span["kind"]] if enum_names else span["kind"],
        "startTimeUnixNano": str(span["start"]),
        "endTimeUnixNano": str(span["end"]),
        "attributes": key_values(span["attributes"]),
        "events": [
            {"timeUnixNano": str(time), "name": name, "attributes": key_values(attrs)}
            for name, time, attrs in span.get("events", ())
        ],
        "status": {},
    }
    if "error" in span:
        code: int | str = "STATUS_CODE_ERROR" if enum_names else 2
        out["status"] = {"code": code, "message": span["error"]}
    return out


def resource_spans(spans: list[dict[str, Any]], **flavour: Any) -> dict[str, Any]:
    """One resourceSpans entry holding ``spans`` under ``scopeSpans``."""
    return {
        "resource": {"attributes": key_values(RESOURCE)},
        "scopeSpans": [
            {
                "scope": {"name": "demo.instrumentation", "version": "1.0"},
                "spans": [otlp_span(span, **flavour) for span in spans],
            }
        ],
    }


def jaeger_tag(key: str, value: Any) -> dict[str, Any]:
    """A Jaeger tag with its type."""
    if isinstance(value, bool):
        kind = "bool"
    elif isinstance(value, int):
        kind = "int64"
    elif isinstance(value, float):
        kind = "float64"
    else:
        kind = "string"
    return {"key": key, "type": kind, "value": value}


def jaeger_span(span: dict[str, Any]) -> dict[str, Any]:
    """One span as Jaeger's query API returns it (leading zeros of ids dropped, µs times)."""
    tags = [jaeger_tag(k, v) for k, v in span["attributes"].items()]
    tags += [
        jaeger_tag("otel.scope.name", "demo.instrumentation"),
        jaeger_tag("otel.scope.version", "1.0"),
        jaeger_tag("span.kind", "client" if span["kind"] == 3 else "internal"),
        jaeger_tag("internal.span.format", "otlp"),
    ]
    if "error" in span:
        tags += [
            jaeger_tag("otel.status_code", "ERROR"),
            jaeger_tag("otel.status_description", span["error"]),
            jaeger_tag("error", True),
        ]
    start_us = span["start"] // 1000
    parent = span["parent"]
    return {
        "traceID": TRACE.lstrip("0"),
        "spanID": span["id"].lstrip("0"),
        "operationName": span["name"],
        "references": [
            {"refType": "CHILD_OF", "traceID": TRACE.lstrip("0"), "spanID": parent.lstrip("0")}
        ]
        if parent
        else [],
        "startTime": start_us,
        "duration": span["end"] // 1000 - start_us,
        "tags": tags,
        "logs": [
            {
                "timestamp": time // 1000,
                "fields": [jaeger_tag("event", name)]
                + [jaeger_tag(k, v) for k, v in attrs.items()],
            }
            for name, time, attrs in span.get("events", ())
        ],
        "processID": "p1",
        "warnings": None,
    }


def main() -> None:
    """Write every fixture next to this script."""
    plain = {"base64_ids": False, "enum_names": False}
    tempo = {"base64_ids": True, "enum_names": True}
    document = {"resourceSpans": [resource_spans(SPANS, **plain)]}
    (HERE / "otlp_document.json").write_text(json.dumps(document, indent=2) + "\n")
    lines = [{"resourceSpans": [resource_spans(SPANS[:2], **plain)]}]
    lines.append({"resourceSpans": [resource_spans(SPANS[2:], **plain)]})
    (HERE / "otlp_lines.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    batches = resource_spans(SPANS, **tempo)
    batches["instrumentationLibrarySpans"] = batches.pop("scopeSpans")
    batches["instrumentationLibrarySpans"][0]["instrumentationLibrary"] = batches[
        "instrumentationLibrarySpans"
    ][0].pop("scope")
    (HERE / "tempo_batches.json").write_text(json.dumps({"batches": [batches]}, indent=2) + "\n")
    v2 = {"trace": {"resourceSpans": [resource_spans(SPANS, base64_ids=True, enum_names=False)]}}
    (HERE / "tempo_trace.json").write_text(json.dumps(v2, indent=2) + "\n")
    jaeger = {
        "data": [
            {
                "traceID": TRACE.lstrip("0"),
                "spans": [jaeger_span(span) for span in SPANS],
                "processes": {
                    "p1": {
                        "serviceName": RESOURCE["service.name"],
                        "tags": [jaeger_tag("deployment.environment", "test")],
                    }
                },
                "warnings": None,
            }
        ],
        "total": 0,
        "limit": 0,
        "offset": 0,
        "errors": None,
    }
    (HERE / "jaeger.json").write_text(json.dumps(jaeger, indent=2) + "\n")


if __name__ == "__main__":
    main()
