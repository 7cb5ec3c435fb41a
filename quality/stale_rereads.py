"""Would a tool-agnostic "re-reads that learn nothing" rule separate loops from work?

Usage: python quality/stale_rereads.py [--window N] [--corpus DIR ...]

A measurement behind a rule that was *not* added (docs/quality.md, tau2_telecom_solo). For
every labelled run it finds the longest stretch of consecutive successful calls each of which
repeats a (tool, canonical arguments, masked result) seen within the last ``window`` calls,
i.e. calls that told the agent nothing it had not been told. Nothing about the tools is
assumed, so the rule would obey "what the guard does not know is not evidence". It prints, per
threshold, how many terminal loops, loop-free runs and successful runs reach it, and the
loop-free runs that do. Hashes and masks are the reading aid's (show_run.py), not the
detector's.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
from collections.abc import Iterator

from show_run import attrs, canonical_args, h, mask

HERE = os.path.dirname(os.path.abspath(__file__))
LABEL_FILES = ("labels.jsonl", "labels_sources.jsonl")


def load_labels() -> dict[str, dict]:
    labels = {}
    for name in LABEL_FILES:
        with open(os.path.join(HERE, name)) as f:
            for line in f:
                row = json.loads(line)
                labels[row["run_id"]] = row
    return labels


def labelled_runs(corpus: str, labels: dict[str, dict]) -> Iterator[tuple[str, dict]]:
    by_source = collections.defaultdict(list)
    with open(os.path.join(corpus, "runs.jsonl")) as f:
        for line in f:
            meta = json.loads(line)
            by_source[meta["source"]].append(meta)
    for source, metas in by_source.items():
        path = os.path.join(corpus, source + ".otlp.jsonl.gz")
        if not os.path.exists(path):
            continue
        with gzip.open(path, "rt") as f:
            for meta, line in zip(metas, f, strict=False):
                if meta["run_id"] in labels:
                    yield meta["run_id"], json.loads(line)


def tool_calls(request: dict) -> list[tuple[str, str, bool]]:
    """(call hash, result hash, failed) of every tool span, in start order."""
    spans = [s for rs in request["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    spans.sort(key=lambda s: int(s["startTimeUnixNano"]))
    calls = []
    for span in spans:
        at = attrs(span)
        tool = at.get("gen_ai.tool.name")
        if not tool or span["name"].startswith("chat"):
            continue
        arguments = canonical_args(at.get("gen_ai.tool.call.arguments") or "")
        result = str(at.get("gen_ai.tool.call.result") or "")
        failed = span.get("status", {}).get("code") == 2
        calls.append((h(tool + "\x00" + arguments), h(mask(result)), failed))
    return calls


def longest_stale_stretch(calls: list[tuple[str, str, bool]], window: int) -> int:
    best = current = 0
    recent: collections.deque[tuple[str, str]] = collections.deque(maxlen=window)
    for call, result, failed in calls:
        current = current + 1 if not failed and (call, result) in recent else 0
        best = max(best, current)
        recent.append((call, result))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--window", type=int, default=20)
    ap.add_argument("--corpus", nargs="+", default=["/work/shared/corpus", "/work/corpus-extra"])
    a = ap.parse_args()
    labels = load_labels()
    rows = []
    for corpus in a.corpus:
        for run_id, request in labelled_runs(corpus, labels):
            rows.append((labels[run_id], longest_stale_stretch(tool_calls(request), a.window)))
    print(f"{len(rows)} labelled runs, window {a.window}")
    print("threshold  terminal loops  loop-free runs  successful runs")
    for threshold in range(3, 7):
        hit = [(label, n) for label, n in rows if n >= threshold]
        terminal = sum(label["terminal_loop"] for label, _ in hit)
        loop_free = [label for label, _ in hit if not label["has_loop"]]
        success = sum(bool(label["outcome_success"]) for label, _ in hit)
        print(
            f"{threshold:>9}  {terminal:>6}/{sum(lb['terminal_loop'] for lb, _ in rows):<7}"
            f"  {len(loop_free):>6}/{sum(not lb['has_loop'] for lb, _ in rows):<7}"
            f"  {success:>6}/{sum(bool(lb['outcome_success']) for lb, _ in rows)}"
        )
        for label in loop_free:
            print(f"{'':>11}loop-free: {label['run_id']}")


if __name__ == "__main__":
    main()
