"""Merge per-source index files into one runs.jsonl (the shared corpus layout).

Usage: python3 quality/sources/index.py DIR
Concatenates every DIR/<source>.runs.jsonl (sorted by file name) into DIR/runs.jsonl, so
quality/show_run.py --corpus DIR and cycleguard read the extra sources like the shared corpus.
"""

import glob
import os
import sys


def main() -> None:
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "/work/corpus-extra"
    parts = sorted(glob.glob(os.path.join(out_dir, "*.runs.jsonl")))
    n = 0
    with open(os.path.join(out_dir, "runs.jsonl"), "w", encoding="utf-8") as out:
        for p in parts:
            with open(p, encoding="utf-8") as f:
                for line in f:
                    if line.strip():
                        out.write(line if line.endswith("\n") else line + "\n")
                        n += 1
    print(f"{n} runs from {len(parts)} sources -> {os.path.join(out_dir, 'runs.jsonl')}")


if __name__ == "__main__":
    main()
