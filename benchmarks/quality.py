"""Detection quality on hand-labelled real agent runs: cycleguard vs two reference rule sets.

Replays every run labelled in ``quality/labels.jsonl`` (see ``quality/RUBRIC.md``) from the
development corpus through the product's own offline replay (:class:`Replayer`, the same guard,
escalation ladder and configuration a user runs: ``quality/cycleguard.yaml``), with the human
silent (``--hitl timeout``: the second TERM in a dimension terminates the run). In the same
run, the same tool calls go through two reference rule sets implemented from their public
descriptions:

- ``naive-5``: 5 identical calls (same tool, same arguments) in a row;
- ``openhands``: the OpenHands stuck-detector rules: 4 identical action-observation pairs in a
  row, 3 identical actions in a row whose observations are errors, and an A-B alternation of
  action-observation pairs over 6 steps.

The references walk the same ladder as the product (first detection: the agent is told and the
rule's history is cleared; the second detection of the same rule terminates), so that "would
have been terminated" means the same thing for all three. (OpenHands itself stops at the first
detection; its column "successful runs with a TERM" is what OpenHands would have stopped.)

Metrics per rule set:

- terminal loop runs caught: a TERM at a tool-call index inside the run's terminal episode
  (the span [first_step, last_step] of its non-escaped episodes);
- episodes caught: a TERM inside the episode;
- median delay: first TERM inside the terminal episode minus its first_step, in steps and in
  repetitions (steps / length of the episode's unit);
- loop-free runs (has_loop false) with any TERM; successful runs (outcome_success true) with
  any TERM; successful runs that would have been terminated;
- successful runs whose result the termination would lose: see :func:`termination_keeps_result`.
  Termination saves progress (docs/detection.md, "Saved progress"), so a run stopped after its work was done keeps its
  result when the result is the work itself.

A TERM fired on a model turn (``text_loop``) is placed at the next tool call's index, as the
rubric places text episodes.

Usage::

    .venv/bin/python benchmarks/quality.py [--labels quality/labels.jsonl]
        [--config quality/cycleguard.yaml] [--corpus ../shared/corpus]
        [--all]              # also replay all corpus runs (false alarms on successful runs)
        [--details]          # one line per labelled loop run and per false alarm
        [--markdown]         # the table as Markdown (for docs/quality.md)
        [--round N]          # only labelling round N (1 to 10, first-contact; repeatable)
        [--source S]         # only the labels (and, with --all, the runs) of source S
        [--by-source]        # one cycleguard row per source
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from otel_cycleguard import conventions  # noqa: E402
from otel_cycleguard.analyze.formats import document_spans  # noqa: E402
from otel_cycleguard.analyze.replay import Replayer  # noqa: E402
from otel_cycleguard.config import CycleGuardConfig, load_config  # noqa: E402
from otel_cycleguard.conventions import SpanRole  # noqa: E402
from otel_cycleguard.detect.categories import ACTION, Categorizer, edits_files  # noqa: E402
from otel_cycleguard.detect.normalize import canonical_json  # noqa: E402
from otel_cycleguard.spans import SpanData  # noqa: E402
from otel_cycleguard.wire._json import loads  # noqa: E402

# ``../shared/corpus`` beside the repository (where the issue puts it), else this workplace's.
DEFAULT_CORPUS = next(
    (
        path
        for path in (os.path.join(os.path.dirname(ROOT), "shared", "corpus"), "/work/shared/corpus")
        if os.path.isdir(path)
    ),
    "/work/shared/corpus",
)
DEFAULT_LABELS = os.path.join(ROOT, "quality", "labels.jsonl")
# Labels of the sources added after the first four (quality/sources/README.md): their data is
# rebuilt from fetch recipes into EXTRA_CORPUS, never committed.
DEFAULT_LABEL_FILES = (DEFAULT_LABELS, os.path.join(ROOT, "quality", "labels_sources.jsonl"))
EXTRA_CORPUS = os.environ.get("CYCLEGUARD_EXTRA_CORPUS", "/work/corpus-extra")
# Each added source's first contact: scored once, blind, with the rules of its day, before any
# rule changed for it. Recorded, never recomputed: the figure that counts for a new source.
FIRST_CONTACT = os.path.join(ROOT, "quality", "first_contact.jsonl")
DEFAULT_CONFIG = os.path.join(ROOT, "quality", "cycleguard.yaml")
RUBRIC_LINK = "quality/RUBRIC.md"


# -- corpus -------------------------------------------------------------------------------


def corpus_index(*corpora: str) -> dict[str, dict[str, Any]]:
    """run_id -> its runs.jsonl record, plus ``_line`` (its line in the source's .gz file) and
    ``_corpus`` (the folder it is in), over every corpus folder given (a missing one is
    skipped: the extra sources are rebuilt from their recipes, never committed)."""
    index: dict[str, dict[str, Any]] = {}
    for corpus in corpora:
        path = os.path.join(corpus, "runs.jsonl")
        if not os.path.exists(path):
            continue
        per_source: dict[str, int] = defaultdict(int)
        with open(path, encoding="utf-8") as f:
            for line in f:
                record = json.loads(line)
                record["_line"] = per_source[record["source"]]
                record["_corpus"] = corpus
                per_source[record["source"]] += 1
                index[record["run_id"]] = record
    return index


def load_runs(
    run_ids: Iterable[str], index: dict[str, dict[str, Any]], corpus: str | None = None
) -> Iterator[tuple[str, list[SpanData]]]:
    """(run_id, spans) for the wanted runs, reading each source file once (from the corpus
    folder the index names, else ``corpus``)."""
    wanted: dict[tuple[str, str], dict[int, str]] = defaultdict(dict)
    for run_id in run_ids:
        record = index[run_id]
        folder = record.get("_corpus") or corpus
        wanted[(folder, record["source"])][record["_line"]] = run_id
    for folder, source in sorted(wanted):
        lines = wanted[(folder, source)]
        last = max(lines)
        with gzip.open(os.path.join(folder, f"{source}.otlp.jsonl.gz"), "rb") as f:
            for number, raw in enumerate(f):
                if number > last:
                    break
                run_id = lines.get(number)
                if run_id is None:
                    continue
                doc = document_spans(loads(raw), lambda _msg: None)
                assert doc is not None, run_id
                yield run_id, list(doc.spans)


# -- the product ----------------------------------------------------------------------------


@dataclass
class Outcome:
    """One rule set on one run: TERM positions (tool-call indices) and the termination."""

    terms: list[int] = field(default_factory=list)
    dimensions: list[str] = field(default_factory=list)
    terminated_at: int | None = None
    terminated_by: str | None = None


def replay_cycleguard(spans: list[SpanData], config: CycleGuardConfig) -> Outcome:
    replayer = Replayer(config, hitl="timeout", keep_steps=True)
    for span in spans:
        replayer.add(span)
    reports = replayer.finish()
    out = Outcome()
    for report in reports:
        # position of every step among tool calls: model turns map to the next tool call
        next_tool: list[int] = []
        count = 0
        for step in report.steps:
            next_tool.append(count)
            if step.tool is not None:
                count += 1
        last_tool = max(0, count - 1)

        def where(
            tool_index: int | None, sequence: int, next_tool=next_tool, last_tool=last_tool
        ) -> int:
            if tool_index is not None:
                return tool_index
            return min(next_tool[sequence], last_tool) if sequence < len(next_tool) else last_tool

        for signal in report.signals:
            if signal.level == "term":
                out.terms.append(where(signal.tool_call_index, signal.sequence))
                out.dimensions.append(
                    signal.dimension
                    if signal.rule in ("", signal.dimension)
                    else f"{signal.dimension}/{signal.rule}"
                )
        if report.terminated_at is not None:
            t = report.terminated_at
            out.terminated_at = where(t.tool_call_index, t.sequence)
            out.terminated_by = t.dimension
    return out


# -- reference rule sets ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    tool: str
    args: bytes
    result: str
    error: bool


def tool_calls(spans: list[SpanData]) -> list[Call]:
    calls = []
    for span in sorted(spans, key=lambda s: s.start_ns):
        if conventions.classify(span.name, span.attributes) != SpanRole.TOOL:
            continue
        call = conventions.tool_call_from(
            span.name,
            span.attributes,
            status_error=span.status_error,
            event_names=[e.name for e in span.events],
        )
        result = call.result if isinstance(call.result, str) else canonical_json(call.result)
        if isinstance(result, bytes):
            result = result.decode("utf-8", "replace")
        calls.append(Call(call.tool, canonical_json(call.arguments), result, call.error))
    return calls


def _ladder(calls: list[Call], rules: dict[str, Any]) -> Outcome:
    """Run detection rules over the calls with the product's ladder: first fire self-heals
    (the rule forgets the calls before it), the second fire of the same rule terminates."""
    out = Outcome()
    since: dict[str, int] = {name: 0 for name in rules}
    fires: dict[str, int] = defaultdict(int)
    for i in range(len(calls)):
        for name, rule in rules.items():
            window = calls[since[name] : i + 1]
            if rule(window):
                out.terms.append(i)
                out.dimensions.append(name)
                fires[name] += 1
                since[name] = i + 1
                if fires[name] == 2:
                    out.terminated_at, out.terminated_by = i, name
                    return out
    return out


def _same_action(a: Call, b: Call) -> bool:
    return a.tool == b.tool and a.args == b.args


def naive_rule(window: list[Call]) -> bool:
    """5 identical calls (tool and arguments) in a row."""
    if len(window) < 5:
        return False
    last = window[-5:]
    return all(_same_action(c, last[0]) for c in last)


def oh_repeat_pairs(window: list[Call]) -> bool:
    """4 identical action-observation pairs in a row."""
    if len(window) < 4:
        return False
    last = window[-4:]
    return all(_same_action(c, last[0]) and c.result == last[0].result for c in last)


def oh_repeat_errors(window: list[Call]) -> bool:
    """3 identical actions in a row, each with an error observation."""
    if len(window) < 3:
        return False
    last = window[-3:]
    return all(_same_action(c, last[0]) and c.error for c in last)


def oh_alternation(window: list[Call]) -> bool:
    """A-B-A-B-A-B over the last 6 action-observation pairs."""
    if len(window) < 6:
        return False
    last = window[-6:]
    a, b = last[0], last[1]
    if _same_action(a, b) and a.result == b.result:
        return False
    return all(
        _same_action(c, a if k % 2 == 0 else b) and c.result == (a if k % 2 == 0 else b).result
        for k, c in enumerate(last)
    )


REFERENCES = {
    "naive-5": {"naive_5_identical": naive_rule},
    "openhands": {
        "repeat_pairs_4": oh_repeat_pairs,
        "repeat_errors_3": oh_repeat_errors,
        "alternation_6": oh_alternation,
    },
}


# -- does a termination cost the run its result? -------------------------------------------------

# Sources whose result is the repository the agent leaves behind: the harness submits the
# working tree's diff however the run ends (SWE-agent records ``submitted (exit_cost)`` when its
# cost limit stops a run; mini-swe-agent's result is ``git diff``). A termination that saves
# progress hands over the same diff, so it costs the result only if work changes after it.
# For the other sources (tau-bench: the conversation and the booking actions; HotpotQA: the
# final answer) every termination is counted as losing the result.
DIFF_JUDGED_SOURCES = frozenset({"multiswe_sweagent_java", "mini_swe_gemini3"})


def may_change_work(call: Call, categorizer: Categorizer) -> bool:
    """Whether a call can change the repository: a shell command that edits files (even one
    that fails later in its line), or a successful call of an action tool (edit, create, an
    exec that is not read-only, any tool the categories do not know). Deliberately generous:
    a successful build or test run counts too."""
    args = call.args.decode("utf-8", "replace")
    if edits_files(args):
        return True
    return not call.error and categorizer.classify(call.tool, args).category == ACTION


def termination_keeps_result(source: str, calls: list[Call], terminated_at: int) -> bool:
    """True when stopping at tool call ``terminated_at`` (after it ran) leaves the run's
    result as it was at the real end: a diff-judged source and no call after it that may
    change the work."""
    if source not in DIFF_JUDGED_SOURCES:
        return False
    categorizer = Categorizer()
    return not any(may_change_work(c, categorizer) for c in calls[terminated_at + 1 :])


# -- scoring ------------------------------------------------------------------------------------


@dataclass
class Score:
    terminal_runs: int = 0
    terminal_caught: int = 0
    episodes: int = 0
    episodes_caught: int = 0
    delays: list[int] = field(default_factory=list)
    delays_reps: list[float] = field(default_factory=list)
    loop_free: int = 0
    loop_free_term: int = 0
    successful: int = 0
    successful_term: int = 0
    successful_terminated: int = 0
    successful_result_lost: int = 0
    misses: list[str] = field(default_factory=list)
    false_alarms: list[str] = field(default_factory=list)


def terminal_span(label: dict[str, Any]) -> tuple[int, int, int] | None:
    """(first, last, unit length) of the terminal episode: the non-escaped episodes' span."""
    eps = [e for e in label["episodes"] if not e.get("escaped")]
    if not label.get("terminal_loop") or not eps:
        return None
    first = min(e["first_step"] for e in eps)
    primary = min(eps, key=lambda e: e["first_step"])
    return first, max(e["last_step"] for e in eps), max(1, len(primary.get("unit") or [1]))


def score(label: dict[str, Any], outcome: Outcome, sc: Score, calls: list[Call]) -> None:
    run = label["run_id"]
    terms = outcome.terms
    for ep in label["episodes"]:
        sc.episodes += 1
        if any(ep["first_step"] <= t <= ep["last_step"] for t in terms):
            sc.episodes_caught += 1
    span = terminal_span(label)
    if span is not None:
        first, last, unit = span
        sc.terminal_runs += 1
        inside = [t for t in terms if first <= t <= last]
        if inside:
            sc.terminal_caught += 1
            delay = min(inside) - first
            sc.delays.append(delay)
            sc.delays_reps.append(delay / unit)
        else:
            sc.misses.append(f"{run} (loop {first}-{last}; TERMs at {terms or 'none'})")
    if not label["has_loop"]:
        sc.loop_free += 1
        if terms:
            sc.false_alarms.append(
                f"{run} (TERM at {terms} by {sorted(set(outcome.dimensions))}"
                f"{'; terminated' if outcome.terminated_at is not None else ''})"
            )
            sc.loop_free_term += 1
    if label.get("outcome_success") is True:
        sc.successful += 1
        if terms:
            sc.successful_term += 1
        if outcome.terminated_at is not None:
            sc.successful_terminated += 1
            if not termination_keeps_result(label["source"], calls, outcome.terminated_at):
                sc.successful_result_lost += 1


def complete_label(label: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """A label with what the rubric's record derives filled in when a labeller left it out:
    ``source`` and ``outcome_success`` from the corpus's runs.jsonl, ``has_loop`` from the
    episodes (so labels made elsewhere, with only run ids and episodes, score the same)."""
    label = dict(label)
    label.setdefault("episodes", [])
    label.setdefault("source", record["source"])
    label.setdefault("outcome_success", (record.get("outcome") or {}).get("success"))
    label.setdefault("has_loop", bool(label["episodes"]))
    label.setdefault("terminal_loop", False)
    return label


def _pct(n: int, d: int) -> str:
    # one decimal: 18/19 is 94.7 %, not a rounded-up 95 %
    return f"{n}/{d} ({100.0 * n / d:.1f} %)" if d else "0/0"


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):g}" if values else "-"


