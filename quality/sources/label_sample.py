"""Deterministic label sample of one extra source, drawn like quality/sample.py round 1.

Why: the blind labellers need a small, fixed set of runs per new source. Strata are the
outcome (success True / False; None if any); inside each stratum runs are sorted by
n_tool_calls and cut into quartiles, the stratum's quota is spread evenly over them with the
remainder going to the longest bins, and a short bin is topped up from the stratum's other
runs. This is quality/sample.py's ``draw`` itself, imported, so the design cannot drift.
No loop heuristic is used.

Usage: python3 quality/sources/label_sample.py --corpus /work/corpus-extra --source SRC \
           --seed N [--fail 16] [--ok 8] [--unknown 0] > quality/sample_SRC.txt
"""

import argparse
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from sample import draw  # quality/sample.py


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/corpus-extra")
    ap.add_argument("--source", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--fail", type=int, default=16)
    ap.add_argument("--ok", type=int, default=8)
    ap.add_argument("--unknown", type=int, default=0)
    a = ap.parse_args()
    strata = defaultdict(list)
    with open(os.path.join(a.corpus, "runs.jsonl"), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["source"] == a.source:
                strata[(r["source"], r["outcome"].get("success"))].append(r)
    quota = {(a.source, False): a.fail, (a.source, True): a.ok}
    if a.unknown:
        quota[(a.source, None)] = a.unknown
    for rid in draw(strata, quota, a.seed, top_up=True):
        print(rid)


if __name__ == "__main__":
    main()
