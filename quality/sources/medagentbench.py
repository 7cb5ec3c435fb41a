"""Convert the MedAgentBench runs (AgentBench harness, FHIR REST API agent) to OTLP JSON traces.

Why: an API-calling harness unlike the development corpus' four. The agent answers clinical
questions and files orders against a FHIR server by writing one text action per turn:
``GET <url>``, ``POST <url>\\n<json payload>`` or ``FINISH([answers])``. The AgentBench
task server replies with the HTTP response (or an error) and grades the FINISH answer
afterwards. The runs were committed to THUDM/AgentBench in pull request #171
(``outputs/Jan17v1/<model>/medagentbench-std/``) and removed before it was merged; the
commit stays reachable through ``refs/pull/171/head``.

Usage: python3 quality/sources/medagentbench.py --raw RAW --out DIR
  RAW is a bare git dir of THUDM/AgentBench holding COMMIT (``git fetch origin
  pull/171/head``), or a directory laid out like ``outputs/Jan17v1/`` at that commit
  (``<model>/medagentbench-std/{runs.jsonl,overall.json}``).

Writes DIR/medagentbench.otlp.jsonl.gz and DIR/medagentbench.runs.jsonl (same order).
Stdlib only; the OTLP span helpers are shared with react_webshop.py.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gitraw import git_show_or_none, is_git
from react_webshop import Trace, agent_request, agent_root_attrs, write_source  # shared OTLP shape

SOURCE = "medagentbench"
REPO = "THUDM/AgentBench"
COMMIT = "7429d23952259fc2f5eb7f643cc9c526ff5fe122"  # "add models", parent of PR #171's "remove"
BASE = "outputs/Jan17v1"
DATA = "data/medagentbench/test_data_v1.json"  # task ids (index -> "task10_8")
AGENT = "MedAgentBench (AgentBench FHIR agent)"
# config name -> model id, from configs/agents/api_agents.yaml at COMMIT
MODELS = {
    "deepseekv3": "deepseek-ai/DeepSeek-V3",
    "gemini-2.0": "google/gemini-2.0-flash-exp",
    "gpt-4o-mini": "gpt-4o-mini",
    "gpt-4o": "gpt-4o-2024-11-20",
    "llama-3.3": "meta-llama/Llama-3.3-70B-Instruct-Turbo",
}


def read(raw: str, rel: str) -> str | None:
    """A file at COMMIT from the bare git dir, or from an extracted outputs/Jan17v1 copy."""
    if is_git(raw) or raw.endswith(".git"):
        return git_show_or_none(raw, COMMIT, rel)
    local = rel[len(BASE) + 1 :] if rel.startswith(BASE + "/") else os.path.basename(rel)
    path = os.path.join(raw, local)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return f.read()


def harness_action(content: str) -> str:
    """The text the harness parses: it strips ``` fences (for Gemini) before matching."""
    return content.strip().replace("```tool_code", "").replace("```", "").strip()


def convert_run(model_key: str, run: dict, graded: str | None, task_id: str) -> tuple[dict, dict]:
    """One runs.jsonl line -> (ExportTraceServiceRequest, index line)."""
    model = MODELS[model_key]
    run_id = f"{SOURCE}/{model_key}/{task_id}"
    out = run["output"]
    hist = out["history"]
    tr = Trace(run_id, model, SOURCE)
    prompt = hist[0]["content"]
    task_text = prompt[prompt.find("Context:") :] if "Context:" in prompt else prompt
    step = n_tools = n_err = 0
    i = 1
    while i < len(hist):
        msg = hist[i]
        assert msg["role"] == "agent", f"{run_id}: expected an agent turn at {i}"
        reply = (
            hist[i + 1]["content"] if i + 1 < len(hist) and hist[i + 1]["role"] == "user" else None
        )
        r = harness_action(msg["content"])
        call_id = f"call_{n_tools}"
        if r.startswith("GET"):
            tool, args = "GET", {"url": r[3:].strip()}
            err = (
                "http_error"
                if (reply or "").startswith("Error in sending the GET request")
                else None
            )
        elif r.startswith("POST"):
            first, _, payload = r.partition("\n")
            tool, args = "POST", {"url": first[4:].strip(), "payload": payload}
            err = "invalid_payload" if (reply or "") == "Invalid POST request" else None
        elif r.startswith("FINISH("):
            tool, args, err = "FINISH", {"answer": r[len("FINISH(") : -1]}, None
        else:
            # the harness ends the run here: status "agent invalid action", no reply
            tr.chat(step, [{"type": "text", "content": msg["content"]}], error="invalid_action")
            n_err += 1
            step += 1
            i += 1
            continue
        tr.chat(
            step,
            [
                {"type": "text", "content": msg["content"]},
                {"type": "tool_call", "id": call_id, "name": tool, "arguments": args},
            ],
        )
        # FINISH gets no reply: the run ends and is graded offline
        tr.tool(step, call_id, tool, args, reply or "", err)
        n_err += err is not None
        n_tools += 1
        step += 1
        i += 2 if reply is not None else 1
    status = graded or out["status"]
    if graded is None:
        success = False if out["status"] == "agent invalid action" else None
    else:
        success = graded == "completedCorrect"
    root_attrs = agent_root_attrs(
        agent=AGENT,
        run_id=run_id,
        model=model,
        task=task_text,
        source=SOURCE,
        exit_status=out["status"],
        repo=REPO,
        commit=COMMIT,
        path=f"{BASE}/{model_key}/medagentbench-std/runs.jsonl",
    )
    req = agent_request(AGENT, SOURCE, tr.finish(step, root_attrs))
    meta = {
        "run_id": run_id,
        "source": SOURCE,
        "repo": REPO,
        "commit": COMMIT,
        "path": f"{BASE}/{model_key}/medagentbench-std/runs.jsonl",
        "model": model,
        "index": run["index"],
        "task_id": task_id,
        "outcome": {
            "status": status,
            "graded": graded is not None,
            "result": out.get("result"),
            "n_errors": n_err,
            "success": success,
        },
        "n_steps": step,
        "n_tool_calls": n_tools,
    }
    return req, meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--raw", required=True, help="bare git dir of THUDM/AgentBench, or outputs/Jan17v1 copy"
    )
    ap.add_argument("--out", required=True, help="output directory (e.g. /work/corpus-extra)")
    ap.add_argument("--data", help="test_data_v1.json, if --raw is not a git dir")
    a = ap.parse_args()
    data_text = read(a.raw, DATA)
    if data_text is None:
        with open(a.data, encoding="utf-8") as f:
            data_text = f.read()
    task_ids = [t["id"] for t in json.loads(data_text)]
    counts: dict[str, list[int]] = {}

    def runs() -> Iterator[tuple[dict, dict]]:
        for key in sorted(MODELS):
            runs_text = read(a.raw, f"{BASE}/{key}/medagentbench-std/runs.jsonl")
            overall_text = read(a.raw, f"{BASE}/{key}/medagentbench-std/overall.json")
            graded = {}
            if overall_text:
                for rr in json.loads(overall_text)["custom"]["raw_results"]:
                    graded[rr["index"]] = rr["status"]
            runs = [json.loads(line) for line in runs_text.splitlines() if line.strip()]
            runs.sort(key=lambda r: r["index"])  # the file is in completion order
            c = counts.setdefault(key, [0, 0, 0])
            for run in runs:
                req, meta = convert_run(
                    key, run, graded.get(run["index"]) if graded else None, task_ids[run["index"]]
                )
                c[0] += 1
                c[1] += meta["outcome"]["success"] is True
                c[2] += meta["outcome"]["success"] is None
                yield req, meta

    gz, _ = write_source(a.out, SOURCE, runs())
    for key, (n, ok, unk) in counts.items():
        print(f"{SOURCE}/{key}: {n} runs, {ok} correct, {unk} not graded")
    print(f"-> {gz}")


if __name__ == "__main__":
    main()
