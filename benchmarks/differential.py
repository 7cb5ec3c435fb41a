"""Differential checks of the compiled detection core against the Python reference, over
every tool call of the development corpus (``benchmarks/corpus_records.py`` collects them).

Each stage of the port (issue 18) feeds the same inputs to the Python implementation and to
the Rust one and compares the outputs exactly; any difference is printed and fails the run::

    python benchmarks/differential.py normalize     # stage 1: canonical JSON, hashes, result text
    python benchmarks/differential.py categories    # stage 2: classify, shell command readings
    python benchmarks/differential.py all

Besides the corpus's records as they arrive (JSON strings), every call is also fed with its
arguments and result parsed into Python objects (the dict path of ``canonical_json``), and
under several configurations (default masks, a custom mask pattern, ``result_fields``).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
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
from otel_cycleguard.detect import categories  # noqa: E402
from otel_cycleguard.detect.categories import Categorizer  # noqa: E402
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
            extra = f", {self.rust[what]:,} answered in Rust" if what in self.rust else ""
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


CATEGORIZERS = {
    "defaults": ({}, (), ()),
    "configured": (
        {
            "click": "exploration",
            "Search": "action",
            "get_details_by_id": "action",
            "FINISH": "exploration",
        },
        ("GET", "calculate", "python"),
        ("check_network_status", "bash", "think"),
    ),
}


def _kind(kind) -> tuple:
    return (kind.canonical, kind.category, kind.override_key, kind.is_poll, kind.known)


def _shlex(stage: str) -> list[str] | None:
    try:
        return shlex.split(stage)
    except ValueError:
        return None


def check_categories(records) -> Report:
    report = Report("categories (stage 2)")
    tool_calls = list(calls(records))
    for config, (extra, read_only, poll) in CATEGORIZERS.items():
        py = Categorizer(extra, read_only, poll)
        rs = _core.Categorizer(
            {k.lower(): v for k, v in extra.items()},
            {t.lower() for t in read_only},
            {t.lower() for t in poll},
        )
        for run_id, call in tool_calls:
            for args in (call.arguments, _parsed(call.arguments)):
                if args is None and call.arguments is not None:
                    continue
                for flag in (call.read_only, True):
                    report.check(
                        "classify",
                        _kind(py.classify(call.tool, args, flag)),
                        rs.classify(call.tool, args, flag),
                        f"{run_id} {config} {call.tool} {args!r:.80}",
                    )
    for run_id, call in tool_calls:
        for args in (call.arguments, _parsed(call.arguments)):
            if args is None and call.arguments is not None:
                continue
            where = f"{run_id} {call.tool} {args!r:.120}"
            report.check(
                "edits_files", categories.edits_files(args), _core.edits_files(args), where
            )
            report.check(
                "changes_environment",
                categories.changes_environment(args),
                _core.changes_environment(args),
                where,
            )
            text = categories.command_text(args)
            report.check("command_text", text, _core.command_text(args), where)
            report.check(
                "readonly_command",
                categories._is_readonly_command(args),
                _core.readonly_command(args),
                where,
            )
            if text:
                report.check(
                    "command_words",
                    categories.command_words(text),
                    _core.command_words(text),
                    where,
                )
                for item in re.split(r"\|\|?|&&|;|\n", text):
                    report.check(
                        "command_words",
                        categories.command_words(item),
                        _core.command_words(item),
                        where,
                    )
                for stage in text.split("|"):
                    report.check("shlex_split", _shlex(stage), _core.shlex_split(stage), where)
    return report


STAGES = {"normalize": check_normalize, "categories": check_categories}


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
