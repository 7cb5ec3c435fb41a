"""Decode + convert of OTLP/HTTP bodies: the compiled core against the Python path.

Run: ``python benchmarks/convert.py [--rounds 7]`` (about 30 s). The bodies are those the
clients of ``benchmarks/service.py`` post (its ``build_spans``, the official encoder, 512
spans a request), for each of its span mixes, as protobuf and as OTLP/JSON (the protobuf
JSON mapping with hex ids, as the OTLP/JSON spec and the Collector write them). Each round
times the core and the Python path over every body, alternating: ``from_protobuf_core``
against ``from_protobuf_upb`` (upb + the Python converter), ``from_json_core`` against
``from_json_python`` (orjson + the Python converter). The figure is the best round of each,
in spans per second and microseconds per span, with their ratio.
"""

from __future__ import annotations

import argparse
import base64
import gc
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from service import BATCH, MIXES, build_spans

from otel_cycleguard.service.convert import (
    from_json_core,
    from_json_python,
    from_protobuf_core,
    from_protobuf_upb,
)

ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def requests(noise: int) -> list:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    spans = build_spans(1, traces=60, tools_per_trace=160 // (1 + noise), noise=noise)
    return [encode_spans(spans[i : i + BATCH]) for i in range(0, len(spans), BATCH)]


def json_body(request) -> bytes:
    """The request as OTLP/JSON: the protobuf JSON mapping, its base64 ids written as hex."""
    from google.protobuf.json_format import MessageToDict

    document = MessageToDict(request)
    for block in document.get("resourceSpans", []):
        for scope in block.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for field in ID_FIELDS:
                    if field in span:
                        span[field] = base64.b64decode(span[field]).hex()
    return json.dumps(document).encode()


def timed(convert, payloads: list[bytes]) -> tuple[float, int]:
    """Seconds for one pass over the bodies, and the spans it gave."""
    gc.collect()
    start = time.perf_counter()
    n = 0
    for body in payloads:
        n += len(convert(body).spans)
    return time.perf_counter() - start, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    for mix, (noise, _target) in MIXES.items():
        encoded = requests(noise)
        bodies = {
            "protobuf": [request.SerializeToString() for request in encoded],
            "OTLP/JSON": [json_body(request) for request in encoded],
        }
        paths = {
            "protobuf": (from_protobuf_core, from_protobuf_upb),
            "OTLP/JSON": (from_json_core, from_json_python),
        }
        for wire, payloads in bodies.items():
            core, python = paths[wire]
            if any(core(b) is None for b in payloads):
                raise SystemExit(f"{mix} {wire}: the core fell back to the Python path")
            best = {"core": float("inf"), "python": float("inf")}
            spans = 0
            for _ in range(args.rounds):
                for name, convert in (("core", core), ("python", python)):
                    seconds, spans = timed(convert, payloads)
                    best[name] = min(best[name], seconds)
            rate = {name: spans / seconds for name, seconds in best.items()}
            print(
                f"{mix:12s} {wire:9s} {spans} spans, {len(payloads)} bodies: "
                f"core {rate['core']:,.0f} spans/s ({1e6 / rate['core']:.2f} us/span), "
                f"python {rate['python']:,.0f} spans/s ({1e6 / rate['python']:.2f} us/span), "
                f"ratio {rate['core'] / rate['python']:.2f}x"
            )


if __name__ == "__main__":
    main()
