"""The Markdown report: an incident write-up to paste into a ticket or post-mortem."""

from __future__ import annotations

from otel_cycleguard.analyze.report import Analysis, SessionReport, episodes

__all__ = ["render_markdown"]

MAX_SESSIONS_DETAILED = 50
_STAGE = {"self_heal": "self-heal", "hitl": "human asked", "terminate": "terminated"}


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _where(tool_index: int | None, turn_index: int | None) -> str:
    return f"tool call {tool_index}" if tool_index is not None else f"model turn {turn_index}"


def render_markdown(analysis: Analysis) -> str:
    """The whole write-up as one Markdown string."""
    s = analysis.summary()
    settings = analysis.settings
    out: list[str] = ["# Agent loop analysis", ""]
    loops = s["sessions_with_loops"]
    human = "always continuing" if settings["hitl"] == "continue" else "silent (fail-closed)"
    if loops:
        out.append(
            f"**{loops} of {s['sessions']} sessions looped** (reached TERM in at least one "
            f"dimension); with the human {human}, "
            f"cycleguard would have terminated **{s['terminated']}**. After the first TERM the "
            f"looping sessions spent {s['wasted']['tool_calls']} more tool calls, "
            f"{s['wasted']['seconds']:.1f} s and {s['wasted']['tokens']} tokens."
        )
    else:
        out.append(f"No session of {s['sessions']} reached TERM.")
    out += [
        "",
        "## Summary",
        "",
        "| | |",
        "|---|---|",
        f"| spans read | {s['spans_read']} |",
        f"| sessions | {s['sessions']} ({s['tool_calls']} tool calls, "
        f"{s['model_turns']} model turns) |",
        f"| sessions without a session id (grouped by trace) | {s['sessions_keyed_by_trace_id']} |",
        f"| sessions with loops (TERM) | {loops} |",
        f"| sessions with warnings only | {s['sessions_with_warnings_only']} |",
        f"| terminated | {s['terminated']} |",
        f"| escalations | {s['escalations']['self_heal']} self-heal, "
        f"{s['escalations']['hitl']} human, {s['escalations']['terminate']} terminate |",
        f"| wasted after first TERM | {s['wasted']['tool_calls']} tool calls, "
        f"{s['wasted']['seconds']:.1f} s, {s['wasted']['tokens']} tokens |",
        f"| input problems | {s['input_problems']} |",
        f"| settings | profile `{settings['profile']}`, child agents `"
        f"{settings['subagent_profile']}`, hitl `{settings['hitl']}` |",
        "",
    ]
    fired = [(d, c) for d, c in s["signals"].items() if c["warn"] or c["term"]]
    if fired:
        out += ["### Signals by dimension", "", "| dimension | warn | term |", "|---|---:|---:|"]
        out += [f"| {d} | {c['warn']} | {c['term']} |" for d, c in fired]
        out.append("")
    looping = sorted(
        (r for r in analysis.sessions if r.has_loop),
        key=lambda r: (-r.wasted.tool_calls, r.session),
    )
    if looping:
        out += ["## Sessions that looped", ""]
        for report in looping[:MAX_SESSIONS_DETAILED]:
            out += _session(report)
        if len(looping) > MAX_SESSIONS_DETAILED:
            out += [
                f"... and {len(looping) - MAX_SESSIONS_DETAILED} more (see the JSON report).",
                "",
            ]
    if analysis.notes:
        out += ["## Notes", ""]
        out += [f"- {note}" for note in analysis.notes]
        out.append("")
    if analysis.problems:
        out += ["## Skipped input", ""]
        out += [f"- `{_cell(p)}`" for p in analysis.problems[:20]]
        out.append("")
    return "\n".join(out)


def _session(report: SessionReport) -> list[str]:
    out = [f"### `{_cell(report.session)}`", ""]
    agent = f"agent `{report.agent}`, " if report.agent else ""
    out.append(
        f"{agent}profile `{report.profile}`{' (child agent)' if report.subagent else ''}, "
        f"{report.tool_calls} tool calls, {report.model_turns} model turns, "
        f"trace{'s' if len(report.trace_ids) > 1 else ''} "
        + ", ".join(f"`{t}`" for t in report.trace_ids[:5])
        + (" …" if len(report.trace_ids) > 5 else "")
        + "."
    )
    out.append("")
    first = report.first_term
    if first is not None:
        out.append(
            f"- **First TERM** at {_where(first.tool_call_index, first.model_turn_index)} "
            f"(span `{first.span_id}`): {first.explanation}"
        )
    for escalation in report.escalations:
        out.append(
            f"- **{_STAGE[escalation.stage]}** ({escalation.dimension}) at "
            f"{_where(escalation.tool_call_index, escalation.model_turn_index)}, "
            f"span `{escalation.span_id}`"
        )
    if report.terminated_at is not None:
        t = report.terminated_at
        after = ""
        if t.tool_call_index is not None:
            after = f"; the trace shows {report.tool_calls - 1 - t.tool_call_index} more tool calls"
        out.append(
            f"- **Stopped** at {_where(t.tool_call_index, t.model_turn_index)} with reason "
            f"`{t.reason}`{after}."
        )
    w = report.wasted
    out.append(
        f"- **Wasted after the first TERM:** {w.tool_calls} tool calls, {w.seconds:.1f} s, "
        f"{w.tokens} tokens."
    )
    out += [
        "",
        "| episode | dimension | level | from | to | tools | ended by |",
        "|---:|---|---|---|---|---|---|",
    ]
    for number, episode in enumerate(episodes(report), 1):
        start, end = episode.signals[0], episode.signals[-1]
        tools = sorted({sig.tool for sig in episode.signals if sig.tool}) or ["(model)"]
        out.append(
            f"| {number} | {episode.dimension} | {episode.level} | "
            f"{_where(start.tool_call_index, start.model_turn_index)} | "
            f"{_where(end.tool_call_index, end.model_turn_index)} | "
            f"{_cell(', '.join(tools))} | {_STAGE.get(episode.end_stage or '', '—')} |"
        )
    out.append("")
    return out
