"""Convert the WebVoyager30 browser-agent runs (nottelabs/open-operator-evals) to OTLP JSON.

Why: a live web-browser agent harness, unlike every source already converted. Notte's public
benchmark ran open-source browser agents on WebVoyager30 (30 WebVoyager tasks on 15 real
websites: Allrecipes, Amazon, Apple, ArXiv, GitHub, Booking, Coursera, Google Flights, ...),
8 tries per task, at most 20 steps and 6 minutes a try, and committed one
``results_no_screenshot.json`` per try: every LLM call of every agent step (the full input
messages, which carry the page state and the harness's report on the previous actions, and the
raw model output), the agent's own success flag and answer, and the WebVoyager LLM judge's
verdict (``eval.eval``: success / failure / unknown). Failed and timed-out tries are kept.

Two of the three agents are converted:
- ``Notte``: Notte's Falco agent (notte v1.3.3, gemini/gemini-2.0-flash). Each turn is a JSON
  object whose ``actions`` list holds one or more ``{name: {params}}`` actions (``goto``,
  ``click``, ``fill``, ``scrape``, ``completion``, ...). The next turn's input reports each
  action as ``✅ action 'click' with id=B3 succeeded: ...`` or ``❌ action ... failed ...``,
  then the scraped data (if any) and the new page state.
- ``Convergence``: Convergence proxy-lite (``convergence-ai/proxy-lite-3b``). Each turn is an
  ``<observation>/<thinking>`` text with OpenAI-style tool calls (``click``, ``type``,
  ``scroll``, ``goto``, ``back``, ``return_value``, ...). The harness reports no action
  results; the next turn's input is the new page state (``URL: ...`` and the marked elements).
The third (Browser-Use) is not converted: 160 of its steps have no recorded LLM call.

Usage: python3 quality/sources/webvoyager30.py --raw RAW --out DIR
  RAW is a bare git dir of nottelabs/open-operator-evals holding COMMIT (read with
  ``git show``), or a directory holding its ``WebVoyager30/`` folder (or that folder itself).

Writes DIR/webvoyager30.otlp.jsonl.gz and DIR/webvoyager30.runs.jsonl (same order: agent,
task, try). Stdlib only; the OTLP span helpers are shared with react_webshop.py.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gitraw import git_files, git_show, is_git, walk_files
from react_webshop import (  # shared OTLP shape
    Trace,
    agent_request,
    agent_root_attrs,
    attr,
    write_source,
)

SOURCE = "webvoyager30"
REPO = "nottelabs/open-operator-evals"
COMMIT = "50f8e472230cbcc9c4ff24e1e8ed5ae42683b238"  # 2025-04-11 "update readme" (data: 5db6ea5)
BASE = "WebVoyager30"
MAX_STEPS = 20  # configs/*.toml max_steps
# agent folder -> (timestamp folder, model id, agent name); from configs/*.toml and README.md
AGENTS = {
    "Convergence": ("1743114165", "convergence-ai/proxy-lite-3b", "Convergence proxy-lite"),
    "Notte": ("1743001170", "gemini/gemini-2.0-flash", "Notte Falco agent (notte v1.3.3)"),
}
RESULT_LINE = re.compile(r"^(✅|❌) action '([A-Za-z_]+)' with id=")
NOTTE_PROMPT = "Given the previous information, start by reflecting on your last action."


def local_root(raw: str) -> str:
    return os.path.join(raw, BASE) if os.path.isdir(os.path.join(raw, BASE)) else raw


def list_runs(raw: str) -> list[tuple[str, str, int]]:
    """(agent, task folder, try) for every results_no_screenshot.json of the two agents."""
    rels = git_files(raw, COMMIT, BASE) if is_git(raw) else walk_files(local_root(raw))
    runs = []
    rx = re.compile(r"^([A-Za-z]+)/(\d+)/([^/]+)/(\d+)/results_no_screenshot\.json$")
    for p in rels:
        m = rx.match(p)
        if m and m.group(1) in AGENTS and AGENTS[m.group(1)][0] == m.group(2):
            runs.append((m.group(1), m.group(3), int(m.group(4))))
    return sorted(runs)


def rel_path(agent: str, task_dir: str, k: int) -> str:
    return f"{agent}/{AGENTS[agent][0]}/{task_dir}/{k}/results_no_screenshot.json"


def read(raw: str, rel: str) -> str:
    if is_git(raw):
        return git_show(raw, COMMIT, f"{BASE}/{rel}")
    with open(os.path.join(local_root(raw), rel), encoding="utf-8") as f:
        return f.read()


def text_of(msg: dict) -> str:
    """A message's text; image parts (already replaced by 'benchmark: removed') are dropped."""
    c = msg.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "\n".join(p.get("text", "") for p in c if isinstance(p, dict) and "text" in p)
    return ""


