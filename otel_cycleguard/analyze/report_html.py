"""The HTML report: one self-contained file (inline CSS and JS, no external URLs).

On top, the summary table; below, one timeline per session: a row of step cells coloured by
tool (model turns are thin grey cells), loop episodes underlined from their first signal to
their end (red: reached TERM, amber: warnings only), escalation points labelled ``self-heal``,
``human`` and ``terminated``, steps after the termination point faded. Every cell has a hover
title with the step, the tool and the signals on it.
"""

from __future__ import annotations

import html
from collections import Counter

from otel_cycleguard.analyze.report import Analysis, SessionReport, Step, episodes

__all__ = ["render_html"]

#: Above this many steps in all, only sessions with signals get a timeline.
MAX_TIMELINE_STEPS = 150_000
MAX_TIMELINES = 2_000
_PALETTE = (
    "#4e79a7",
    "#59a14f",
    "#9c755f",
    "#f28e2b",
    "#76b7b2",
    "#b07aa1",
    "#ff9da7",
    "#edc948",
    "#17becf",
    "#8c6d31",
    "#637939",
    "#393b79",
    "#e7969c",
    "#7b4173",
    "#a55194",
    "#6b6ecf",
)
_OTHER = "#9aa0a6"
_STAGE_LABEL = {"self_heal": "self-heal", "hitl": "human", "terminate": "terminated"}

_CSS = """
:root{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1f2328}
body{margin:24px;max-width:1400px}
h1{font-size:22px;margin:0 0 12px}h2{font-size:17px;margin:28px 0 8px}
table.sum{border-collapse:collapse;margin-bottom:12px}
table.sum td,table.sum th{border:1px solid #d0d7de;padding:4px 10px;text-align:left;font-size:13px}
table.sum th{background:#f6f8fa}
.num{text-align:right}
.legend{display:flex;flex-wrap:wrap;gap:6px 14px;font-size:12px;margin:8px 0 16px}
.legend span.sw{display:inline-block;width:12px;height:12px;border-radius:2px;
 vertical-align:-2px;margin-right:4px}
.sess{border:1px solid #d0d7de;border-radius:6px;padding:8px 12px;margin:10px 0}
.sess.loop{border-color:#cf222e}
.sess h3{font-size:14px;margin:0 0 2px;word-break:break-all}
.meta{font-size:12px;color:#57606a;margin-bottom:4px}
.tl{display:flex;flex-wrap:wrap;gap:2px 1px;padding-top:30px;line-height:0}
.tl.rows{row-gap:32px}
.c{position:relative;display:inline-block;width:10px;height:20px;border-radius:2px;
 border-bottom:4px solid transparent;box-sizing:content-box}
.c.mt{width:4px;background:#c9ced6}
.c.err{box-shadow:inset 0 -3px 0 #000}
.c.ew{border-bottom-color:#e3a008}.c.et{border-bottom-color:#cf222e}
.c.sig{outline:1px solid #1f2328;outline-offset:0}
.c.after{opacity:.3}
.m{position:absolute;bottom:25px;left:-2px;font-size:10px;line-height:12px;padding:0 3px;
 border-radius:3px;white-space:nowrap;color:#fff;z-index:1}
.m.up{bottom:38px}
.m.self_heal{background:#1a7f37}.m.hitl{background:#8250df}.m.terminate{background:#cf222e}
.badge{display:inline-block;font-size:11px;padding:0 6px;border-radius:10px;margin-left:6px;
 color:#fff;vertical-align:1px}
.badge.term{background:#cf222e}.badge.warn{background:#bf8700}.badge.stop{background:#57606a}
.eps{font-size:12px;margin:6px 0 0;padding-left:18px;color:#24292f}
.controls{font-size:13px;margin:8px 0}
.hidden{display:none}
"""

