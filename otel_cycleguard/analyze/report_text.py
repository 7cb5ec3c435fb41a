"""The terminal report: a summary, then one table row per loop episode, in plain text.

Standard library only, so it works with the core install. Colour only on a terminal; files
and pipes get plain text at full width (``COLUMNS`` fits it), and no column is ever dropped.
"""

from __future__ import annotations

import os
from typing import TextIO

from otel_cycleguard.analyze._table import Table, report_width
from otel_cycleguard.analyze.report import Analysis, SessionReport, episodes

__all__ = ["render_text"]

_STAGE_LABEL = {
    "self_heal": "self-heal",
    "hitl": "human: continue",
    "terminate": "terminated",
    None: "",
}
MAX_SESSIONS_LISTED = 200
_RED = "\x1b[1;31m"
_YELLOW = "\x1b[33m"


def _position(report: SessionReport, sequence: int) -> str:
    """``call 12`` / ``turn 3`` for a sequence number, from the signals that carry both."""
    for signal in report.signals:
        if signal.sequence == sequence:
            if signal.tool_call_index is not None:
                return f"call {signal.tool_call_index}"
            return f"turn {signal.model_turn_index}"
    return f"step {sequence}"


def render_text(analysis: Analysis, stream: TextIO, *, width: int | None = None) -> None:
    """Write the terminal summary of ``analysis`` to ``stream``.

    Fitted to ``width``, else ``$COLUMNS``, else the terminal; unlimited in a pipe or file.
    """
    limit = report_width(stream, width)
    color = _color(stream)
    summary = analysis.summary()
    wasted = summary["wasted"]
    settings = analysis.settings

    head = Table(None, fold=frozenset({1}))
    head.add_row("spans read", f"{summary['spans_read']:,}")
    if analysis.formats:
        head.add_row(
            "formats", ", ".join(f"{name} ({count:,})" for name, count in analysis.formats.items())
        )
    head.add_row(
        "sessions",
        f"{summary['sessions']:,} ({summary['tool_calls']:,} tool calls, "
        f"{summary['model_turns']:,} model turns)",
    )
    if summary["sessions_keyed_by_trace_id"]:
        head.add_row(
            "  without a session id",
            f"{summary['sessions_keyed_by_trace_id']:,} (grouped by trace id)",
        )
    if summary["subagent_sessions"]:
        head.add_row("  child agents", f"{summary['subagent_sessions']:,}")
    head.add_row("profile / hitl", f"{settings['profile']} / {settings['hitl']}")
    head.add_row(
        "sessions with loops (TERM)",
        f"{summary['sessions_with_loops']:,}",
        styles=(None, _RED if summary["sessions_with_loops"] else None),
    )
    head.add_row("  warnings only", f"{summary['sessions_with_warnings_only']:,}")
    head.add_row("terminated", f"{summary['terminated']:,}")
    esc = summary["escalations"]
    head.add_row(
        "escalations",
        f"{esc['self_heal']:,} self-heal, {esc['hitl']:,} human, {esc['terminate']:,} terminate",
    )
    head.add_row(
        "wasted after first TERM",
        f"{wasted['tool_calls']:,} tool calls, {wasted['seconds']:,.1f} s, "
        f"{wasted['tokens']:,} tokens",
    )
    problems = summary["input_problems"]
    head.add_row(
        "input problems",
        f"{problems:,} "
        + ", ".join(f"{k}: {v}" for k, v in summary["input_problems_by_kind"].items())
        if problems
        else "0",
        styles=(None, _YELLOW if problems else None),
    )
    for note in analysis.notes:
        head.add_row("note", note)
    blocks = [head.render("cycleguard analyze", width=limit, color=color)]

    dims = Table(("dimension", "warn", "term"), right=frozenset({1, 2}))
    for dimension, counts in summary["signals"].items():
        if counts["warn"] or counts["term"]:
            dims.add_row(dimension, str(counts["warn"]), str(counts["term"]))
    if dims.row_count:
        blocks.append(dims.render("signals by dimension", width=limit, color=color))

    looping = [s for s in analysis.sessions if s.signals]
    looping.sort(key=lambda s: (not s.has_loop, -s.wasted.tool_calls, s.session))
    if not looping:
        blocks.append(["No loop signals: every session stayed below the warn thresholds."])
        _write(stream, blocks)
        return
    table = Table(
        (
            "session",
            "dimension",
            "level",
            "from",
            "to",
            "tool",
            "ended by",
            "wasted calls / s / tokens",
        ),
        right=frozenset({3, 4, 7}),
        fold=frozenset({0, 5}),
    )
    for report in looping[:MAX_SESSIONS_LISTED]:
        first = True
        for episode in episodes(report):
            tools = {s.tool for s in episode.signals if s.tool}
            term = episode.level == "term"
            wasted = report.wasted
            table.add_row(
                report.session if first else "",
                episode.dimension,
                "TERM" if term else "warn",
                _position(report, episode.start_sequence),
                _position(report, episode.end_sequence),
                ", ".join(sorted(tools)) or "(model)",
                _STAGE_LABEL[episode.end_stage],
                f"{wasted.tool_calls} / {wasted.seconds:.1f} / {wasted.tokens}"
                if first and report.has_loop
                else "",
                styles=(None, None, _RED if term else _YELLOW),
            )
            first = False
    blocks.append(table.render("loop episodes", width=limit, color=color))
    if len(looping) > MAX_SESSIONS_LISTED:
        blocks.append(
            [
                f"... {len(looping) - MAX_SESSIONS_LISTED} more sessions with signals "
                "(see --format json)"
            ]
        )
    _write(stream, blocks)


def _color(stream: TextIO) -> bool:
    """ANSI colour on a terminal only, and never under ``NO_COLOR``."""
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _write(stream: TextIO, blocks: list[list[str]]) -> None:
    stream.write("\n\n".join("\n".join(block) for block in blocks if block) + "\n")
    stream.flush()
