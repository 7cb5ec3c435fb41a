"""Decode + convert of OTLP/HTTP protobuf bodies: the compiled core against the Python path.

Run: ``python benchmarks/convert.py [--rounds 7]`` (about 20 s). The bodies are those the
clients of ``benchmarks/service.py`` post (its ``build_spans``, the official encoder, 512
spans a request), for each of its span mixes. Each round times ``from_protobuf_core`` and
``from_protobuf_upb`` over every body, alternating; the figure is the best round of each, in
spans per second and microseconds per span, with their ratio.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from service import BATCH, MIXES, build_spans

from otel_cycleguard.service.convert import from_protobuf_core, from_protobuf_upb


def bodies(noise: int) -> list[bytes]:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    spans = build_spans(1, traces=60, tools_per_trace=160 // (1 + noise), noise=noise)
    return [
        encode_spans(spans[i : i + BATCH]).SerializeToString() for i in range(0, len(spans), BATCH)
    ]


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
        payloads = bodies(noise)
        if any(from_protobuf_core(b) is None for b in payloads):
            raise SystemExit(f"{mix}: the core fell back to the Python path")
        best = {"core": float("inf"), "python": float("inf")}
        spans = 0
        for _ in range(args.rounds):
            for name, convert in (("core", from_protobuf_core), ("python", from_protobuf_upb)):
                seconds, spans = timed(convert, payloads)
                best[name] = min(best[name], seconds)
        rate = {name: spans / seconds for name, seconds in best.items()}
        print(
            f"{mix:12s} {spans} spans, {len(payloads)} bodies: "
            f"core {rate['core']:,.0f} spans/s ({1e6 / rate['core']:.2f} us/span), "
            f"python {rate['python']:,.0f} spans/s ({1e6 / rate['python']:.2f} us/span), "
            f"ratio {rate['core'] / rate['python']:.2f}x"
        )


if __name__ == "__main__":
    main()
