"""Differential checks of the compiled detection core against the Python code that stays its
reference, over every tool call of the development corpus (``benchmarks/corpus_records.py``
collects them): the normalisation (``detect/normalize.py``: canonical JSON, the Python masker
for non-ASCII text and custom patterns)::

    python benchmarks/differential.py normalize

During the port (issue 18) the same script compared the Rust categories, sessions and saved
states with the Python detector, until that detector was removed (see the branch history for
those stages and their figures); ``benchmarks/parity.py --check`` holds the core to the golden
outputs that detector recorded.

Besides the corpus's records as they arrive (JSON strings), every call is also fed with its
arguments and result parsed into Python objects (the dict path of ``canonical_json``), and
under several configurations (default masks, a custom mask pattern, ``result_fields``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

import orjson  # noqa: E402
from corpus_records import load  # noqa: E402

from otel_cycleguard import _core  # noqa: E402
from otel_cycleguard.detect.normalize import Normalizer, canonical_json  # noqa: E402

# result_fields for tools of the corpus whose results are JSON objects (and one whose are not)
RESULT_FIELDS = {
    "get_details_by_id": ("user_id", "name", "status", "email"),
    "get_reservation_details": ("reservation_id", "status", "flights"),
    "search_direct_flight": ("flight_number",),
    "get_customer_by_phone": ("customer_id", "name", "name"),
    "bash": ("exit_code", "output"),
    "Get_Data_Usage": ("data_used_gb", "data_limit_gb"),
}

NORMALIZERS: dict[str, Callable[[], Normalizer]] = {
    "defaults": lambda: Normalizer(),
    "custom_masks": lambda: Normalizer((r"req-[a-z]+",)),
    "result_fields": lambda: Normalizer(result_fields=RESULT_FIELDS),
    "small_mask_window": lambda: Normalizer(max_mask_chars=100),
}


class Counting:
    """A Python normalizer that counts what the Rust one asks of it (its fallbacks)."""

    def __init__(self, inner: Normalizer, counts: Counter[str]) -> None:
        self.inner, self.counts = inner, counts

    def __getattr__(self, name: str):
        method = getattr(self.inner, name)

        def counted(*args):
            self.counts[name] += 1
            return method(*args)

        return counted


def rust_normalizer(py: Normalizer, fallbacks: Counter[str] | None = None) -> _core.Normalizer:
    """The Rust normalizer of the same configuration, falling back on ``py``."""
    return _core.Normalizer(
        py.fast_masks,
        dict(py._result_fields),  # lower-cased tool names already
        py._max_mask_chars,
        py if fallbacks is None else Counting(py, fallbacks),
    )


def _parsed(value: object) -> object | None:
    """``value`` parsed into Python objects, if it is a JSON text."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return None


class Report:
    def __init__(self, name: str) -> None:
        self.name = name
        self.compared: Counter[str] = Counter()
        self.rust: Counter[str] = Counter()  # answered by the core without Python
        self.fallbacks: Counter[str] = Counter()  # what the core asked of Python
        self.labels: dict[str, str] = {}  # what a ``rust`` count counts, when not that
        self.bad: list[str] = []

    def check(self, what: str, want: object, got: object, context: str) -> None:
        self.compared[what] += 1
        if want != got:
            if len(self.bad) < 20:
                self.bad.append(f"{what} {context}: python {want!r:.200} != rust {got!r:.200}")
            else:
                self.bad.append("")

    def print(self) -> None:
        total = sum(self.compared.values())
        print(f"{self.name}: {total:,} comparisons, {len(self.bad)} differ")
        for what, n in sorted(self.compared.items()):
            label = self.labels.get(what, "answered in Rust")
            extra = f", {self.rust[what]:,} {label}" if what in self.rust else ""
            print(f"  {what}: {n:,}{extra}")
        if self.fallbacks:
            print(
                "  the core asked Python: "
                + ", ".join(f"{n:,} {what}" for what, n in sorted(self.fallbacks.items()))
            )
        for line in self.bad:
            if line:
                print("  " + line)


def calls(records) -> Iterable[tuple[str, object]]:
    for run_id, kind, record in records:
        if kind == "call":
            yield run_id, record


def check_normalize(records) -> Report:
    report = Report("normalize (stage 1)")
    tool_calls = list(calls(records))
    # canonical JSON of every argument and result, as they arrive and parsed
    for run_id, call in tool_calls:
        for name, value in (("arguments", call.arguments), ("result", call.result)):
            for variant in (value, _parsed(value)):
                if variant is None and value is not None:
                    continue
                rust = _core.canonical_json(variant)
                if rust is not None:
                    report.rust["canonical_json"] += 1
                    report.check(
                        "canonical_json", canonical_json(variant), rust, f"{run_id} {name}"
                    )
                else:
                    report.compared["canonical_json"] += 1
    for config, make in NORMALIZERS.items():
        py = make()
        counts: Counter[str] = Counter()
        rs = rust_normalizer(py, counts)
        for run_id, call in tool_calls:
            where = f"{run_id} {config} {call.tool}"
            for args in (call.arguments, _parsed(call.arguments)):
                if args is None and call.arguments is not None:
                    continue
                report.check(
                    "call_key", py.call_key(call.tool, args), rs.call_key(call.tool, args), where
                )
            for result in (call.result, _parsed(call.result)):
                if result is None and call.result is not None:
                    continue
                text = py.result_text(call.tool, result)
                report.check("result_text", text, rs.result_text(call.tool, result), where)
                report.check("text_hash", py.text_hash(text), rs.text_hash(text), where)
                report.check(
                    "result_hash",
                    py.result_hash(call.tool, result),
                    rs.result_hash(call.tool, result),
                    where,
                )
        for what, n in counts.items():
            report.fallbacks[f"{config}.{what}"] += n
    return report


STAGES = {"normalize": check_normalize}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stage", choices=[*STAGES, "all"])
    a = ap.parse_args(argv)
    started = time.perf_counter()
    records = load()
    print(
        f"{sum(1 for r in records if r[1] == 'call'):,} tool calls, "
        f"{sum(1 for r in records if r[1] == 'turn'):,} model turns, "
        f"{len({r[0] for r in records}):,} runs"
    )
    failed = False
    for name, check in STAGES.items():
        if a.stage in (name, "all"):
            report = check(records)
            report.print()
            failed |= bool(report.bad)
    print(f"({time.perf_counter() - started:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
