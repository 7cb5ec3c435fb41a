"""Every tool call and model turn the detector sees on the development corpus, for the
differential checks of the compiled core (``benchmarks/differential.py``).

Replays every run of the corpus (``benchmarks/quality.py``'s loading: ``/work/shared/corpus``
and ``/work/corpus-extra``) through the product's offline replay with the built-in defaults and
records, in order, what reached ``SessionDetector.observe_tool_call`` and
``observe_model_turn``: the records as the pipeline built them (arguments and results as they
arrived: JSON strings, dicts, plain text). Cached as a pickle (never committed) so the checks
do not re-read the spans each time::

    python benchmarks/corpus_records.py [--out PATH]
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from otel_cycleguard.analyze.replay import Replayer  # noqa: E402
from otel_cycleguard.config import CycleGuardConfig  # noqa: E402
from otel_cycleguard.detect import session as _session  # noqa: E402
from quality import DEFAULT_CORPUS, EXTRA_CORPUS, corpus_index, load_runs  # noqa: E402

DEFAULT_OUT = os.environ.get(
    "CYCLEGUARD_CORPUS_RECORDS", os.path.join(os.path.dirname(ROOT), "rustcore-data", "records.pkl")
)


def collect(corpora: list[str]) -> list[tuple[str, str, object]]:
    """[(run_id, "call" | "turn", record)] in the order the detector saw them."""
    out: list[tuple[str, str, object]] = []
    cls = _session.SessionDetector
    original_call, original_turn = cls.observe_tool_call, cls.observe_model_turn
    current = [""]

    def on_call(self, call):
        out.append((current[0], "call", call))
        return original_call(self, call)

    def on_turn(self, turn):
        out.append((current[0], "turn", turn))
        return original_turn(self, turn)

    cls.observe_tool_call, cls.observe_model_turn = on_call, on_turn
    try:
        index = corpus_index(*corpora)
        config = CycleGuardConfig()
        for run_id, spans in load_runs(sorted(index), index):
            current[0] = run_id
            replayer = Replayer(config, hitl="continue")
            for span in spans:
                replayer.add(span)
            replayer.finish()
    finally:
        cls.observe_tool_call, cls.observe_model_turn = original_call, original_turn
    return out


def load(path: str = DEFAULT_OUT) -> list[tuple[str, str, object]]:
    """The cached records, collected first when the cache is missing."""
    if not os.path.exists(path):
        records = collect([DEFAULT_CORPUS, EXTRA_CORPUS])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            pickle.dump(records, f, protocol=pickle.HIGHEST_PROTOCOL)
        return records
    with open(path, "rb") as f:
        return pickle.load(f)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    a = ap.parse_args(argv)
    started = time.perf_counter()
    if os.path.exists(a.out):
        os.unlink(a.out)
    records = load(a.out)
    calls = sum(1 for r in records if r[1] == "call")
    print(
        f"{calls} tool calls, {len(records) - calls} model turns, "
        f"{len({r[0] for r in records})} runs in {time.perf_counter() - started:.1f} s -> {a.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