# ------------------------------------------------------------------ Notte (Falco)
def notte_actions(content: str) -> list[tuple[str, dict]] | None:
    """The actions of one Falco output, or None if the harness could not have parsed it."""
    try:
        out = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return None
    if not isinstance(out, dict) or not isinstance(out.get("actions"), list):
        return None
    acts = []
    for a in out["actions"]:
        if not (isinstance(a, dict) and len(a) == 1):
            return None
        name, params = next(iter(a.items()))
        acts.append((name, params if isinstance(params, dict) else {"value": params}))
    return acts


def notte_feedback(next_step: dict | None, acts: list) -> list[str] | None:
    """The harness messages that follow this output in the next step's input (action reports,
    scraped data, the new page state), without the fixed reflection prompt; None if unseen.
    The history holds the output re-serialized, so it is matched on its parsed actions."""
    if next_step is None or not next_step["llm_calls"]:
        return None
    msgs = next_step["llm_calls"][0]["messages_in"]
    idx = [i for i, m in enumerate(msgs) if m["role"] == "assistant"]
    if not idx:
        return None  # 2 tries: the next input was cut to the system and reflection prompts
    # the history holds the validated actions (defaults filled in): same names, and every
    # parameter the model gave has the same value there
    hist = notte_actions(msgs[idx[-1]]["content"]) or []
    assert len(hist) == len(acts) and all(
        hn == n and all(hp.get(key) == v for key, v in p.items())
        for (hn, hp), (n, p) in zip(hist, acts, strict=True)
    ), "output not in next input"
    out = []
    for m in msgs[idx[-1] + 1 :]:
        t = text_of(m)
        if m["role"] == "user" and not t.startswith(NOTTE_PROMPT):
            out.append(t.strip("\n"))
    return out


def notte_run(tr: Trace, steps: list[dict], counts: dict[str, int]) -> tuple[int, int]:
    step = n_tools = 0
    for i, s in enumerate(steps):
        nxt = steps[i + 1] if i + 1 < len(steps) else None
        calls = s["llm_calls"]
        for j, c in enumerate(calls):
            content = c["message_out"].get("content") or ""
            if j < len(calls) - 1:
                # the harness rejected this output and asked again: the next call's input
                # ends with "Error parsing LLM response: <validation error>, retrying"
                fb_text = text_of(calls[j + 1]["messages_in"][-1])
                assert fb_text.startswith("Error parsing LLM response"), "retry without error"
                span = tr.chat(step, [{"type": "text", "content": content}], error="invalid_output")
                span["attributes"].append(attr("loop_eval.harness_feedback", fb_text))
                counts["invalid_output"] += 1
                step += 1
                continue
            acts = notte_actions(content)
            assert acts, "the accepted output has no actions"
            fb = notte_feedback(nxt, acts)
            reports = [t for t in fb or [] if RESULT_LINE.match(t)]
            rest = [t for t in fb or [] if not RESULT_LINE.match(t)]
            # Falco stops a multi-action turn early (2 turns, 3 actions each, the last one got
            # no report): the actions without a report were not executed and get no span
            done = acts if fb is None else acts[: len(reports)]
            assert fb is None or 0 < len(reports) <= len(acts), "action reports do not match"
            parts = [{"type": "text", "content": content}]
            ids = []
            for name, params in done:
                ids.append(f"call_{n_tools + len(ids)}")
                parts.append(
                    {"type": "tool_call", "id": ids[-1], "name": name, "arguments": params}
                )
            span = tr.chat(step, parts)
            if len(done) < len(acts):
                skipped = [{n: p} for n, p in acts[len(done) :]]
                span["attributes"].append(attr("loop_eval.unexecuted_actions", json.dumps(skipped)))
                counts["unexecuted"] = counts.get("unexecuted", 0) + len(skipped)
            for k, (name, params) in enumerate(done):
                if fb is None:
                    result, err = "", None  # the run ended here (or its next input was cut)
                    counts["unobserved"] = counts.get("unobserved", 0) + 1
                else:
                    result = "\n\n".join([reports[k], *(rest if k == len(done) - 1 else [])])
                    m = RESULT_LINE.match(reports[k])
                    if m.group(1) == "❌":
                        err = "action_failed"
                    elif m.group(2) != name:
                        err = "action_replaced"  # e.g. the harness ran fallback_observe
                    elif name == "scrape" and any(
                        t.startswith("Scraping failed with error") for t in rest
                    ):
                        err = "scrape_failed"
                    else:
                        err = None
                tr.tool(step, ids[k], name, params, result, err)
                counts[err or "ok"] += 1
                n_tools += 1
                step += 1
    return step, n_tools


