"""Upsert hand labels into quality/labels.jsonl (fills metadata from runs.jsonl).

Usage: python quality/add_label.py < labels_batch.jsonl
Each input line: {"run_id", "terminal_loop", "episodes": [...], "labeller_note"}.
`has_loop` is derived from episodes; source/outcome/n_tool_calls come from runs.jsonl.
The output keeps the order of quality/sample.txt, then quality/sample2.txt (round 2), then
quality/sample3.txt (round 3), then quality/sample4.txt (round 4), then quality/sample5.txt
(round 5), then quality/sample6.txt (round 6), then quality/sample7.txt (round 7). Records of round-N runs (N >= 2) get `"round": N`; round-1 records are left as they
were.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = "/work/shared/corpus"
TYPES = {
    "identical_repeat",
    "cycle",
    "near_duplicate_edit",
    "error_streak",
    "poll_no_progress",
    "text_loop",
}


def _ids(path):
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def main():
    meta = {}
    with open(os.path.join(CORPUS, "runs.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            meta[r["run_id"]] = r
    order = _ids(os.path.join(HERE, "sample.txt"))
    round_of = {}
    for rnd in range(2, 100):
        name = f"sample{rnd}.txt"
        if not os.path.exists(os.path.join(HERE, name)):
            break
        ids = _ids(os.path.join(HERE, name))
        assert not set(order) & set(ids), name
        round_of.update((rid, rnd) for rid in ids)
        order += ids
    path = os.path.join(HERE, "labels.jsonl")
    labels = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip():
                    d = json.loads(line)
                    labels[d["run_id"]] = d
    for line in sys.stdin:
        if not line.strip():
            continue
        d = json.loads(line)
        rid = d["run_id"]
        assert rid in order, rid
        m = meta[rid]
        eps = d.get("episodes", [])
        for e in eps:
            assert e["type"] in TYPES, e
            assert 0 <= e["first_step"] <= e["last_step"] < max(m["n_tool_calls"], 1), (rid, e)
            for k in ("unit", "repetitions", "escaped", "note"):
                assert k in e, (rid, k)
        if d.get("terminal_loop"):
            assert eps and any(not e["escaped"] for e in eps), rid
        labels[rid] = {
            "run_id": rid,
            "source": m["source"],
            "outcome_success": m["outcome"].get("success"),
            "n_tool_calls": m["n_tool_calls"],
            "has_loop": bool(eps),
            "terminal_loop": bool(d.get("terminal_loop")),
            "episodes": eps,
            "labeller_note": d.get("labeller_note", ""),
        }
        if rid in round_of:
            labels[rid]["round"] = round_of[rid]
    with open(path, "w") as f:
        for rid in order:
            if rid in labels:
                f.write(json.dumps(labels[rid]) + "\n")
    print(f"{len(labels)} labelled of {len(order)}", file=sys.stderr)


if __name__ == "__main__":
    main()
