"""Throughput of ``cycleguard analyze``, measured against parsing the same file, in one run.

Usage: ``python benchmarks/analyze.py [--spans 300000] [--corpus ../shared/corpus]
[--repeat 3] [--profile] [--split] [--jobs 2]``

Builds (or reuses, under ``/tmp/cycleguard-bench/``) two OTLP JSON-lines files:

- ``generated-<N>.jsonl``: N spans of agent-like traces (an ``invoke_agent`` root, ``chat``
  turns and GenAI ``execute_tool`` calls with short arguments and results, some runs looping);
- ``corpus.jsonl``: the development corpus decompressed and concatenated (real runs, whose
  tool results are whole file listings and build logs: few, large spans).

For each file it times, best of ``--repeat``: parse only (``orjson.loads`` on every line, the
reference), read (``TraceReader``: a line's bytes to SpanData, by the core's OTLP/JSON reader,
orjson and the Python converter for what it leaves) and analyze
(``analyze_paths``: read + session grouping + detection + escalation), and prints analysed
spans per second and the ratio analyze / parse-only. Targets (issue 18): >= 200,000 spans/s
on the generated 300k-span file, one process, and <= 2.5x parse-only. ``--profile`` prints a
cProfile of one analyze run per file. ``--split``
also times analyze with the guard's ``observe_*`` stubbed out (no detection) and prints how
one span's time splits: read (to SpanData) / replay (sessions, ordering, record
extraction) / detection. ``--jobs N`` (default 2) also times ``analyze_paths(jobs=N)``, for
information: N processes each read the whole file and replay a share of the sessions.
"""

from __future__ import annotations

import argparse
import cProfile
import gzip
import io
import json
import pstats
import random
import sys
import time
from pathlib import Path

from otel_cycleguard.analyze import TraceReader, analyze_paths
from otel_cycleguard.guard import CycleGuard
from otel_cycleguard.wire._json import PARSER, loads

BENCH_DIR = Path("/tmp/cycleguard-bench")
TARGET_RATE = 200_000
TARGET_RATIO = 2.5
T0 = 1_704_067_200_000_000_000
TOOLS = ("read_file", "grep", "bash", "edit", "list_dir", "search", "write", "run_tests")


def _attr(key: str, value: object) -> dict:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": str(value)}}


def _trace(rng: random.Random, index: int, steps: int) -> tuple[str, int]:
    """One agent run as an OTLP JSON line; returns (line, span count)."""
    trace = f"{rng.getrandbits(128):032x}"
    root = f"{rng.getrandbits(64):016x}"
    clock = T0 + index * 10**12
    spans = []
    looping = rng.random() < 0.2
    for step in range(steps):
        chat_id = f"{rng.getrandbits(64):016x}"
        text = f"I will look at file {rng.randrange(50)} next" if not looping else "Let me retry."
        spans.append(
            {
                "traceId": trace,
                "spanId": chat_id,
                "parentSpanId": root,
                "name": "chat gpt-4o",
                "kind": 3,
                "startTimeUnixNano": str(clock),
                "endTimeUnixNano": str(clock + 800_000_000),
                "attributes": [
                    _attr("gen_ai.operation.name", "chat"),
                    _attr("gen_ai.request.model", "gpt-4o"),
                    _attr("gen_ai.usage.input_tokens", 1000 + step * 50),
                    _attr("gen_ai.usage.output_tokens", 40),
                    _attr(
                        "gen_ai.output.messages",
                        json.dumps(
                            [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
                        ),
                    ),
                ],
            }
        )
        clock += 10**9
        tool = "grep" if looping and step > steps // 2 else rng.choice(TOOLS)
        args = (
            {"pattern": "TODO"}
            if tool == "grep" and looping
            else {"path": f"src/m{rng.randrange(40)}.py"}
        )
        result = "no matches" if looping else f"ok {rng.randrange(1000)} lines, took 0.{step}s"
        error = tool == "run_tests" and rng.random() < 0.5
        span = {
            "traceId": trace,
            "spanId": f"{rng.getrandbits(64):016x}",
            "parentSpanId": root,
            "name": f"execute_tool {tool}",
            "kind": 1,
            "startTimeUnixNano": str(clock),
            "endTimeUnixNano": str(clock + 200_000_000),
            "attributes": [
                _attr("gen_ai.operation.name", "execute_tool"),
                _attr("gen_ai.tool.name", tool),
                _attr("gen_ai.tool.call.id", f"call_{step}"),
                _attr("gen_ai.tool.call.arguments", json.dumps(args)),
                _attr("gen_ai.tool.call.result", result),
            ],
        }
        if error:
            span["status"] = {"code": 2, "message": "tests failed"}
            span["attributes"].append(_attr("error.type", "exit_code_1"))
        spans.append(span)
        clock += 3 * 10**8
    spans.insert(
        0,
        {
            "traceId": trace,
            "spanId": root,
            "name": "invoke_agent bench",
            "kind": 1,
            "startTimeUnixNano": str(T0 + index * 10**12),
            "endTimeUnixNano": str(clock),
            "attributes": [
                _attr("gen_ai.operation.name", "invoke_agent"),
                _attr("gen_ai.agent.name", "bench"),
                _attr("gen_ai.conversation.id", f"run-{index}"),
            ],
        },
    )
    document = {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attr("service.name", "bench-agent")]},
                "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}],
            }
        ]
    }
    return json.dumps(document, separators=(",", ":")), len(spans)