ROWS = (
    (
        "terminal loop runs caught (TERM inside the loop)",
        lambda s: _pct(s.terminal_caught, s.terminal_runs),
    ),
    ("loop episodes caught", lambda s: _pct(s.episodes_caught, s.episodes)),
    ("median delay, steps (loop start to TERM)", lambda s: _median(s.delays)),
    ("median delay, repetitions", lambda s: _median(s.delays_reps)),
    ("loop-free runs with a TERM", lambda s: _pct(s.loop_free_term, s.loop_free)),
    ("successful runs with a TERM", lambda s: _pct(s.successful_term, s.successful)),
    (
        "successful runs that would be terminated",
        lambda s: _pct(s.successful_terminated, s.successful),
    ),
    (
        "successful runs whose result a termination would lose",
        lambda s: _pct(s.successful_result_lost, s.successful),
    ),
)


def table(scores: dict[str, Score], markdown: bool) -> str:
    names = list(scores)
    if markdown:
        lines = ["| metric | " + " | ".join(f"`{n}`" for n in names) + " |"]
        lines.append("|---|" + "---|" * len(names))
        for title, fn in ROWS:
            lines.append(f"| {title} | " + " | ".join(fn(scores[n]) for n in names) + " |")
        return "\n".join(lines)
    width = max(len(t) for t, _ in ROWS)
    lines = [" " * width + "".join(f"  {n:>16}" for n in names)]
    for title, fn in ROWS:
        lines.append(f"{title:<{width}}" + "".join(f"  {fn(scores[n]):>16}" for n in names))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--labels",
        action="append",
        help="label file (repeatable; default: quality/labels.jsonl and "
        "quality/labels_sources.jsonl)",
    )
    ap.add_argument("--config", default=DEFAULT_CONFIG)
    ap.add_argument(
        "--corpus",
        action="append",
        help="corpus folder (repeatable; default: the development corpus and, where it has "
        "been built, the extra sources' folder, $CYCLEGUARD_EXTRA_CORPUS or /work/corpus-extra)",
    )
    ap.add_argument("--source", action="append", help="only the labels of this source (repeatable)")
    ap.add_argument(
        "--by-source", action="store_true", help="also one cycleguard table row per source"
    )
    ap.add_argument("--all", action="store_true", help="also replay every corpus run")
    ap.add_argument("--details", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument(
        "--round",
        type=_round,
        action="append",
        help="only the labels of this labelling round (1 to 10, or first-contact; repeatable)",
    )
    a = ap.parse_args(argv)

    config = load_config(a.config, environ={})
    labels = []
    for path in a.labels or DEFAULT_LABEL_FILES:
        with open(path, encoding="utf-8") as f:
            labels += [json.loads(line) for line in f if line.strip()]
    if a.round:
        labels = [label for label in labels if label.get("round", 1) in a.round]
    corpora = a.corpus or [os.environ.get("CYCLEGUARD_CORPUS", DEFAULT_CORPUS), EXTRA_CORPUS]
    index = corpus_index(*corpora)
    if a.source:
        labels = [
            label
            for label in labels
            if (label.get("source") or index.get(label["run_id"], {}).get("source")) in a.source
        ]
    missing = [label["run_id"] for label in labels if label["run_id"] not in index]
    if missing:
        print(
            f"{len(missing)} labelled runs are in none of {', '.join(corpora)} and are left out "
            f"(build the extra sources with quality/sources/README.md), e.g. {missing[0]}",
            file=sys.stderr,
        )
    labels = [
        complete_label(label, index[label["run_id"]])
        for label in labels
        if label["run_id"] in index
    ]
    by_id = {label["run_id"]: label for label in labels}

    scores = {"cycleguard": Score(), **{name: Score() for name in REFERENCES}}
    per_source: dict[str, Score] = defaultdict(Score)
    details: list[str] = []
    for run_id, spans in load_runs(by_id, index):
        label = by_id[run_id]
        outcomes = {"cycleguard": replay_cycleguard(spans, config)}
        calls = tool_calls(spans)
        for name, rules in REFERENCES.items():
            outcomes[name] = _ladder(calls, rules)
        for name, outcome in outcomes.items():
            score(label, outcome, scores[name], calls)
        score(label, outcomes["cycleguard"], per_source[label["source"]], calls)
        cg = outcomes["cycleguard"]
        if label["has_loop"] or cg.terms:
            eps = ", ".join(
                f"{e['type']} {e['first_step']}-{e['last_step']}" for e in label["episodes"]
            )
            details.append(
                f"{run_id}: labels [{eps or 'no loop'}] | cycleguard TERM "
                f"{list(zip(cg.terms, cg.dimensions, strict=False))} terminated={cg.terminated_at}"
                f" | naive {outcomes['naive-5'].terms} | openhands {outcomes['openhands'].terms}"
            )

    print(
        f"{len(labels)} labelled runs; rubric: {RUBRIC_LINK}; config: {os.path.relpath(a.config, ROOT)}"
    )
    print(table(scores, a.markdown))
    if a.by_source:
        print("\ncycleguard, per source:")
        print(table(dict(sorted(per_source.items())), a.markdown))
        print(first_contact_table(per_source, a.markdown))
    if a.details:
        print("\nper run (labelled loops and every cycleguard TERM):")
        for line in details:
            print("  " + line)
    for name, sc in scores.items():
        if sc.misses or sc.false_alarms:
            print(f"\n{name}: misses {len(sc.misses)}, false alarms {len(sc.false_alarms)}")
            for m in sc.misses:
                print(f"  miss: {m}")
            for m in sc.false_alarms:
                print(f"  false alarm: {m}")

    if a.all:
        whole_corpus(index, config, markdown=a.markdown, sources=a.source)
    return 0


def first_contact_table(now: dict[str, Score], markdown: bool) -> str:
    """The recorded first contact of each added source beside today's figures on it."""
    with open(FIRST_CONTACT, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    head = (
        "source",
        "terminal loops caught",
        "loop-free runs with a TERM",
        "successful runs terminated",
    )
    rows = []
    for r in records:
        sc = now.get(r["source"])
        rows.append(
            (
                f"{r['source']} (first contact, rules {r['rules']})",
                _pct(r["terminal_caught"], r["terminal_loops"]),
                _pct(r["loop_free_term"], r["loop_free"]),
                _pct(r["successful_terminated"], r["successful"]),
            )
        )
        if sc is not None:
            rows.append(
                (
                    f"{r['source']} (now)",
                    _pct(sc.terminal_caught, sc.terminal_runs),
                    _pct(sc.loop_free_term, sc.loop_free),
                    _pct(sc.successful_terminated, sc.successful),
                )
            )
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\nadded sources, first contact and now:\n" + "\n".join(lines)
    width = max(len(row[0]) for row in [head, *rows])
    lines = [f"{head[0]:<{width}}" + "".join(f"  {h:>28}" for h in head[1:])]
    lines += [f"{row[0]:<{width}}" + "".join(f"  {c:>28}" for c in row[1:]) for row in rows]
    return "\nadded sources, first contact and now:\n" + "\n".join(lines)


def _round(value: str) -> int | str:
    return int(value) if value.isdigit() else value


def whole_corpus(
    index: dict[str, dict[str, Any]],
    config: CycleGuardConfig,
    *,
    markdown: bool,
    sources: list[str] | None = None,
) -> None:
    """Every corpus run: how many runs (and successful runs) get a TERM / would be terminated."""
    stats: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))
    flagged: list[str] = []
    wanted = [r for r, rec in index.items() if not sources or rec["source"] in sources]
    for run_id, spans in load_runs(wanted, index):
        record = index[run_id]
        success = record["outcome"].get("success")
        bucket = {True: "success", False: "failure", None: "unknown"}[success]
        outcome = replay_cycleguard(spans, config)
        row = stats[record["source"]][bucket]
        row[0] += 1
        row[1] += bool(outcome.terms)
        row[2] += outcome.terminated_at is not None
        if success and outcome.terms:
            ended = ""
            if outcome.terminated_at is not None:
                kept = termination_keeps_result(
                    record["source"], tool_calls(spans), outcome.terminated_at
                )
                ended = f" terminated (result {'kept' if kept else 'lost'})"
            flagged.append(
                f"{run_id}: TERM {list(zip(outcome.terms, outcome.dimensions, strict=False))}"
                + ended
            )
    print("\nwhole corpus (cycleguard): runs / with a TERM / would be terminated")
    if markdown:
        print("| source | outcome | runs | with a TERM | would be terminated |")
        print("|---|---|---|---|---|")
    total = [0, 0, 0]
    succ = [0, 0, 0]
    for source in sorted(stats):
        for bucket in ("success", "failure", "unknown"):
            if bucket not in stats[source]:
                continue
            r = stats[source][bucket]
            total = [x + y for x, y in zip(total, r, strict=False)]
            if bucket == "success":
                succ = [x + y for x, y in zip(succ, r, strict=False)]
            if markdown:
                print(f"| {source} | {bucket} | {r[0]} | {r[1]} | {r[2]} |")
            else:
                print(f"  {source:<24} {bucket:<8} {r[0]:>5} {r[1]:>5} {r[2]:>5}")
    if markdown:
        print(f"| **all** | | {total[0]} | {total[1]} | {total[2]} |")
        print(f"| **all successful** | | {succ[0]} | {succ[1]} | {succ[2]} |")
    else:
        print(f"  {'all':<33} {total[0]:>5} {total[1]:>5} {total[2]:>5}")
        print(f"  {'all successful':<33} {succ[0]:>5} {succ[1]:>5} {succ[2]:>5}")
    for line in flagged:
        print("  successful with TERM: " + line)


if __name__ == "__main__":
    sys.exit(main())
