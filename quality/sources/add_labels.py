"""Append one added source's blind labels to quality/labels_sources.jsonl, checked first.

Why: the first-contact labels of a new source come from several labellers, each writing a JSON
lines file. Before they are committed (and before the source is first replayed) they must cover
exactly the source's label sample, agree with the run index on outcome and length, and name
only rubric episode types inside the run. This checks all of it, then appends the records in
the sample's order with ``round`` set to ``first-contact``. Nothing is written on any error.

Usage: python3 quality/sources/add_labels.py --source SRC [--corpus /work/corpus-extra] \
           LABELS.jsonl [LABELS.jsonl ...]
(the sample is quality/sample_SRC.txt; metadata comes from CORPUS/runs.jsonl)
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from add_label import TYPES  # quality/add_label.py: the rubric's episode types

HERE = os.path.dirname(os.path.abspath(__file__))
QUALITY = os.path.dirname(HERE)
LABELS = os.path.join(QUALITY, "labels_sources.jsonl")
EPISODE_KEYS = ("type", "first_step", "last_step", "unit", "repetitions", "escaped", "note")


def problems(label: dict, meta: dict) -> list[str]:
    """What is wrong with one label record (empty when it may be appended)."""
    rid = label.get("run_id")
    out = []
    if label.get("outcome_success") != meta["outcome"].get("success"):
        out.append(f"{rid}: outcome_success {label.get('outcome_success')!r} is not the index's")
    if label.get("n_tool_calls") != meta["n_tool_calls"]:
        out.append(f"{rid}: n_tool_calls {label.get('n_tool_calls')!r} != {meta['n_tool_calls']}")
    episodes = label.get("episodes")
    if not isinstance(episodes, list):
        return [*out, f"{rid}: episodes is not a list"]
    if label.get("has_loop") != bool(episodes):
        out.append(f"{rid}: has_loop disagrees with its episodes")
    for e in episodes:
        missing = [k for k in EPISODE_KEYS if k not in e]
        if missing:
            out.append(f"{rid}: an episode lacks {', '.join(missing)}")
            continue
        if e["type"] not in TYPES:
            out.append(f"{rid}: unknown episode type {e['type']!r}")
        if not 0 <= e["first_step"] <= e["last_step"] < max(meta["n_tool_calls"], 1):
            out.append(f"{rid}: steps {e['first_step']}-{e['last_step']} outside the run")
    if label.get("terminal_loop") and not any(not e.get("escaped") for e in episodes):
        out.append(f"{rid}: terminal_loop without an episode it did not escape")
    if not isinstance(label.get("labeller_note"), str):
        out.append(f"{rid}: no labeller_note")
    return out


def append_labels(
    source: str, files: list[str], corpus: str, labels_path: str = LABELS, sample_path: str = ""
) -> tuple[list[str], int]:
    """Check the labellers' files and append them; (errors, records appended). On any error
    nothing is appended."""
    sample_path = sample_path or os.path.join(QUALITY, f"sample_{source}.txt")
    with open(sample_path, encoding="utf-8") as f:
        sample = [line.rstrip("\n") for line in f if line.strip()]
    meta = {}
    with open(os.path.join(corpus, "runs.jsonl"), encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            meta[record["run_id"]] = record
    given: dict[str, dict] = {}
    errors = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                label = json.loads(line)
                rid = label.get("run_id")
                if rid in given:
                    errors.append(f"{path}:{number}: {rid} labelled twice")
                given[rid] = label
    already = set()
    if os.path.exists(labels_path):
        with open(labels_path, encoding="utf-8") as f:
            already = {json.loads(line)["run_id"] for line in f if line.strip()}
    errors += [f"{rid}: in the sample, not labelled" for rid in sample if rid not in given]
    errors += [f"{rid}: labelled, not in the sample" for rid in given if rid not in sample]
    errors += [f"{rid}: already in {labels_path}" for rid in sample if rid in already]
    errors += [f"{rid}: not in {corpus}/runs.jsonl" for rid in sample if rid not in meta]
    for rid in sample:
        if rid in given and rid in meta:
            errors += problems(given[rid], meta[rid])
    if errors:
        return errors, 0
    with open(labels_path, "a", encoding="utf-8") as f:
        for rid in sample:
            label = given[rid]
            record = {
                "run_id": rid,
                "source": source,
                "outcome_success": label["outcome_success"],
                "n_tool_calls": label["n_tool_calls"],
                "has_loop": label["has_loop"],
                "terminal_loop": bool(label.get("terminal_loop")),
                "episodes": label["episodes"],
                "labeller_note": label["labeller_note"],
                "round": "first-contact",
            }
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    return [], len(sample)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True)
    ap.add_argument("--corpus", default="/work/corpus-extra")
    ap.add_argument("files", nargs="+", help="labellers' JSON lines files")
    a = ap.parse_args()
    errors, appended = append_labels(a.source, a.files, a.corpus)
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    print(f"{a.source}: {appended} labels appended to {LABELS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
