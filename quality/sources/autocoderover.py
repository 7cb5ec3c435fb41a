"""Convert the AutoCodeRover SWE-bench Lite run (nus-apr/auto-code-rover, acr-run-1) to OTLP traces.

Why: AutoCodeRover is a program-driven repair harness, unlike the corpus' shell and ReAct agents.
The model never runs a command: in each round it names code-search API calls in prose
(``search_class``, ``search_method_in_class``, ``search_code_in_file``, ...), a proxy model turns
them into JSON, the harness runs them on the repository's AST index and returns the results;
the harness then asks for an analysis and for the next calls or the bug locations. Once the
locations resolve (or after the round limit) the harness calls ``write_patch``: the model writes
a patch, the harness tries to apply it to the program and, up to 3 times, tells it why it did not
apply. The authors committed every task directory of the run (conversation per round, the calls
of each round, the harness log with every call's result, the patch attempts' statuses) and the
SWE-bench evaluation of the patches, so every run has a real outcome.

Usage: python3 quality/sources/autocoderover.py --raw RAW --out DIR
  RAW is a bare git dir of nus-apr/auto-code-rover (read at COMMIT with ``git show``), or a
  directory holding an extracted copy of its ``results/acr-run-1/`` tree under the same path.

Writes DIR/autocoderover.otlp.jsonl.gz and DIR/autocoderover.runs.jsonl (same order, instance
id order). Stdlib only; the OTLP span helpers are shared with react_webshop.py.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gitraw import git_names, git_show
from react_webshop import (  # shared OTLP shape
    Trace,
    agent_request,
    agent_root_attrs,
    attr,
    write_source,
)

SOURCE = "autocoderover"
REPO = "nus-apr/auto-code-rover"
COMMIT = "3536ac292e3062ffb3f6e98457958e2b803228d6"  # newest; acr-run-1 last changed in da4c043
RUN = "results/acr-run-1"
MODEL = "gpt-4-0125-preview"  # acr-run-1/stats.json and every task's cost.json
AGENT = "AutoCodeRover (SWE-bench Lite)"
# the task folders' parents: the harness's own sort of the final patch status
CATEGORIES = (
    "applicable_patch",
    "matched_but_empty_diff",
    "matched_but_empty_origin",
    "raw_patch_but_unmatched",
    "raw_patch_but_unparsed",
)
ANALYZE = "Let's analyze collected context first"
NOT_VALID = (
    "The search API calls seem not valid. "
    "Please check the arguments you give carefully and try again."
)
NOT_PRECISE = (
    "The buggy locations is not precise. You may need to check whether the arguments are "
    "correct and search more information."
)
PATCH_PROMPT = "Write a patch for the issue"
DISPATCH = " Result of dispatch_intent: "


class Raw:
    """Files at COMMIT from a bare git dir, or from an extracted tree."""

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.git = os.path.exists(os.path.join(raw, "HEAD")) and os.path.isdir(
            os.path.join(raw, "objects")
        )

    def ls(self, rel: str) -> list[str]:
        if not self.git:
            return sorted(os.listdir(os.path.join(self.raw, rel)))
        return sorted(git_names(self.raw, COMMIT, rel))

    def read(self, rel: str) -> str:
        if not self.git:
            with open(os.path.join(self.raw, rel), encoding="utf-8") as f:
                return f.read()
        return git_show(self.raw, COMMIT, rel)


def last_numbered(files: list[str], prefix: str) -> str:
    """The highest-numbered ``<prefix><n>.json`` of a task folder (the files are cumulative)."""
    nums = [int(f[len(prefix) : -len(".json")]) for f in files if f.startswith(prefix)]
    assert nums, f"no {prefix}*.json"
    return f"{prefix}{max(nums)}.json"


def dispatch_results(log: str) -> list[tuple[str, bool]]:
    """Every call's (tool output, ok) from the harness log, in call order: the log prints the
    repr of ``dispatch_intent``'s (output, summary, ok) tuple on one line."""
    out = []
    for line in log.splitlines():
        if DISPATCH in line:
            output, _summary, ok = ast.literal_eval(line.split(DISPATCH, 1)[1])
            out.append((output, bool(ok)))
    return out


