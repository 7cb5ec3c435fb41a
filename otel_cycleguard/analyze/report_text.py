"""The terminal report: a summary, then one table row per loop episode, with rich.

Colour only when the stream is a terminal (rich decides); plain text in files and pipes.
"""

from __future__ import annotations

from typing import TextIO

from otel_cycleguard.analyze.report import Analysis, SessionReport, episodes

__all__ = ["render_text"]

_STAGE_LABEL = {
    "self_heal": "self-heal",
    "hitl": "human: continue",
    "terminate": "terminated",
    None: "",
}
MAX_SESSIONS_LISTED = 200


def _position(report: SessionReport, sequence: int) -> str:
    """``call 12`` / ``turn 3`` for a sequence number, from the signals that carry both."""
    for signal in report.signals:
        if signal.sequence == sequence:
            if signal.tool_call_index is not None:
                return f"call {signal.tool_call_index}"
            return f"turn {signal.model_turn_index}"
    return f"step {sequence}"


def render_text(analysis: Analysis, stream: TextIO, *, width: int | None = None) -> None:
    """Write the terminal summary of ``analysis`` to ``stream``."""
    from rich.console import Console
    from rich.table import Table

    is_tty = stream.isatty() if hasattr(stream, "isatty") else False
    console = Console(file=stream, width=width or (None if is_tty else 120), highlight=False)
    summary = analysis.summary()
    wasted = summary["wasted"]
    settings = analysis.settings

    head = Table(title="cycleguard analyze", show_header=False, title_justify="left")
    head.add_column("what", style="bold")
    head.add_column("value")
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
        f"[bold red]{summary['sessions_with_loops']:,}[/]"
        if summary["sessions_with_loops"]
        else "0",
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
        f"[yellow]{problems:,}[/] "
        + ", ".join(f"{k}: {v}" for k, v in summary["input_problems_by_kind"].items())
        if problems
        else "0",
    )
    for note in analysis.notes:
        head.add_row("[yellow]note[/]", note)
    console.print(head)

    dims = Table(title="signals by dimension", title_justify="left")
    dims.add_column("dimension")
    dims.add_column("warn", justify="right")
    dims.add_column("term", justify="right")
    for dimension, counts in summary["signals"].items():
        if counts["warn"] or counts["term"]:
            dims.add_row(dimension, str(counts["warn"]), str(counts["term"]))
    if dims.row_count:
        console.print(dims)

    looping = [s for s in analysis.sessions if s.signals]
    looping.sort(key=lambda s: (not s.has_loop, -s.wasted.tool_calls, s.session))
    if not looping:
        console.print("No loop signals: every session stayed below the warn thresholds.")
        return
    table = Table(title="loop episodes", title_justify="left", show_lines=False)
    table.add_column("session", overflow="fold", min_width=30, max_width=60)
    table.add_column("dimension")
    table.add_column("level")
    table.add_column("from", justify="right")
    table.add_column("to", justify="right")
    table.add_column("tool")
    table.add_column("ended by")
    table.add_column("wasted calls / s / tokens", justify="right")
    for report in looping[:MAX_SESSIONS_LISTED]:
        first = True
        for episode in episodes(report):
            tools = {s.tool for s in episode.signals if s.tool}
            level = "[red]TERM[/]" if episode.level == "term" else "[yellow]warn[/]"
            wasted = report.wasted
            table.add_row(
                report.session if first else "",
                episode.dimension,
                level,
                _position(report, episode.start_sequence),
                _position(report, episode.end_sequence),
                ", ".join(sorted(tools)) or "(model)",
                _STAGE_LABEL[episode.end_stage],
                f"{wasted.tool_calls} / {wasted.seconds:.1f} / {wasted.tokens}"
                if first and report.has_loop
                else "",
            )
            first = False
    console.print(table)
    if len(looping) > MAX_SESSIONS_LISTED:
        console.print(
            f"... {len(looping) - MAX_SESSIONS_LISTED} more sessions with signals "
            "(see --format json)"
        )
