"""Golden outputs of the detector on the whole development corpus, and the check against them.

Replays every run of the development corpus (``/work/shared/corpus``, ``/work/corpus-extra``:
see :mod:`benchmarks.quality` for how runs are loaded) through the product's offline replay and
writes, per run, every signal the detector emitted (dimension, rule, level, step or model turn
index, streak, threshold, category, cycle class, explanation, unit and evidence hashes) and
every escalation. Five passes per run (``PASSES``):

- ``quality``: ``quality/cycleguard.yaml`` with the human silent (``hitl="timeout"``), what
  ``benchmarks/quality.py`` replays;
- ``continue``: the built-in defaults with the human always answering continue, so that every
  run is detected on to its end (no termination cuts it short) and resets are exercised;
- ``subagent`` (the lowest thresholds), ``budget`` (the ``tool_calling`` budget preset) and
  ``custom_masks`` (a custom mask pattern: the other masking path), each answered continue.

The golden file was recorded with the pure-Python detector (main at 51726ef), before any of
the detection core was compiled; the compiled core (rust/cycleguard-core) reproduced it when
the port (issue 18) replaced that detector. It is re-recorded only for a deliberate rule
change, after comparing the two recordings signal by signal and naming the difference in the
commit. Since the port, on 2026-12-03: ``replay_cycle``'s answer memory (50 WARNs in 10 runs
no longer fire, nothing added, every escalation the same; this recording also took in the 300
``autocoderover`` runs added after the last one: 2,587 runs), then ``exec`` as a progress-aware
tool (only ``category_streak`` signals change, in 47 runs), then errors compared without the
lines that quote the call's input (10 SWE-agent Java runs; see docs/quality.md); and on
2026-12-03 (third session) the masks of hex ids after an underscore (``req_9f1c2a7b3e4d``) and of
each part of a compound duration (``1m11s``, ``2h05m``) and hours (``3h``): no signal set of any
run or pass changes, only the evidence hashes of results that hold such ids (32 signals in 17
runs); then long tokens of letters and digits masked before the patterns (cloud request ids,
base64): one ``text_loop`` WARN added, in every pass of ``intercode_ctf/task060`` (an agent
decoding base64 layers in turn, whose turns now read the same), otherwise evidence hashes only
(6 runs). On 2026-12-03 (fourth session) the 480 ``balrog_textworld``, the 461
``webvoyager30`` and the 536 ``mint_alfworld`` runs were added with no rule change (4,064
runs; the runs recorded before recorded the same, run for run). In the fifth session,
``recurring_failure`` compares failed calls whitespace aside (``rules::loose_failure``): 42
signals added in 11 failed runs (7 ``balrog_textworld``, 3 SWE-agent Java, 1 ``intercode_ctf``;
in the ``quality`` pass 3 WARNs and no TERM moved; the ``subagent`` pass, with the lowest
thresholds, gains 7 of its TERMs and loses one ``repeated_failure`` TERM), and the rule's
explanation says
"whitespace aside" (185 more runs differ by that text only). In the sixth session the 245
``mcpmark_postgres`` runs were added with no rule change (4,309 runs, 49,252 signals; the runs
recorded before recorded the same, run for run). On 2026-12-07 (fourth session), the new
``nothing_new`` rule (issue 16: calls in a row that each repeat an earlier call of the session
with the answer it got then, a repeat of the call just before left to ``identical_call``; WARN
8, TERM 20): 51,683 signals. Only ``balrog_textworld`` runs change, in every pass; in the
``quality`` pass 49 runs change their escalations (61 ``nothing_new`` TERMs; 8 TERMs of other
rules are no longer reached, because the run ends or ``tool_pattern``'s counts restart
earlier).

Usage::

    .venv/bin/python benchmarks/parity.py --record [--golden PATH]   # write the golden file
    .venv/bin/python benchmarks/parity.py --check  [--golden PATH]   # compare, print mismatches
        [--runs N]            # only the first N runs (in run_id order) of the golden file
        [--run RUN_ID]        # only this run (repeatable)
        [--hibernate]         # every session hibernated after every observation

The golden file is gzip'd JSON lines, one run per line: ``{"run_id", "passes": {name:
{"signals": [...], "escalations": [...]}}}``. ``--check`` exits 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from otel_cycleguard.analyze.replay import Replayer  # noqa: E402
from otel_cycleguard.config import CycleGuardConfig, load_config  # noqa: E402
from otel_cycleguard.spans import SpanData  # noqa: E402
from quality import (  # noqa: E402
    DEFAULT_CONFIG,
    DEFAULT_CORPUS,
    EXTRA_CORPUS,
    corpus_index,
    load_runs,
)

DEFAULT_GOLDEN = os.environ.get(
    "CYCLEGUARD_GOLDEN", os.path.join(ROOT, "quality", "golden", "detector.jsonl.gz")
)


def _signal_record(signal: Any, tool_index: int | None, turn_index: int | None) -> dict:
    return {
        "dimension": signal.dimension.value,
        "rule": signal.rule,
        "level": signal.level.value,
        "step": signal.step,
        "model_turn_index": signal.model_turn_index,
        "tool_call_index": tool_index,
        "turn_index": turn_index,
        "streak": signal.streak,
        "threshold": signal.threshold,
        "profile": signal.profile,
        "tool": signal.tool,
        "category": signal.category,
        "cycle_class": signal.cycle_class.value,
        "explanation": signal.explanation,
        "unit": list(signal.unit),
        "evidence": [[d.tool, d.args_hash, d.result_hash, d.error] for d in signal.evidence],
    }


class _RecordingReplayer(Replayer):
    """The product's replay, keeping the full signals (evidence included) as they are emitted."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.full_signals: list[dict] = []

    def _escalate(self, state, span, signals, sequence, tool_index, turn_index):  # type: ignore[override]
        for signal in signals:
            record = _signal_record(signal, tool_index, turn_index)
            record["session"] = state.report.session
            record["sequence"] = sequence
            self.full_signals.append(record)
        super()._escalate(state, span, signals, sequence, tool_index, turn_index)