def convert_task(raw: Raw, cat: str, folder: str, resolved: set[str], applied: set[str]):
    """One task folder -> (ExportTraceServiceRequest, index line)."""
    rel = f"{RUN}/{cat}/{folder}"
    files = raw.ls(rel)
    layers = json.loads(raw.read(f"{rel}/tool_call_layers.json"))
    conv = json.loads(raw.read(f"{rel}/{last_numbered(files, 'conversation_round_')}"))
    wp = json.loads(raw.read(f"{rel}/{last_numbered(files, 'debug_agent_write_patch_')}"))
    statuses = json.loads(raw.read(f"{rel}/extract_status.json"))["extract_status"]
    results = dispatch_results(raw.read(f"{rel}/info.log"))
    meta_json = json.loads(raw.read(f"{rel}/meta.json"))
    iid = meta_json["task_info"]["instance_id"]
    assert folder.startswith(iid + "_"), folder
    run_id = f"{SOURCE}/{iid}"

    flat = [c for layer in layers for c in layer]
    assert len(flat) == len(results), f"{run_id}: {len(flat)} calls, {len(results)} results"
    assert flat[-1]["func_name"] == "write_patch" and layers[-1] == [flat[-1]], run_id
    assert all(c["call_ok"] == ok for c, (_, ok) in zip(flat, results, strict=True)), run_id
    assert conv[0]["role"] == "system" and conv[1]["content"].startswith("<issue>"), run_id
    issue = conv[1]["content"]

    tr = Trace(run_id, MODEL, SOURCE)
    step = 0
    k = 0  # index into flat / results
    rnd = 0  # retrieval round (one model decision each)
    n_calls = n_err = n_invalid = 0
    for i, m in enumerate(conv):
        if m["role"] != "assistant":
            continue
        analysis = conv[i - 1]["role"] == "user" and conv[i - 1]["content"] == ANALYZE
        calls = [] if analysis else layers[rnd]
        if not analysis:
            rnd += 1
        nxt = conv[i + 1]["content"] if i + 1 < len(conv) else ""
        feedback = nxt if nxt in (NOT_VALID, NOT_PRECISE) else None
        error = "invalid_api_calls" if feedback == NOT_VALID else None
        assert not (error and calls), f"{run_id}: calls in a round the harness called invalid"
        ids = [f"call_{k + j}" for j in range(len(calls))]
        parts = [{"type": "text", "content": m["content"]}] + [
            {"type": "tool_call", "id": cid, "name": c["func_name"], "arguments": c["arguments"]}
            for cid, c in zip(ids, calls, strict=True)
        ]
        span = tr.chat(step, parts, error=error)
        if feedback:
            span["attributes"].append(attr("loop_eval.user_reply", feedback))
        n_invalid += error is not None
        if not calls:
            step += 1
            continue
        for cid, c in zip(ids, calls, strict=True):
            output, ok = results[k]
            k += 1
            err = None if ok else "search_failed"
            tr.tool(step, cid, c["func_name"], c["arguments"], output, err)
            n_calls += 1
            n_err += err is not None
            step += 1
    assert rnd == len(layers) - 1 and k == len(flat) - 1, f"{run_id}: rounds do not match"

    # write_patch: the harness's last call, expanded into its attempts (a reply + an apply each)
    p = [
        j for j, m in enumerate(wp) if m["role"] == "user" and m["content"].startswith(PATCH_PROMPT)
    ]
    assert len(p) == 1, run_id
    tail = wp[p[0] + 1 :]
    assert [m["role"] for m in tail] == ["assistant", "user"] * len(statuses), run_id
    for j, status in enumerate(statuses):
        reply, feedback = tail[2 * j]["content"], tail[2 * j + 1]["content"]
        cid = f"call_{k + j}"
        args = {"patch": reply}
        tr.chat(
            step,
            [
                {"type": "text", "content": reply},
                {"type": "tool_call", "id": cid, "name": "write_patch", "arguments": args},
            ],
        )
        err = None if status == "APPLICABLE_PATCH" else status.lower()
        tr.tool(step, cid, "write_patch", args, feedback, err)
        n_calls += 1
        n_err += err is not None
        step += 1
    final = results[-1][0]
    assert (statuses[-1] == "APPLICABLE_PATCH") == final.startswith("Extracted a patch"), run_id
    assert (cat == "applicable_patch") == (statuses[-1] == "APPLICABLE_PATCH"), run_id

    success = iid in resolved
    root_attrs = agent_root_attrs(
        agent=AGENT,
        run_id=run_id,
        model=MODEL,
        task=issue,
        source=SOURCE,
        exit_status=cat,
        repo=REPO,
        commit=COMMIT,
        path=rel,
    )
    req = agent_request(AGENT, SOURCE, tr.finish(step, root_attrs))
    meta = {
        "run_id": run_id,
        "source": SOURCE,
        "repo": REPO,
        "commit": COMMIT,
        "path": rel,
        "model": MODEL,
        "instance_id": iid,
        "outcome": {
            "patch_status": cat,
            "extract_status": statuses,
            "applied": iid in applied,
            "resolved": success,
            "n_rounds": rnd,
            "n_invalid_rounds": n_invalid,
            "n_errors": n_err,
            "success": success,
        },
        "n_steps": step,
        "n_tool_calls": n_calls,
    }
    return req, meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--raw", required=True, help="bare git dir of nus-apr/auto-code-rover, or dir")
    ap.add_argument("--out", required=True, help="output directory (e.g. /work/corpus-extra)")
    a = ap.parse_args()
    raw = Raw(a.raw)
    report = json.loads(raw.read(f"{RUN}/new_eval_results/report.json"))
    resolved, applied = set(report["resolved"]), set(report["applied"])
    tasks = raw.read(f"{RUN}/tasks.txt").split()
    folders = []
    for cat in CATEGORIES:
        for folder in raw.ls(f"{RUN}/{cat}"):
            folders.append((folder.rsplit("_", 2)[0], cat, folder))
    folders.sort()
    assert [f[0] for f in folders] == sorted(tasks), "task folders != tasks.txt"
    gz, metas = write_source(
        a.out,
        SOURCE,
        (convert_task(raw, cat, folder, resolved, applied) for _iid, cat, folder in folders),
    )
    n, ok = len(metas), sum(meta["outcome"]["success"] for meta in metas)
    assert ok == len(resolved), f"{ok} resolved runs, report has {len(resolved)}"
    print(f"{SOURCE}: {n} runs, {ok} resolved -> {gz}")


if __name__ == "__main__":
    main()
