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
import json
import os
import re
import shlex
import sys
import time
import zlib
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


# detector configurations for the session check: the built-in profiles, budgets on, custom masks
# and result fields, extra categories, dimensions switched off
SESSION_CONFIGS: dict[str, dict] = {
    "defaults": {},
    "coding": {"profile": "coding"},
    "subagent": {"profile": "subagent"},
    "budget": {
        "profiles": {
            "general": {
                "budget": {
                    "enabled": True,
                    "max_tool_calls": 40,
                    "max_model_turns": 30,
                    "max_tokens": 20_000,
                    "max_wall_seconds": 120.0,
                    "max_idle_seconds": 1.5,
                    "call_seconds": {"bash": 0.5, "exploration": 2.0},
                }
            }
        }
    },
    "custom": {
        "mask_patterns": (r"req-[a-z]+",),
        "result_fields": RESULT_FIELDS,
        "extra_categories": {"click": "exploration", "get_details_by_id": "action"},
        "read_only_tools": ("GET",),
        "poll_tools": ("check_network_status",),
        "disabled_dimensions": ("category_streak",),
        "evidence_size": 3,
    },
}


def _signal(s) -> dict:
    return {
        "dimension": s.dimension.value,
        "level": s.level.value,
        "session": s.session,
        "streak": s.streak,
        "threshold": s.threshold,
        "profile": s.profile,
        "tool": s.tool,
        "category": s.category,
        "step": s.step,
        "model_turn_index": s.model_turn_index,
        "cycle_class": s.cycle_class.value,
        "break_strategy": s.break_strategy.value,
        "explanation": s.explanation,
        "evidence": [(d.tool, d.args_hash, d.result_hash, d.error) for d in s.evidence],
        "unit": list(s.unit),
        "agent": s.agent,
        "rule": s.rule,
    }


def check_sessions(records) -> Report:
    """Every run's records through a Python session and a compiled one, signal for signal and
    counter for counter after each record; a reset of each dimension that TERMs (as the
    escalation's self-heal does), and state fingerprints derived from the results."""
    from otel_cycleguard.config import CycleGuardConfig
    from otel_cycleguard.detect import Detector, Dimension, ModelTurn, ToolCall
    from otel_cycleguard.detect.compiled import CompiledDetector

    report = Report("sessions (stage 3)")
    report.labels["signals"] = "signals fired"
    runs: dict[str, list] = {}
    for run_id, kind, record in records:
        runs.setdefault(run_id, []).append((kind, record))
    for config_name, options in SESSION_CONFIGS.items():
        config = CycleGuardConfig(**options)
        py_det, rs_det = Detector(config), CompiledDetector(config)
        for run_id, items in runs.items():
            py = py_det.session(run_id, agent="agent")
            rs = rs_det.session(run_id, agent="agent")
            for n, (kind, record) in enumerate(items):
                if config_name == "custom" and n % 3 == 0:  # state fingerprints that recur
                    seed = str(getattr(record, "result", None) or getattr(record, "text", ""))
                    fields = {f: getattr(record, f) for f in record.__slots__}
                    fields["state_fingerprint"] = f"s{zlib.crc32(seed.encode()) % 5}"
                    record = ToolCall(**fields) if kind == "call" else ModelTurn(**fields)
                observe = "observe_tool_call" if kind == "call" else "observe_model_turn"
                want = [_signal(s) for s in getattr(py, observe)(record)]
                got = [_signal(s) for s in getattr(rs, observe)(record)]
                where = f"{config_name} {run_id} #{n}"
                report.check("signals", want, got, where)
                report.rust["signals"] += len(got)
                report.check("counters", py.counters(), rs.counters(), where)
                for s in want:
                    if s["level"] == "term":  # the escalation's self-heal
                        py.reset(Dimension(s["dimension"]))
                        rs.reset(Dimension(s["dimension"]))
    return report


def check_state(records) -> Report:
    """Every run of the corpus: half its records through both sessions, their saved states
    compared (as JSON, what the service writes); then the Python state loaded into a fresh
    compiled session and the compiled state into a fresh Python one, the rest of the run fed
    to both, signal for signal, and the final states compared."""
    from otel_cycleguard.config import CycleGuardConfig
    from otel_cycleguard.detect import Detector
    from otel_cycleguard.detect.compiled import CompiledDetector

    def feed(session, kind, record):
        observe = session.observe_tool_call if kind == "call" else session.observe_model_turn
        return [_signal(s) for s in observe(record)]

    def saved(session) -> dict:
        return json.loads(json.dumps(session.to_state()))

    report = Report("state (stage 4)")
    runs: dict[str, list] = {}
    for run_id, kind, record in records:
        runs.setdefault(run_id, []).append((kind, record))
    for config_name in ("defaults", "budget", "custom"):
        config = CycleGuardConfig(**SESSION_CONFIGS[config_name])
        py_det, rs_det = Detector(config), CompiledDetector(config)
        for run_id, items in runs.items():
            half = len(items) // 2
            py, rs = py_det.session(run_id), rs_det.session(run_id)
            for kind, record in items[:half]:
                feed(py, kind, record)
                feed(rs, kind, record)
            where = f"{config_name} {run_id}"
            state = saved(py)
            report.check("to_state", state, saved(rs), where)
            py2, rs2 = py_det.session(run_id), rs_det.session(run_id)
            rs2.restore_state(state)
            py2.restore_state(saved(rs))
            for n, (kind, record) in enumerate(items[half:]):
                report.check(
                    "signals after restore",
                    feed(py2, kind, record),
                    feed(rs2, kind, record),
                    f"{where} #{half + n}",
                )
            report.check("to_state", saved(py2), saved(rs2), where)
    return report


STAGES = {
    "normalize": check_normalize,
    "categories": check_categories,
    "sessions": check_sessions,
    "state": check_state,
}


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
