"""Deterministic stratified sample of corpus runs for hand-labelling.

Strata: source x outcome (success True / False / None). Within each stratum, runs are
sorted by n_tool_calls and cut into equal-size length bins (quartiles); the stratum's quota
is spread evenly over the bins so long runs (e.g. failing runs with many steps) are
represented in proportion to their share, not left to chance. No loop heuristic is used.

Round 1 (seed 2026, 120 runs) is the development sample. Round 2 (seed 2027, 60 runs) is an
out-of-sample check: the same strata and the same length bins (cut over the whole stratum),
drawn only from runs not in round 1 (the ids in quality/sample.txt are excluded before
drawing). Round 1's output does not depend on round 2.

Round 3 (seed 2028, 40 runs) is a second out-of-sample check, drawn after the round-1/2
labelling rules were fixed: same strata and length bins, excluding every run in
quality/sample.txt and quality/sample2.txt. If a bin has fewer remaining runs than its
share, the shortfall is drawn at random from the stratum's other remaining runs (this only
matters for multiswe_sweagent_java success, which has few runs left).

Round 4 (seed 2030, 40 runs) is a third out-of-sample check, drawn after the labelling rules
were frozen: the same quotas as round 3, the same strata, length bins and top-up, excluding
every run in quality/sample.txt, quality/sample2.txt and quality/sample3.txt.

Round 5 (seed 2031, 40 runs) is a fourth out-of-sample check, drawn after the rules were
frozen at the end of round 4: the same quotas, strata, length bins and top-up, excluding every
run of rounds 1-4.

Round 6 (seed 2032) is a fifth out-of-sample check, drawn after the round-5 fix to
``same_error``: the same quotas, strata, length bins and top-up, excluding every run of
rounds 1-5.

Round 7 (seed 2033) is a sixth out-of-sample check, drawn with round 6's rules unchanged:
the same quotas, strata, length bins and top-up, excluding every run of rounds 1-6.

Round 8 (seed 2034, 36 runs) is drawn where loops concentrate, to look for rule flaws: failing
and unknown-outcome SWE-agent runs, failing tau-bench and mini-swe-agent runs (same length bins
and top-up), excluding every run of rounds 1-7. Its rates are not comparable with the
stratified rounds'.

Round 9 (seed 2035, 36 runs) repeats round 8's design (where loops concentrate) with rounds 1-8
excluded, after round 8 changed nothing.

Round 10 (seed 2036) is stratified again (round 3's quotas), rounds 1-9 excluded, drawn after
the last rule change and scored with no change after it.

Usage: python quality/sample.py [--corpus DIR] > quality/sample.txt
       python quality/sample.py --round 2 > quality/sample2.txt
       python quality/sample.py --round 3 > quality/sample3.txt
       python quality/sample.py --round 4 > quality/sample4.txt
       python quality/sample.py --round 5 > quality/sample5.txt
       python quality/sample.py --round 6 > quality/sample6.txt
       python quality/sample.py --round 7 > quality/sample7.txt
       python quality/sample.py --round 8 > quality/sample8.txt
       python quality/sample.py --round 9 > quality/sample9.txt
       python quality/sample.py --round 10 > quality/sample10.txt
"""