_JS = """
(function(){
  var box=document.getElementById('only-loops');
  if(!box){return;}
  function apply(){
    var clean=document.querySelectorAll('.sess.clean');
    for(var i=0;i<clean.length;i++){clean[i].classList.toggle('hidden',box.checked);}
  }
  box.addEventListener('change',apply);
  apply();
})();
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def render_html(analysis: Analysis) -> str:
    """The whole report as one HTML document string."""
    colours = _colours(analysis)
    s = analysis.summary()
    parts: list[str] = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width,initial-scale=1'>",
        "<title>cycleguard analysis</title><link rel='icon' href='data:,'>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>cycleguard analysis</h1>",
        _summary_table(analysis, s),
        _legend(colours),
    ]
    sessions = analysis.sessions
    total_steps = sum(len(r.steps) for r in sessions)
    shown = [r for r in sessions if r.signals] if total_steps > MAX_TIMELINE_STEPS else sessions
    shown = sorted(shown, key=lambda r: (not r.has_loop, not r.signals, r.first_start_ns))
    parts.append(
        "<div class='controls'><label><input type='checkbox' id='only-loops'"
        f"{' checked' if len(shown) > 50 else ''}> only sessions with signals</label>"
        f" &middot; {len(shown)} of {len(sessions)} sessions shown</div>"
    )
    parts.append("<h2>Sessions</h2>")
    for report in shown[:MAX_TIMELINES]:
        parts.append(_session(report, colours))
    if len(shown) > MAX_TIMELINES:
        parts.append(f"<p>... {len(shown) - MAX_TIMELINES} more sessions not drawn.</p>")
    parts.append(f"<script>{_JS}</script></body></html>\n")
    return "".join(parts)


def _colours(analysis: Analysis) -> dict[str, str]:
    counts: Counter[str] = Counter()
    for report in analysis.sessions:
        counts.update(step.tool for step in report.steps if step.tool is not None)
    return {
        tool: _PALETTE[i] if i < len(_PALETTE) else _OTHER
        for i, (tool, _) in enumerate(counts.most_common())
    }


def _summary_table(analysis: Analysis, s: dict) -> str:
    settings = analysis.settings
    esc = s["escalations"]
    w = s["wasted"]
    rows = [
        ("spans read", f"{s['spans_read']:,}"),
        (
            "sessions",
            f"{s['sessions']:,} ({s['tool_calls']:,} tool calls, {s['model_turns']:,} model turns)",
        ),
        ("sessions with loops (TERM)", f"{s['sessions_with_loops']:,}"),
        ("sessions with warnings only", f"{s['sessions_with_warnings_only']:,}"),
        ("terminated", f"{s['terminated']:,}"),
        (
            "escalations",
            f"{esc['self_heal']:,} self-heal, {esc['hitl']:,} human, "
            f"{esc['terminate']:,} terminate",
        ),
        (
            "wasted after first TERM",
            f"{w['tool_calls']:,} tool calls, {w['seconds']:,.1f} s, {w['tokens']:,} tokens",
        ),
        ("input problems", f"{s['input_problems']:,}"),
        (
            "settings",
            f"profile {settings['profile']}, child agents "
            f"{settings['subagent_profile']}, hitl {settings['hitl']}",
        ),
        *(("note", note) for note in analysis.notes),
    ]
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    dims = "".join(
        f"<tr><td>{_e(d)}</td><td class='num'>{c['warn']}</td><td class='num'>{c['term']}</td></tr>"
        for d, c in s["signals"].items()
        if c["warn"] or c["term"]
    )
    out = f"<table class='sum' id='summary'>{body}</table>"
    if dims:
        out += (
            "<table class='sum' id='dimensions'><tr><th>dimension</th><th>warn</th>"
            f"<th>term</th></tr>{dims}</table>"
        )
    return out


def _legend(colours: dict[str, str]) -> str:
    items = [
        f"<span><span class='sw' style='background:{c}'></span>{_e(t)}</span>"
        for t, c in list(colours.items())[: len(_PALETTE)]
    ]
    if len(colours) > len(_PALETTE):
        items.append(
            f"<span><span class='sw' style='background:{_OTHER}'></span>other tools</span>"
        )
    items += [
        "<span><span class='sw' style='background:#c9ced6;width:4px'></span>model turn</span>",
        "<span><span class='sw' style='border-bottom:4px solid #e3a008'></span>warn episode</span>",
        "<span><span class='sw' style='border-bottom:4px solid #cf222e'></span>TERM episode</span>",
        "<span><span class='sw' style='background:#1a7f37'></span>self-heal</span>",
        "<span><span class='sw' style='background:#8250df'></span>human asked</span>",
        "<span><span class='sw' style='background:#cf222e'></span>terminated</span>",
        "<span><span class='sw' style='background:#888;opacity:.3'></span>after termination</span>",
    ]
    return f"<div class='legend'>{''.join(items)}</div>"


def _session(report: SessionReport, colours: dict[str, str]) -> str:
    kind = "loop" if report.has_loop else ("warn" if report.signals else "clean")
    badges = ""
    terms = sum(1 for x in report.signals if x.level == "term")
    warns = len(report.signals) - terms
    if terms:
        badges += f"<span class='badge term'>{terms} TERM</span>"
    if warns:
        badges += f"<span class='badge warn'>{warns} warn</span>"
    if report.terminated_at is not None:
        badges += f"<span class='badge stop'>{_e(report.terminated_at.reason)}</span>"
    meta = [
        f"agent {report.agent}" if report.agent else None,
        f"profile {report.profile}" + (" (child agent)" if report.subagent else ""),
        f"{report.tool_calls} tool calls, {report.model_turns} model turns",
        "keyed by trace id" if report.keyed_by == "trace_id" else None,
        f"wasted after first TERM: {report.wasted.tool_calls} calls, "
        f"{report.wasted.seconds:.1f} s, {report.wasted.tokens} tokens"
        if report.has_loop
        else None,
    ]
    out = [
        f"<div class='sess {kind if kind != 'warn' else 'sig'}"
        f"{' clean' if not report.signals else ''}'>",
        f"<h3>{_e(report.session)}{badges}</h3>",
        f"<div class='meta'>{_e(' · '.join(m for m in meta if m))}</div>",
        _timeline(report, colours),
    ]
    eps = episodes(report)
    if eps:
        out.append("<ul class='eps'>")
        for episode in eps:
            end = _STAGE_LABEL.get(episode.end_stage or "", "")
            first, last = episode.signals[0], episode.signals[-1]
            span = _where(first)
            if last is not first:
                span += f" → {_where(last)}"
            out.append(
                f"<li><b>{_e(episode.dimension)}</b> ({episode.level}) {span}"
                f"{': ' + _e(end) if end else ''} — {_e(last.explanation)}</li>"
            )
        out.append("</ul>")
    out.append("</div>")
    return "".join(out)


def _where(signal) -> str:
    if signal.tool_call_index is not None:
        return f"call {signal.tool_call_index}"
    return f"turn {signal.model_turn_index}"


def _timeline(report: SessionReport, colours: dict[str, str]) -> str:
    steps: list[Step] = report.steps
    if not steps:
        return ""
    n = len(steps)
    band = [""] * n  # "" / "ew" / "et"
    notes: list[list[str]] = [[] for _ in range(n)]
    for episode in episodes(report):
        cls = "et" if episode.level == "term" else "ew"
        for i in range(episode.start_sequence, min(episode.end_sequence + 1, n)):
            if band[i] != "et":
                band[i] = cls
    signal_at = [False] * n
    for signal in report.signals:
        if signal.sequence < n:
            signal_at[signal.sequence] = True
            notes[signal.sequence].append(
                f"{signal.dimension} {signal.level.upper()} "
                f"(streak {signal.streak}/{signal.threshold})"
            )
    marks: dict[int, list[str]] = {}
    for escalation in report.escalations:
        if escalation.sequence < n:
            marks.setdefault(escalation.sequence, []).append(escalation.stage)
            notes[escalation.sequence].append(
                f"{_STAGE_LABEL[escalation.stage]} ({escalation.dimension})"
            )
    stop = report.terminated_at.sequence if report.terminated_at is not None else None
    cells: list[str] = []
    tool_index = turn_index = marked = 0
    for i, step in enumerate(steps):
        classes = ["c"]
        if step.tool is None:
            classes.append("mt")
            what = f"model turn {turn_index}"
            turn_index += 1
            style = ""
        else:
            what = f"tool {step.tool} · call {tool_index}"
            tool_index += 1
            style = f" style='background:{colours.get(step.tool, _OTHER)}'"
        if step.error:
            classes.append("err")
            what += " · error"
        if band[i]:
            classes.append(band[i])
        if signal_at[i]:
            classes.append("sig")
        if stop is not None and i > stop:
            classes.append("after")
            what += " · after termination (would not have run)"
        title = f"step {i} · {what}"
        if notes[i]:
            title += " · " + "; ".join(notes[i])
        label = ""
        if i in marks:
            stage = "terminate" if "terminate" in marks[i] else marks[i][-1]
            up = " up" if marked % 2 else ""
            marked += 1
            label = f"<span class='m {stage}{up}'>{_STAGE_LABEL[stage]}</span>"
        cells.append(f"<span class='{' '.join(classes)}'{style} title='{_e(title)}'>{label}</span>")
    rows = " rows" if marks else ""
    return f"<div class='tl{rows}'>{''.join(cells)}</div>"