def generated_file(spans: int) -> Path:
    path = BENCH_DIR / f"generated-{spans}.jsonl"
    if path.exists():
        return path
    rng = random.Random(42)
    written = index = 0
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        while written < spans:
            line, count = _trace(rng, index, rng.randrange(10, 60))
            handle.write(line + "\n")
            written += count
            index += 1
    tmp.rename(path)
    return path


def corpus_file(corpus: Path) -> Path | None:
    sources = sorted(corpus.glob("*.otlp.jsonl.gz")) if corpus.is_dir() else []
    if not sources:
        return None
    path = BENCH_DIR / "corpus.jsonl"
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        for source in sources:
            with gzip.open(source, "rb") as handle:
                while chunk := handle.read(1 << 20):
                    out.write(chunk)
    tmp.rename(path)
    return path


def best(repeat: int, fn) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def parse_only(path: Path) -> int:
    count = 0
    with open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                loads(line)
                count += 1
    return count


def read_only(path: Path) -> int:
    return sum(1 for _ in TraceReader([str(path)]))


def analyze_without_detection(path: Path) -> object:
    """analyze_paths with the guard answering every call with no signal."""
    saved = CycleGuard.observe_tool_call, CycleGuard.observe_model_turn
    CycleGuard.observe_tool_call = lambda self, *a, **k: []  # type: ignore[method-assign]
    CycleGuard.observe_model_turn = lambda self, *a, **k: []  # type: ignore[method-assign]
    try:
        return analyze_paths([str(path)])
    finally:
        CycleGuard.observe_tool_call, CycleGuard.observe_model_turn = saved


def bench(
    label: str, path: Path, repeat: int, profile: bool, split: bool = False, jobs: int = 2
) -> bool:
    size = path.stat().st_size
    t_parse, _ = best(repeat, lambda: parse_only(path))
    t_read, spans = best(repeat, lambda: read_only(path))
    t_analyze, analysis = best(repeat, lambda: analyze_paths([str(path)]))
    summary = analysis.summary()
    rate = spans / t_analyze
    ratio = t_analyze / t_parse
    ok_rate, ok_ratio = rate >= TARGET_RATE, ratio <= TARGET_RATIO
    print(
        f"\n== {label}: {path} ({size / 1e6:.1f} MB, {spans:,} spans, "
        f"{summary['sessions']:,} sessions, {summary['tool_calls']:,} tool calls)"
    )
    print(f"parse only ({PARSER}.loads)   {t_parse:8.3f} s  {spans / t_parse:12,.0f} spans/s")
    print(
        f"read (TraceReader)         {t_read:8.3f} s  {spans / t_read:12,.0f} spans/s  "
        f"{t_read / t_parse:5.2f}x parse"
    )
    print(
        f"analyze (analyze_paths)    {t_analyze:8.3f} s  {rate:12,.0f} spans/s  {ratio:5.2f}x parse"
    )
    print(
        f"target >= {TARGET_RATE:,} spans/s: {'PASS' if ok_rate else 'MISS'}   "
        f"target <= {TARGET_RATIO}x parse-only: {'PASS' if ok_ratio else 'MISS'}"
    )
    if jobs > 1:
        t_jobs, _ = best(repeat, lambda: analyze_paths([str(path)], jobs=jobs))
        print(
            f"analyze --jobs {jobs:<11} {t_jobs:8.3f} s  {spans / t_jobs:12,.0f} spans/s  "
            f"{t_jobs / t_parse:5.2f}x parse  ({t_analyze / t_jobs:.2f}x one process)"
        )
    if split:
        t_replay, _ = best(repeat, lambda: analyze_without_detection(path))
        print(
            f"analyze, no detection      {t_replay:8.3f} s  {spans / t_replay:12,.0f} spans/s  "
            f"{t_replay / t_parse:5.2f}x parse"
        )
        parts = [
            ("read", t_read),
            ("replay", t_replay - t_read),
            ("detection", t_analyze - t_replay),
        ]
        print(
            "per span: "
            + " | ".join(f"{name} {t / spans * 1e6:.2f} us" for name, t in parts)
            + f" | total {t_analyze / spans * 1e6:.2f} us"
        )
    if profile:
        profiler = cProfile.Profile()
        profiler.enable()
        analyze_paths([str(path)])
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
        print(out.getvalue())
    return ok_rate and ok_ratio


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=300_000)
    parser.add_argument(
        "--corpus",
        type=Path,
        default=next(
            (p for p in (Path(__file__).resolve().parents[2] / "shared" / "corpus",) if p.is_dir()),
            Path("/work/shared/corpus"),
        ),
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--split", action="store_true", help="time analyze without detection")
    parser.add_argument(
        "--jobs", type=int, default=2, help="also time analyze --jobs N (1: skip; default 2)"
    )
    args = parser.parse_args(argv)
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    print(f"python {sys.version.split()[0]}, parser {PARSER}, best of {args.repeat}")
    results = [
        bench(
            "generated",
            generated_file(args.spans),
            args.repeat,
            args.profile,
            args.split,
            args.jobs,
        )
    ]
    corpus = corpus_file(args.corpus)
    if corpus is not None:
        results.append(bench("corpus", corpus, args.repeat, args.profile, args.split, args.jobs))
    else:
        print(f"\n(no corpus at {args.corpus}: skipped)")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
