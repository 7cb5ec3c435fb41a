"""Convert MINT's ALFWorld interaction logs (xingyaoww/mint-bench) to OTLP JSON traces.

Why: a code-as-action harness, unlike every source already converted. MINT (Wang et al.,
"MINT: Evaluating LLMs in Multi-turn Interaction with Tools and Language Feedback", 2023)
gives the model an IPython REPL in which ALFWorld's actions are Python functions (``goto``,
``take_from``, ``put``, ``open_receptacle``, ``toggle``, ``heat``, ``cool``, ``clean``, ``use``,
``look``, ``inventory``, ...). Each turn the model writes ``<thought>`` text and either an
``<execute>`` cell (run in the REPL: one cell may loop over twenty receptacles) or a
``<solution>``; the harness answers ``Observation:`` with the cell's printed output and a count
of the turns left. A run has at most 5 turns (at most 2 solutions) and ends as soon as the
ALFWorld game is won. The repository commits every run's ``state.history`` (the exact messages),
``success`` and ``terminate_reason``; failed runs are kept.

Four models, no language feedback (``F=None``), 5 turns (``max5_p2+tool+cd``), the 134 ALFWorld
eval games each: gpt-4-0613, gpt-3.5-turbo-0613, claude-2, Llama-2-70b-chat-hf.

Usage: python3 quality/sources/mint_alfworld.py --raw RAW --out DIR
  RAW is a bare git dir of xingyaoww/mint-bench holding COMMIT (read with ``git show``), or a
  directory holding its ``data/outputs/`` tree (or that ``outputs`` folder itself).

Writes DIR/mint_alfworld.otlp.jsonl.gz and DIR/mint_alfworld.runs.jsonl (same order: model,
then the file's own order). Stdlib only; the OTLP span helpers are shared with react_webshop.py.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gitraw import git_show, is_git
from react_webshop import (  # shared OTLP shape
    Trace,
    agent_request,
    agent_root_attrs,
    attr,
    write_source,
)

SOURCE = "mint_alfworld"
REPO = "xingyaoww/mint-bench"
COMMIT = "3f7f12c10bf763be1e6dbdeb42feb57624121f61"  # 2024-06-04 HEAD (files added in ba3dd44)
SETTING = "F=None/max5_p2+tool+cd"
MODELS = ["gpt-4-0613", "gpt-3.5-turbo-0613", "claude-2", "Llama-2-70b-chat-hf"]
AGENT = "MINT tool-use agent (ALFWorld)"
MAX_STEPS = 5  # max5: 5 turns in all; p2: at most 2 solutions
# mint/envs/general_env.py: the reply to a turn the harness could not parse
INVALID_INPUT = "Observation:\nI don't understand your input. \n"
EXECUTE = re.compile(r"<execute>(.*?)</execute>", re.S)
SOLUTION = re.compile(r"<solution>(.*?)</solution>", re.S)
# IPython's own exception reports (colors="NoColor"), as the REPL prints them into the output
TRACEBACK = re.compile(r"^-{75}\n(\S+) +Traceback \(most recent call last\)$", re.M)
SYNTAX = re.compile(
    r"^ *Cell In\[\d+\], line \d+\n(?:.*\n)*?(SyntaxError|IndentationError|TabError): ", re.M
)


def rel_path(model: str) -> str:
    return f"data/outputs/{model}/{SETTING}/decision_making/alfworld/results.jsonl"


def read(raw: str, rel: str) -> str:
    if is_git(raw):
        return git_show(raw, COMMIT, rel)
    sub = rel.removeprefix("data/outputs/")
    for base in (os.path.join(raw, "data", "outputs"), raw):
        p = os.path.join(base, sub)
        if os.path.exists(p):
            with open(p, encoding="utf-8") as f:
                return f.read()
    raise FileNotFoundError(rel)


def parse_turn(value: str) -> tuple[str, str | None]:
    """What the harness made of one model output (mint/agents/base.py lm_output_to_action and
    GeneralEnv.parse_action): ("solution", answer) if it contains ``<solution>``, else
    ("execute", code); the text is None where the tags hold nothing (the harness then replies
    INVALID_INPUT_MESSAGE)."""
    lm_output = "\n" + value + "\n"
    if "<solution>" in value:
        ans = "\n".join(i.strip() for i in SOLUTION.findall(lm_output))
        return "solution", ans or None
    code = "\n".join(i.strip() for i in EXECUTE.findall(lm_output))
    return "execute", code or None


def exec_error(result: str) -> str | None:
    """error.type of an executed cell: the REPL printed an IPython exception report."""
    if TRACEBACK.search(result):
        return "python_exception"
    if SYNTAX.search(result):
        return "syntax_error"
    return None


def convert_run(model: str, rel: str, rec: dict, counts: dict) -> tuple[dict, dict]:
    st, task = rec["state"], rec["task"]
    hist = st["history"]
    task_id = task["task_id"]
    run_id = f"{SOURCE}/{model}/{task_id}"
    assert hist[0]["role"] == "user" and task["prompt"] in hist[0]["content"], run_id
    roles = [m["role"] for m in hist]
    assert all(r == ("assistant" if i % 2 else "user") for i, r in enumerate(roles)), run_id
    n_turns = len(hist) // 2
    acts = st["agent_action_count"]
    assert sum(acts.values()) == n_turns, f"{run_id}: {acts} vs {n_turns} turns"
    reason = st["terminate_reason"]
    # the harness does not log the observation of the turn that finished the run
    if roles[-1] == "assistant":
        assert reason in ("task_success", "max_steps", "max_propose_steps"), run_id
    else:
        assert reason == "error" and st["error"], run_id  # the next model call itself failed

    tr = Trace(run_id, model, SOURCE)
    c = counts.setdefault(model, {})
    n_tools = n_invalid = 0
    for step in range(n_turns):
        content = hist[2 * step + 1]["content"]
        value = content.removeprefix("Assistant:\n")
        value = value[:-1] if value.endswith("\n") else value
        reply = hist[2 * step + 2]["content"] if 2 * step + 2 < len(hist) else None
        kind, text = parse_turn(value)
        invalid = text is None
        if reply is not None:
            assert invalid == reply.startswith(INVALID_INPUT), f"{run_id} turn {step}: parse"
        if invalid and kind == "execute":
            # no code between <execute> tags: nothing ran, the harness asked again
            span = tr.chat(step, [{"type": "text", "content": value}], error="invalid_action")
            if reply is not None:
                span["attributes"].append(attr("loop_eval.harness_feedback", reply))
            n_invalid += 1
            c["invalid_action"] = c.get("invalid_action", 0) + 1
            continue
        args = {"code": text} if kind == "execute" else {"answer": text if text else ""}
        cid = f"call_{n_tools}"
        tr.chat(
            step,
            [
                {"type": "text", "content": value},
                {"type": "tool_call", "id": cid, "name": kind, "arguments": args},
            ],
        )
        if invalid:
            err = "invalid_action"  # an empty <solution>: counted as a proposal, not checked
        elif kind == "execute" and reply is not None:
            err = exec_error(reply)
        else:
            err = None
        span = tr.tool(step, cid, kind, args, reply or "", err)
        if reply is None:
            span["attributes"].append(attr("loop_eval.result_not_logged", True))
            c["not_logged"] = c.get("not_logged", 0) + 1
        key = f"{kind}:{err or 'ok'}"
        c[key] = c.get(key, 0) + 1
        n_tools += 1
    assert n_invalid == acts["invalid_action"], f"{run_id}: invalid count"

    exit_status = reason
    if reason == "error":
        exit_status = f"error ({st['error'].splitlines()[0]})"
    root_attrs = agent_root_attrs(
        agent=AGENT,
        run_id=run_id,
        model=model,
        task=task["prompt"],
        source=SOURCE,
        exit_status=exit_status,
        repo=REPO,
        commit=COMMIT,
        path=rel,
    )
    req = agent_request(AGENT, SOURCE, tr.finish(n_turns, root_attrs))
    meta = {
        "run_id": run_id,
        "source": SOURCE,
        "repo": REPO,
        "commit": COMMIT,
        "path": rel,
        "model": model,
        "task_id": task_id,
        "task_type": task["metadata"]["task_type"],
        "outcome": {
            "success": bool(st["success"]),
            "terminate_reason": reason,
            "agent_action_count": acts,
        },
        "n_steps": n_turns,
        "n_tool_calls": n_tools,
    }
    return req, meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--raw", required=True, help="bare git dir of mint-bench, or data/outputs dir")
    ap.add_argument("--out", required=True, help="output directory (e.g. /work/corpus-extra)")
    a = ap.parse_args()
    counts: dict[str, dict[str, int]] = {}
    per: dict[str, list[int]] = {}

    def gen() -> Iterator[tuple[dict, dict]]:
        for model in MODELS:
            rel = rel_path(model)
            seen = set()
            for line in read(a.raw, rel).splitlines():
                if not line.strip():
                    continue
                req, meta = convert_run(model, rel, json.loads(line), counts)
                assert meta["run_id"] not in seen, meta["run_id"]
                seen.add(meta["run_id"])
                p = per.setdefault(model, [0, 0])
                p[0] += 1
                p[1] += meta["outcome"]["success"]
                yield req, meta

    gz, metas = write_source(a.out, SOURCE, gen())
    for model, (n, ok) in per.items():
        print(
            f"{SOURCE}/{model}: {n} runs, {ok} success; spans: {dict(sorted(counts[model].items()))}"
        )
    print(f"{SOURCE}: {len(metas)} runs -> {gz}")


if __name__ == "__main__":
    main()
