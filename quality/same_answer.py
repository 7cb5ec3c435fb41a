"""Would "the same answer to changing arguments" separate loops from work?

Usage: python quality/same_answer.py [--min-chars N ...] [--corpus DIR ...]

A measurement behind a rule that was *not* added (docs/quality.md, "The same answer to changing
arguments"). Reworded searches that find the same papers, selectors that match nothing, pages
past the last one: a look-up asked differently each time that keeps answering the same thing
tells the agent nothing new, and no repeat test sees it, because the arguments change. The
guard leaves it alone because it does not know which tools look and which act, and a tool that
acts can answer the same to every call (``saved``, an empty result set for each INSERT).

For every run this finds the longest stretch of consecutive successful calls of one tool whose
masked result is the previous call's while the arguments differ, counting only results of at
least ``--min-chars`` characters once masked (a long answer is less likely an acknowledgement).
It prints, per threshold, how many labelled terminal loops reach it inside their last episode,
how many labelled loop-free runs reach it, and how many successful runs of the whole corpus do,
with the loop-free and successful runs named. Hashes and masks are the reading aid's
(show_run.py), not the detector's.
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
THRESHOLDS = (3, 4, 5, 6, 8)


def load_labels() -> dict[str, dict]:
    labels = {}
    for name in LABEL_FILES:
        with open(os.path.join(HERE, name)) as f:
            for line in f:
                row = json.loads(line)
                labels[row["run_id"]] = row
    return labels


def all_runs(corpus: str) -> Iterator[tuple[dict, dict]]:
    """(runs.jsonl record, OTLP request) of every run of the corpus folder."""
    by_source = collections.defaultdict(list)
    with open(os.path.join(corpus, "runs.jsonl")) as f:
        for line in f:
            meta = json.loads(line)
            by_source[meta["source"]].append(meta)
    for source, metas in sorted(by_source.items()):
        path = os.path.join(corpus, source + ".otlp.jsonl.gz")
        if not os.path.exists(path):
            continue
        with gzip.open(path, "rt") as f:
            for meta, line in zip(metas, f, strict=False):
                yield meta, json.loads(line)


def tool_calls(request: dict) -> list[tuple[str, str, str, int, bool]]:
    """(tool, call hash, masked-result hash, masked length, failed) of every tool span."""
    spans = [s for rs in request["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    spans.sort(key=lambda s: int(s["startTimeUnixNano"]))
    calls = []
    for span in spans:
        at = attrs(span)
        tool = at.get("gen_ai.tool.name")
        if not tool or span["name"].startswith("chat"):
            continue
        arguments = canonical_args(at.get("gen_ai.tool.call.arguments") or "")
        masked = mask(str(at.get("gen_ai.tool.call.result") or ""))
        failed = span.get("status", {}).get("code") == 2
        calls.append((tool, h(tool + "\x00" + arguments), h(masked), len(masked), failed))
    return calls


def stretches(
    calls: list[tuple[str, str, str, int, bool]], min_chars: int
) -> list[tuple[int, int]]:
    """(length, index of the last call) of every maximal same-answer stretch."""
    out = []
    length = 0
    for i, (tool, call, result, size, failed) in enumerate(calls):
        previous = calls[i - 1] if i else None
        same = (
            previous is not None
            and not failed
            and not previous[4]
            and size >= min_chars
            and tool == previous[0]
            and result == previous[2]
            and call != previous[1]
        )
        if same:
            length = length + 1 if length else 2
        else:
            if length:
                out.append((length, i - 1))
            length = 0
    if length:
        out.append((length, len(calls) - 1))
    return out


def last_episode(label: dict) -> tuple[int, int] | None:
    """The span of the episode a terminal loop run ends in."""
    if not label.get("terminal_loop"):
        return None
    open_ = [e for e in label["episodes"] if not e.get("escaped")]
    if not open_:
        return None
    episode = max(open_, key=lambda e: e["last_step"])
    return episode["first_step"], episode["last_step"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--min-chars", type=int, nargs="+", default=[40, 200])
    ap.add_argument("--corpus", nargs="+", default=["/work/shared/corpus", "/work/corpus-extra"])
    a = ap.parse_args()
    labels = load_labels()
    runs = []
    for corpus in a.corpus:
        for meta, request in all_runs(corpus):
            runs.append((meta, tool_calls(request)))
    terminal_total = sum(bool(last_episode(lb)) for lb in labels.values())
    loop_free_total = sum(not lb["has_loop"] for lb in labels.values())
    success_total = sum(meta["outcome"].get("success") is True for meta, _ in runs)
    print(f"{len(runs)} runs, {len(labels)} labelled")
    for min_chars in a.min_chars:
        print(f"\nmasked answers of {min_chars} characters or more")
        print("threshold  terminal loops  loop-free runs  successful runs (whole corpus)")
        found = [(meta, stretches(calls, min_chars)) for meta, calls in runs]
        for threshold in THRESHOLDS:
            terminal, loop_free, success = [], [], []
            for meta, runs_of in found:
                hits = [end for length, end in runs_of if length >= threshold]
                if not hits:
                    continue
                label = labels.get(meta["run_id"])
                span = last_episode(label) if label else None
                if span and any(span[0] <= end <= span[1] for end in hits):
                    terminal.append(meta["run_id"])
                if label and not label["has_loop"]:
                    loop_free.append(meta["run_id"])
                if meta["outcome"].get("success") is True:
                    success.append(meta["run_id"])
            print(
                f"{threshold:>9}  {len(terminal):>6}/{terminal_total:<7}"
                f"  {len(loop_free):>6}/{loop_free_total:<7}  {len(success):>6}/{success_total}"
            )
            for run_id in loop_free:
                print(f"{'':>11}loop-free: {run_id}")
            by_source = collections.Counter(run_id.split("/")[0] for run_id in success)
            if by_source:
                print(f"{'':>11}successful, by source: {dict(sorted(by_source.items()))}")


if __name__ == "__main__":
    main()
