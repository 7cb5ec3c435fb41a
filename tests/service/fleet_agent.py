"""Agents whose conversations span several traces, in their own process: the real
OpenTelemetry SDK and the official OTLP exporter (gRPC or HTTP), as a fleet's agents would run.

Each conversation is a series of user turns; every turn is one trace (an ``invoke_agent``
root with tool and model spans under it). Every span carries ``gen_ai.conversation.id``
(what a baggage span processor does), which is what the Collector's load-balancing exporter
routes on and what cycleguard keys the session by. The conversations of one process are
interleaved turn by turn, so the Collector's batches mix them. The agent name is the
conversation id, so each instance's ``cycleguard_tool_calls_total{agent=…}`` shows where a
conversation's spans went.

Usage: ``python fleet_agent.py [--protocol grpc|http] --endpoint HOST:PORT|URL
--conversations c00,c01,… [--turn-pause S] [--step]``; prints ``done <spans>`` when every span was exported. With
``--step`` it waits for a line on stdin before each turn after the first, so a test can stop
an instance between two turns.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

TURNS = 4
KINDS = ("cross_trace_identical", "in_trace_identical", "ping_pong", "text_loop", "loop_free")


def kind_of(conversation: str) -> str:
    """The scripted pattern of a conversation, from the number at the end of its id."""
    return KINDS[int(conversation.lstrip("abcdefghijklmnopqrstuvwxyz-_")) % len(KINDS)]


def conversation_script(conversation: str) -> list[list[dict[str, Any]]]:
    """The turns (one trace each) of one conversation: a list of tool/text commands."""
    kind = kind_of(conversation)
    same = {"tool": "read_file", "args": {"path": "notes.md"}, "result": "unchanged"}

    def fresh(turn: int, i: int) -> dict[str, Any]:
        return {
            "tool": "grep",
            "args": {"q": f"{conversation}-{turn}-{i}"},
            "result": f"{turn}.{i} hits",
        }

    turns: list[list[dict[str, Any]]] = []
    for t in range(TURNS):
        if kind == "cross_trace_identical":  # 2 identical calls per turn: a loop over turns
            turn = [same, same]
        elif kind == "in_trace_identical":  # the whole loop inside turn 2
            turn = [same] * 6 if t == 1 else [fresh(t, 0), fresh(t, 1)]
        elif kind == "ping_pong":
            turn = [
                {"tool": "grep", "args": {"q": "TODO"}, "result": "3 hits"},
                {"tool": "edit", "args": {"file": "a.py"}, "result": "ok"},
            ]
        elif kind == "text_loop":
            turn = [{"text": "Let me look at the file once more to be sure."}, fresh(t, 0)]
        else:
            turn = [fresh(t, 0), {"text": f"Step {t}: done with part {t}."}, fresh(t, 1)]
        turns.append(turn)
    return turns


def spans_of(conversation: str) -> int:
    """Spans a conversation exports: every command plus one root per turn."""
    return sum(len(turn) + 1 for turn in conversation_script(conversation))


def tool_calls_of(conversation: str) -> int:
    return sum(1 for turn in conversation_script(conversation) for c in turn if "tool" in c)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", choices=("grpc", "http"), default="grpc")
    parser.add_argument("--endpoint", required=True, help="host:port (gRPC) or URL (HTTP)")
    parser.add_argument("--conversations", required=True)
    parser.add_argument("--turn-pause", type=float, default=0.0)
    parser.add_argument(
        "--step", action="store_true", help="print 'ready <turn>' and wait for a line first"
    )
    args = parser.parse_args()

    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    exporter: Any
    if args.protocol == "grpc":
        from grpc import Compression
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(
            endpoint=args.endpoint, insecure=True, compression=Compression.Gzip, timeout=30
        )
    else:
        from opentelemetry.exporter.otlp.proto.http import Compression as HttpCompression
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as HttpExporter,
        )

        exporter = HttpExporter(
            endpoint=args.endpoint.rstrip("/") + "/v1/traces",
            compression=HttpCompression.Gzip,
            timeout=30,
        )
    provider = TracerProvider(resource=Resource.create({"service.name": "fleet-agent"}))
    # one export request per turn (flushed at its end): the turn's spans in end order, and
    # the turn reaches the Collector at one instant, so its batch timer rarely splits it
    provider.add_span_processor(
        BatchSpanProcessor(
            exporter, max_queue_size=8192, max_export_batch_size=8192, schedule_delay_millis=60_000
        )
    )
    tracer = provider.get_tracer("fleet-agent")
    conversations = args.conversations.split(",")
    scripts = {c: conversation_script(c) for c in conversations}
    spans = 0
    for t in range(TURNS):
        if args.step and t:
            print(f"ready {t}", flush=True)
            sys.stdin.readline()
        for conv in conversations:
            common = {"gen_ai.conversation.id": conv, "gen_ai.agent.name": conv}
            root = tracer.start_span(
                f"invoke_agent {conv}",
                attributes={**common, "gen_ai.operation.name": "invoke_agent"},
            )
            ctx = trace.set_span_in_context(root)
            for command in scripts[conv][t]:
                if "tool" in command:
                    attributes = {
                        **common,
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": command["tool"],
                        "gen_ai.tool.call.arguments": json.dumps(command["args"]),
                        "gen_ai.tool.call.result": command["result"],
                    }
                    tracer.start_span(
                        f"execute_tool {command['tool']}", context=ctx, attributes=attributes
                    ).end()
                else:
                    message = [
                        {
                            "role": "assistant",
                            "parts": [{"type": "text", "content": command["text"]}],
                        }
                    ]
                    attributes = {
                        **common,
                        "gen_ai.operation.name": "chat",
                        "gen_ai.output.messages": json.dumps(message),
                    }
                    tracer.start_span("chat model", context=ctx, attributes=attributes).end()
                spans += 1
            root.end()
            spans += 1
        assert provider.force_flush(30_000), "export failed"
        if args.turn_pause:
            time.sleep(args.turn_pause)
    provider.shutdown()
    print(f"done {spans}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
