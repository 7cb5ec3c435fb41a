"""A looping "agent" in its own process: real OpenTelemetry SDK + the official OTLP exporter.

Driven over stdin, one JSON command per line, so a test controls exactly when each span is
sent (and can restart the service between two of them):

    {"tool": "read_file", "args": {"path": "a"}, "result": "same"}  -> one execute_tool span
    {"text": "I will try again"}                                     -> one chat span
    "end"                                                            -> ends the agent span

Each command is answered with ``ok <n>`` once the span was exported (SimpleSpanProcessor
exports synchronously, retrying through a service restart). Usage:
``python agent.py --protocol http|grpc --endpoint URL [--token T] [--conversation ID]``.
"""

from __future__ import annotations

import argparse
import json
import sys

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", choices=("http", "grpc"), required=True)
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--token")
    parser.add_argument("--agent", default="looper")
    parser.add_argument("--conversation", help="gen_ai.conversation.id on the agent span")
    parser.add_argument("--compression", choices=("none", "gzip"), default="gzip")
    args = parser.parse_args()
    headers = {"authorization": f"Bearer {args.token}"} if args.token else None
    if args.protocol == "http":
        from opentelemetry.exporter.otlp.proto.http import Compression
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(
            endpoint=args.endpoint.rstrip("/") + "/v1/traces",
            headers=headers,
            compression=Compression.Gzip
            if args.compression == "gzip"
            else Compression.NoCompression,
            timeout=20,
        )
    else:
        from grpc import Compression
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(
            endpoint=args.endpoint,
            insecure=True,
            headers=headers,
            compression=Compression.Gzip
            if args.compression == "gzip"
            else Compression.NoCompression,
            timeout=20,
        )
    provider = TracerProvider(resource=Resource.create({"service.name": "looping-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent")
    agent_attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": args.agent}
    if args.conversation:
        agent_attrs["gen_ai.conversation.id"] = args.conversation
    root = tracer.start_span(f"invoke_agent {args.agent}", attributes=agent_attrs)
    from opentelemetry import trace

    ctx = trace.set_span_in_context(root)
    n = 0
    for line in sys.stdin:
        command = json.loads(line)
        if command == "end":
            break
        if "tool" in command:
            span = tracer.start_span(
                f"execute_tool {command['tool']}",
                context=ctx,
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": command["tool"],
                    "gen_ai.tool.call.arguments": json.dumps(command.get("args", {})),
                    "gen_ai.tool.call.result": str(command.get("result", "")),
                },
            )
            if command.get("error"):
                span.set_status(Status(StatusCode.ERROR, "failed"))
            span.end()
        else:
            span = tracer.start_span(
                "chat model",
                context=ctx,
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.output.messages": json.dumps(
                        [
                            {
                                "role": "assistant",
                                "parts": [{"type": "text", "content": command["text"]}],
                            }
                        ]
                    ),
                },
            )
            span.end()
        n += 1  # noqa: SIM113
        print(f"ok {n}", flush=True)
    root.end()
    provider.shutdown()
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