import argparse
import json
import os
import random
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
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
# Round 2: half the size, about the same shares per source and outcome as round 1.
SEED2 = 2027
QUOTA2 = {
    ("multiswe_sweagent_java", True): 5,
    ("multiswe_sweagent_java", False): 14,
    ("multiswe_sweagent_java", None): 5,
    ("mini_swe_gemini3", True): 7,
    ("mini_swe_gemini3", False): 9,
    ("taubench", True): 5,
    ("taubench", False): 7,
    ("react_hotpotqa", True): 3,
    ("react_hotpotqa", False): 5,
}
# Round 3: about two thirds of round 2, same shares per source and outcome.
SEED3 = 2028
QUOTA3 = {
    ("multiswe_sweagent_java", True): 3,
    ("multiswe_sweagent_java", False): 10,
    ("multiswe_sweagent_java", None): 3,
    ("mini_swe_gemini3", True): 6,
    ("mini_swe_gemini3", False): 6,
    ("taubench", True): 3,
    ("taubench", False): 4,
    ("react_hotpotqa", True): 2,
    ("react_hotpotqa", False): 3,
}
# Round 4: the same quotas as round 3.
SEED4 = 2030
QUOTA4 = dict(QUOTA3)
# Round 5: the same quotas as round 3.
SEED5 = 2031
QUOTA5 = dict(QUOTA3)
# Round 6: the same quotas as round 3.
SEED6 = 2032
QUOTA6 = dict(QUOTA3)
# Round 7: the same quotas as round 3.
SEED7 = 2033
QUOTA7 = dict(QUOTA3)
# Round 8: where loops concentrate (flaw-finding, not a stratified estimate).
SEED8 = 2034
QUOTA8 = {
    ("multiswe_sweagent_java", False): 20,
    ("multiswe_sweagent_java", None): 6,
    ("mini_swe_gemini3", False): 4,
    ("taubench", False): 6,
}
N_BINS = 4


def draw(strata, quota, seed, exclude=frozenset(), top_up=False):
    rng = random.Random(seed)
    chosen = []
    for key in sorted(quota, key=str):
        runs = sorted(strata[key], key=lambda r: (r["n_tool_calls"], r["run_id"]))
        q = quota[key]
        n = len(runs)
        bins = [runs[i * n // N_BINS : (i + 1) * n // N_BINS] for i in range(N_BINS)]
        # spread quota evenly across bins, remainder to the longest bins
        per = [q // N_BINS] * N_BINS
        for i in range(q % N_BINS):
            per[N_BINS - 1 - i] += 1
        got = []
        for b, k in zip(bins, per, strict=True):
            b = [r for r in b if r["run_id"] not in exclude]
            got.extend(r["run_id"] for r in rng.sample(b, min(k, len(b))))
        if top_up and len(got) < q:
            rest = [
                r["run_id"] for r in runs if r["run_id"] not in exclude and r["run_id"] not in got
            ]
            got.extend(rng.sample(rest, min(q - len(got), len(rest))))
        chosen.extend(got)
    return chosen


# Every round after the first: (seed, quotas, top_up). Each draws from the runs no earlier
# round drew; round 1 is compared as a set (its file predates the ordering), the others in order.
ROUNDS = {
    2: (SEED2, QUOTA2, False),
    3: (SEED3, QUOTA3, True),
    4: (SEED4, QUOTA4, True),
    5: (SEED5, QUOTA5, True),
    6: (SEED6, QUOTA6, True),
    7: (SEED7, QUOTA7, True),
    8: (SEED8, QUOTA8, True),
    9: (2035, QUOTA8, True),
    10: (2036, QUOTA3, True),
}


def _committed(name):
    with open(os.path.join(HERE, name)) as f:
        return [line.strip() for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/shared/corpus")
    ap.add_argument("--round", type=int, default=1, choices=(1, *ROUNDS))
    a = ap.parse_args()
    strata = defaultdict(list)
    with open(os.path.join(a.corpus, "runs.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            strata[(r["source"], r["outcome"].get("success"))].append(r)
    chosen = draw(strata, QUOTA, SEED)
    earlier = frozenset()
    for number in range(2, a.round + 1):
        # the previous round must be the committed one: every later draw depends on it
        previous = "sample.txt" if number == 2 else f"sample{number - 1}.txt"
        if number == 2:
            assert set(chosen) == set(_committed(previous)), f"{previous} differs from its round"
        else:
            assert chosen == _committed(previous), f"{previous} differs from its round"
        earlier |= frozenset(chosen)
        seed, quota, top_up = ROUNDS[number]
        chosen = draw(strata, quota, seed, exclude=earlier, top_up=top_up)
    for rid in chosen:
        print(rid)


if __name__ == "__main__":
    main()
