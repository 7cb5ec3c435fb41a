"""Convert the InterCode-CTF runs (princeton-nlp/intercode, GPT-4, 10 turns) to OTLP JSON traces.

Why: a terminal agent on capture-the-flag tasks, unlike the development corpus' harnesses. The
InterCode "try again" loop (``experiments/eval_n_turn.py --env ctf --template ctf --model gpt-4
--max_turns 10 --dialogue_limit 5``) gives the model a picoCTF task in a Docker container; every
reply is run with ``/bin/bash -c`` (or as a ``python3 -c`` one-liner), except ``submit <flag>``,
which the harness checks against the gold flag, and ``skip``. The model sees the last 5 messages
only, and each output cut to 1,000 characters. The episode ends on the correct flag, on ``skip``
or after 10 turns. The authors committed the log of the whole run, one record per task, with
every action, observation, reward and exit flag, so every run has a real outcome.

Usage: python3 quality/sources/intercode_ctf.py --raw RAW --out DIR
  RAW is a bare git dir of princeton-nlp/intercode (read with ``git show COMMIT:PATH``), or a
  directory holding extracted copies of ``ic_ctf_multiturn_gpt-4_10_turns.json`` and
  ``ic_ctf.json``.

Writes DIR/intercode_ctf.otlp.jsonl.gz and DIR/intercode_ctf.runs.jsonl (same order, task order).
Stdlib only; the OTLP span helpers are shared with react_webshop.py.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gitraw import git_show, is_git
from react_webshop import Trace, agent_request, agent_root_attrs, write_source  # shared OTLP shape

SOURCE = "intercode_ctf"
REPO = "princeton-nlp/intercode"
COMMIT = "c3e46d827cfc9d4c704ec078f7abf9f41e3191d8"  # newest; the log last changed in 060f6a0
PATH = "data/results/ctf/ic_ctf_multiturn_gpt-4_10_turns.json"  # blob 3ec5647
DATA = "data/ctf/ic_ctf.json"  # blob 94528a2: task id -> query, picoCTF source, tags
MODEL = "gpt-4"  # scripts/expr_multi_turn.sh's CTF call, and the log's file name
AGENT = "InterCode CTF (try-again, GPT-4)"
MAX_TURNS = 10
WRONG_FLAG = "Submitted flag is incorrect. Keep trying!"


def read(raw: str, rel: str) -> str:
    """A file at COMMIT from the bare git dir, or an extracted copy (by base name) in RAW."""
    if is_git(raw):
        return git_show(raw, COMMIT, rel)
    with open(os.path.join(raw, os.path.basename(rel)), encoding="utf-8") as f:
        return f.read()


def classify(action: str) -> tuple[str, dict]:
    """The harness's own reading of a reply: submit, skip, or a shell command."""
    if action.startswith("submit"):
        # ic_env.step: startswith("submit"); CTFEnv.get_reward takes the second word as the flag
        parts = action.split(" ")
        return "submit", {"flag": parts[1] if len(parts) > 1 else ""}
    if action == "skip":  # eval_n_turn compares exactly (ic_env.step too)
        return "skip", {}
    return "bash", {"command": action}


def convert_run(key: str, rec: dict, task: dict) -> tuple[dict, dict]:
    """One record of the log -> (ExportTraceServiceRequest, index line)."""
    tid = int(key)
    run_id = f"{SOURCE}/task{tid:03d}"
    th = rec["turn_history"]
    acts, obss, rews, oks = th["actions"], th["observations"], th["rewards"], th["valid_action"]
    assert len(acts) == len(obss) == len(rews) == len(oks) == rec["summary"]["turns_taken"]
    # the log's own query is the task text; ic_ctf.json only adds tags and the picoCTF source
    # (task 20's query was edited after the run: a new netcat host)
    tr = Trace(run_id, MODEL, SOURCE)
    n_err = n_submit = 0
    for step, (action, obs, reward, ok) in enumerate(zip(acts, obss, rews, oks, strict=False)):
        tool, args = classify(action)
        call_id = f"call_{step}"
        err = None
        result = obs
        if tool == "submit":
            n_submit += 1
            if reward == 1:
                # the run ends here; the logged observation is the env's previous output,
                # which the agent never sees again, so the call's own result is empty
                result = ""
            else:
                assert obs == WRONG_FLAG, f"{run_id}: wrong submit without the harness reply"
                err = "incorrect_flag"
        elif tool == "bash" and ok is False:
            err = {"Malformed command": "malformed_command", "Command timed out": "timeout"}.get(
                obs, "nonzero_exit"
            )
        tr.chat(
            step,
            [
                {"type": "text", "content": action},
                {"type": "tool_call", "id": call_id, "name": tool, "arguments": args},
            ],
        )
        tr.tool(step, call_id, tool, args, result, err)
        n_err += err is not None
    n = len(acts)
    success = rec["summary"]["max_reward"] == 1
    last_tool = classify(acts[-1])[0]
    if success:
        assert last_tool == "submit" and rews[-1] == 1
        exit_status = "submitted"
    elif last_tool == "skip":
        exit_status = "skipped"
    else:
        assert n == MAX_TURNS, f"{run_id}: ended early without a flag or a skip"
        exit_status = "turn_limit"
    root_attrs = agent_root_attrs(
        agent=AGENT,
        run_id=run_id,
        model=MODEL,
        task=f"Task: {rec['query']}",
        source=SOURCE,
        exit_status=exit_status,
        repo=REPO,
        commit=COMMIT,
        path=PATH,
    )
    req = agent_request(AGENT, SOURCE, tr.finish(n, root_attrs))
    meta = {
        "run_id": run_id,
        "source": SOURCE,
        "repo": REPO,
        "commit": COMMIT,
        "path": PATH,
        "model": MODEL,
        "task_id": tid,
        "tags": task.get("tags", []),
        "picoctf": task.get("source"),
        "outcome": {
            "reward": rec["summary"]["max_reward"],
            "exit_status": exit_status,
            "n_submissions": n_submit,
            "n_errors": n_err,
            "success": success,
        },
        "n_steps": n,
        "n_tool_calls": n,
    }
    return req, meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--raw", required=True, help="bare git dir of princeton-nlp/intercode, or dir")
    ap.add_argument("--out", required=True, help="output directory (e.g. /work/corpus-extra)")
    a = ap.parse_args()
    log = json.loads(read(a.raw, PATH))
    tasks = json.loads(read(a.raw, DATA))
    assert all(t["task_id"] == i for i, t in enumerate(tasks))
    gz, metas = write_source(
        a.out, SOURCE, (convert_run(key, log[key], tasks[int(key)]) for key in sorted(log, key=int))
    )
    ok = sum(meta["outcome"]["success"] for meta in metas)
    print(f"{SOURCE}: {len(metas)} runs, {ok} with the correct flag -> {gz}")


if __name__ == "__main__":
    main()