# name -> (configuration file, or keyword arguments of CycleGuardConfig; the human's answer)
PASSES: dict[str, tuple[str | dict, str]] = {
    "quality": (DEFAULT_CONFIG, "timeout"),
    "continue": ({}, "continue"),
    # the lowest thresholds, so that more rules fire on more runs
    "subagent": ({"profile": "subagent"}, "continue"),
    # budgets (off by default) on, with the tool-calling preset
    "budget": ({"profiles": {"general": {"budget": {"preset": "tool_calling"}}}}, "continue"),
    # a custom mask pattern: the single-alternation masking path instead of the fast one
    "custom_masks": ({"mask_patterns": (r"req-[a-z]+",)}, "continue"),
}


def _configs() -> dict[str, tuple[CycleGuardConfig, str]]:
    out = {}
    for name, (source, hitl) in PASSES.items():
        config = load_config(source) if isinstance(source, str) else CycleGuardConfig(**source)
        out[name] = (config, hitl)
    return out


def _hibernating(guard: Any) -> None:
    """Make ``guard`` hibernate a session after each of its observations (the state packed
    and unpacked on every step: what a session that sleeps between any two calls sees)."""
    for name in ("observe_tool_call", "observe_model_turn"):
        original = getattr(guard, name)

        def observe(session: str, record: Any, *, _original: Any = original, **kw: Any) -> Any:
            signals = _original(session, record, **kw)
            entry = guard.get(session)
            if entry is not None:
                entry.detector.hibernate()
            return signals

        setattr(guard, name, observe)


def replay_run(
    spans: list[SpanData], config: CycleGuardConfig, hitl: str, *, hibernate: bool = False
) -> dict:
    replayer = _RecordingReplayer(config, hitl=hitl)
    if hibernate:
        _hibernating(replayer.guard)
    for span in spans:
        replayer.add(span)
    reports = replayer.finish()
    escalations = []
    for report in reports:
        for e in report.escalations:
            escalations.append(
                {
                    "session": report.session,
                    "stage": e.stage,
                    "dimension": e.dimension,
                    "tool_call_index": e.tool_call_index,
                    "model_turn_index": e.model_turn_index,
                    "sequence": e.sequence,
                }
            )
    return {"signals": replayer.full_signals, "escalations": escalations}


def replay_all(
    run_ids: Iterable[str], index: dict, *, hibernate: bool = False
) -> Iterable[tuple[str, dict]]:
    configs = _configs()
    for run_id, spans in load_runs(sorted(run_ids), index):
        yield (
            run_id,
            {
                name: replay_run(spans, cfg, hitl, hibernate=hibernate)
                for name, (cfg, hitl) in configs.items()
            },
        )


