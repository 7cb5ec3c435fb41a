"""Deterministic stratified sample of corpus runs for hand-labelling.

Strata: source x outcome (success True / False / None). Within each stratum, runs are
sorted by n_tool_calls and cut into equal-size length bins (quartiles); the stratum's quota
is spread evenly over the bins so long runs (e.g. failing runs with many steps) are
represented in proportion to their share, not left to chance. No loop heuristic is used.

Usage: python quality/sample.py [--corpus DIR] > quality/sample.txt
"""
import argparse
import json
import os
import random
from collections import defaultdict

SEED = 2026
QUOTA = {
    ("multiswe_sweagent_java", True): 8,
    ("multiswe_sweagent_java", False): 24,
    ("multiswe_sweagent_java", None): 8,
    ("mini_swe_gemini3", True): 15,
    ("mini_swe_gemini3", False): 20,
    ("taubench", True): 10,
    ("taubench", False): 15,
    ("react_hotpotqa", True): 8,
    ("react_hotpotqa", False): 12,
}
N_BINS = 4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/shared/corpus")
    a = ap.parse_args()
    strata = defaultdict(list)
    with open(os.path.join(a.corpus, "runs.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            strata[(r["source"], r["outcome"].get("success"))].append(r)
    rng = random.Random(SEED)
    chosen = []
    for key in sorted(QUOTA, key=str):
        runs = sorted(strata[key], key=lambda r: (r["n_tool_calls"], r["run_id"]))
        q = QUOTA[key]
        n = len(runs)
        bins = [runs[i * n // N_BINS:(i + 1) * n // N_BINS] for i in range(N_BINS)]
        # spread quota evenly across bins, remainder to the longest bins
        per = [q // N_BINS] * N_BINS
        for i in range(q % N_BINS):
            per[N_BINS - 1 - i] += 1
        for b, k in zip(bins, per):
            chosen.extend(r["run_id"] for r in rng.sample(b, min(k, len(b))))
    for rid in chosen:
        print(rid)


if __name__ == "__main__":
    main()
