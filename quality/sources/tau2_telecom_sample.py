"""Deterministic label sample of the tau2 telecom sources, drawn like quality/sample.py round 1.

Why: blind labellers need a fixed set of runs per new source, chosen without any loop
heuristic. Strata are the outcome (reward 1 = success, else failure); inside a stratum runs are
sorted by n_tool_calls and cut into quartiles, the quota is spread evenly over the quartiles
(remainder to the longest), and a short quartile is topped up from the stratum's other runs.
This calls quality/sample.py's ``draw`` itself, so the design cannot drift from round 1.

Usage: python3 quality/sources/tau2_telecom_sample.py --corpus /work/corpus-extra \
           --source tau2_telecom --seed 2041 > quality/sample_tau2_telecom.txt
       python3 quality/sources/tau2_telecom_sample.py --corpus /work/corpus-extra \
           --source tau2_telecom_solo --seed 2042 > quality/sample_tau2_telecom_solo.txt
"""

import argparse
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from sample import draw


def main() -> None:
    """Print the sample's run ids, one a line."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/corpus-extra")
    ap.add_argument("--source", required=True, choices=("tau2_telecom", "tau2_telecom_solo"))
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--fail", type=int, default=16)
    ap.add_argument("--ok", type=int, default=8)
    a = ap.parse_args()
    strata = defaultdict(list)
    with open(os.path.join(a.corpus, "runs.jsonl"), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["source"] == a.source:
                strata[(r["source"], r["outcome"].get("success"))].append(r)
    quota = {(a.source, False): a.fail, (a.source, True): a.ok}
    for rid in draw(strata, quota, a.seed, top_up=True):
        print(rid)


if __name__ == "__main__":
    main()