def _diff(name: str, want: list[dict], got: list[dict], limit: int = 3) -> list[str]:
    out = []
    if len(want) != len(got):
        out.append(f"  {name}: {len(want)} golden, {len(got)} now")
    shown = 0
    for i, (w, g) in enumerate(zip(want, got, strict=False)):
        if w != g:
            keys = sorted(k for k in set(w) | set(g) if w.get(k) != g.get(k))
            out.append(
                f"  {name}[{i}]: " + ", ".join(f"{k}: {w.get(k)!r} -> {g.get(k)!r}" for k in keys)
            )
            shown += 1
            if shown >= limit:
                break
    return out


@dataclass
class CheckResult:
    runs: int = 0
    signals: int = 0
    bad_runs: int = 0
    bad_signals: int = 0
    missing: int = 0
    report: list[str] = field(default_factory=list)


def read_golden(path: str) -> dict[str, dict]:
    golden: dict[str, dict] = {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            golden[record["run_id"]] = record["passes"]
    return golden


def check(
    golden_path: str,
    index: dict,
    *,
    runs: int | None = None,
    only: Iterable[str] | None = None,
    hibernate: bool = False,
) -> CheckResult:
    """Replay the golden file's runs (those the corpus has) and compare, signal for signal."""
    golden = read_golden(golden_path)
    run_ids = sorted(golden)
    if only:
        wanted = set(only)
        run_ids = [r for r in run_ids if r in wanted]
    if runs:
        run_ids = run_ids[:runs]
    out = CheckResult()
    out.missing = sum(1 for r in run_ids if r not in index)
    run_ids = [r for r in run_ids if r in index]
    out.runs = len(run_ids)
    for run_id, passes in replay_all(run_ids, index, hibernate=hibernate):
        lines = []
        for name, want in golden[run_id].items():
            got = passes[name]
            out.signals += len(want["signals"])
            n_bad = sum(1 for w, g in zip(want["signals"], got["signals"], strict=False) if w != g)
            n_bad += abs(len(want["signals"]) - len(got["signals"]))
            out.bad_signals += n_bad
            lines += _diff(f"{name}.signals", want["signals"], got["signals"])
            lines += _diff(f"{name}.escalations", want["escalations"], got["escalations"])
        if lines:
            out.bad_runs += 1
            out.report += [run_id, *lines]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", action="store_true")
    mode.add_argument("--check", action="store_true")
    ap.add_argument("--golden", default=DEFAULT_GOLDEN)
    ap.add_argument("--corpus", action="append")
    ap.add_argument("--runs", type=int, help="only the first N runs")
    ap.add_argument("--run", action="append", help="only this run (repeatable)")
    ap.add_argument("--quiet", action="store_true", help="only the summary")
    ap.add_argument(
        "--hibernate",
        action="store_true",
        help="hibernate every session after every observation (checks that packing and "
        "unpacking a session's state changes no signal)",
    )
    a = ap.parse_args(argv)
    if a.hibernate and a.record:
        ap.error("--hibernate is for --check: the golden file is recorded awake")
    corpora = a.corpus or [DEFAULT_CORPUS, EXTRA_CORPUS]
    index = corpus_index(*corpora)
    started = time.perf_counter()
    if a.record:
        run_ids = sorted(index)
        if a.run:
            run_ids = [r for r in run_ids if r in set(a.run)]
        if a.runs:
            run_ids = run_ids[: a.runs]
        os.makedirs(os.path.dirname(os.path.abspath(a.golden)), exist_ok=True)
        signals = 0
        with gzip.open(a.golden, "wt", encoding="utf-8", compresslevel=9) as f:
            for run_id, passes in replay_all(run_ids, index):
                signals += sum(len(p["signals"]) for p in passes.values())
                f.write(json.dumps({"run_id": run_id, "passes": passes}, sort_keys=True) + "\n")
        print(
            f"recorded {len(run_ids)} runs, {signals} signals, in "
            f"{time.perf_counter() - started:.1f} s -> {a.golden}"
        )
        return 0
    result = check(a.golden, index, runs=a.runs, only=a.run, hibernate=a.hibernate)
    if result.missing:
        print(f"{result.missing} golden runs are not in the corpus (skipped)")
    if not a.quiet and result.report:
        print("\n".join(result.report))
    print(
        f"parity: {result.runs} runs, {result.signals} golden signals; "
        f"{result.bad_runs} runs differ, {result.bad_signals} signals differ "
        f"({time.perf_counter() - started:.1f} s)"
    )
    bad_runs = result.bad_runs
    return 1 if bad_runs else 0


if __name__ == "__main__":
    sys.exit(main())