# ------------------------------------------------------------------ Convergence (proxy-lite)
def convergence_run(tr: Trace, steps: list[dict], counts: dict[str, int]) -> tuple[int, int]:
    step = n_tools = 0
    for i, s in enumerate(steps):
        assert len(s["llm_calls"]) == 1, "proxy-lite makes one call per step"
        out = s["llm_calls"][0]["message_out"]
        nxt = steps[i + 1]["llm_calls"][0]["messages_in"] if i + 1 < len(steps) else None
        # the next input ends with the page state after this step's actions
        state = text_of(nxt[-1]) if nxt else None
        if nxt:
            assert nxt[-1]["role"] == "user" and state.startswith("URL: "), "no page state"
        parts = [{"type": "text", "content": out.get("content") or ""}]
        calls = []
        for tc in out.get("tool_calls") or []:
            args = json.loads(tc["function"]["arguments"] or "{}")
            calls.append((f"call_{n_tools + len(calls)}", tc["function"]["name"], args))
            parts.append(
                {"type": "tool_call", "id": calls[-1][0], "name": calls[-1][1], "arguments": args}
            )
        tr.chat(step, parts)
        if not calls:
            step += 1
            continue
        for k, (cid, name, args) in enumerate(calls):
            # one page state per step: it follows the last call of the turn
            result = state if (state is not None and k == len(calls) - 1) else ""
            tr.tool(step, cid, name, args, result, None)
            counts["ok"] += 1
            n_tools += 1
            step += 1
    return step, n_tools


def convert_run(raw: str, agent: str, task_dir: str, k: int, counts: dict) -> tuple[dict, dict]:
    rel = rel_path(agent, task_dir, k)
    d = json.loads(read(raw, rel))
    assert d["run_id"] == k, f"{rel}: run_id {d['run_id']}"
    _, model, agent_name = AGENTS[agent]
    task_id = d["task"]["id"].removeprefix("webvoyager--")
    run_id = f"{SOURCE}/{agent}/{task_id}/try{k}"
    tr = Trace(run_id, model, SOURCE)
    c = counts.setdefault(agent, {"invalid_output": 0, "ok": 0})
    for key in ("action_failed", "action_replaced", "scrape_failed"):
        c.setdefault(key, 0)
    if agent == "Notte":
        n_steps, n_tools = notte_run(tr, d["steps"], c)
    else:
        n_steps, n_tools = convergence_run(tr, d["steps"], c)
    verdict = d["eval"]["eval"] if d["eval"] else None
    success = {"success": True, "failure": False}.get(verdict)
    if d["success"]:
        exit_status = "agent_done"
    elif len(d["steps"]) >= MAX_STEPS:
        exit_status = "max_steps"
    else:
        exit_status = "agent_stopped"
    task = f"{d['task']['question']} (website: {d['task']['url']})"
    root_attrs = agent_root_attrs(
        agent=f"{agent_name} (WebVoyager30)",
        run_id=run_id,
        model=model,
        task=task,
        source=SOURCE,
        exit_status=exit_status,
        repo=REPO,
        commit=COMMIT,
        path=f"{BASE}/{rel}",
    )
    req = agent_request(agent_name, SOURCE, tr.finish(n_steps, root_attrs))
    meta = {
        "run_id": run_id,
        "source": SOURCE,
        "repo": REPO,
        "commit": COMMIT,
        "path": f"{BASE}/{rel}",
        "model": model,
        "agent": agent,
        "task_id": task_id,
        "website": d["task"]["website_name"],
        "try": k,
        "outcome": {
            "eval": verdict,
            "agent_success": d["success"],
            "exit_status": exit_status,
            "n_agent_steps": len(d["steps"]),
            "duration_s": round(d["duration_in_s"], 1),
            "success": success,
        },
        "n_steps": n_steps,
        "n_tool_calls": n_tools,
    }
    return req, meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--raw", required=True, help="bare git dir of open-operator-evals, or dir")
    ap.add_argument("--out", required=True, help="output directory (e.g. /work/corpus-extra)")
    a = ap.parse_args()
    counts: dict[str, dict[str, int]] = {}
    per: dict[str, list[int]] = {}

    def gen() -> Iterator[tuple[dict, dict]]:
        for agent, task_dir, k in list_runs(a.raw):
            req, meta = convert_run(a.raw, agent, task_dir, k, counts)
            p = per.setdefault(agent, [0, 0, 0, 0])
            if meta["outcome"]["n_agent_steps"] == 0:
                p[3] += 1  # the try recorded no step at all (crashed or timed out): skipped
                continue
            p[0] += 1
            p[1] += meta["outcome"]["success"] is True
            p[2] += meta["outcome"]["success"] is None
            yield req, meta

    gz, metas = write_source(a.out, SOURCE, gen())
    for agent, (n, ok, unk, skipped) in per.items():
        print(
            f"{SOURCE}/{agent}: {n} runs, {ok} judged success, {unk} not judged/unknown, "
            f"{skipped} empty tries skipped; spans: {counts[agent]}"
        )
    print(f"{SOURCE}: {len(metas)} runs -> {gz}")


if __name__ == "__main__":
    main()
