"""Convert the BALROG TextWorld runs (balrog-ai/experiments leaderboard submissions) to OTLP JSON.

Why: a text-game agent, unlike every harness already converted. BALROG (balrog-ai/BALROG) gives
an LLM the rules of a TextWorld game and the last 16 observation/action pairs in chat form, and
sends the model's completion verbatim to TextWorld's ``env.step`` as a game command (TextWorld's
``language_action_space`` accepts any text, so nothing is substituted). The game answers with
its parser's text (``You can't go that way.``, ``That's not a verb I recognise.``, a room
description, ...). Three tasks: ``coin_collector`` (find and take the coin in a maze),
``treasure_hunter`` (find an object, often behind locked doors) and ``the_cooking_game`` (find
the recipe, gather, cut and cook the ingredients, prepare and eat the meal); at most 80 steps.
The leaderboard repository commits, per model submission, one CSV per episode (every step's
action, reasoning, resulting observation, reward and done flag) and one JSON per episode (the
harness's ``progression``, ``episode_return``, ``num_steps``, client and agent config), so every
run has its own outcome and nothing was filtered.

Usage: python3 quality/sources/balrog_textworld.py --raw RAW --out DIR
  RAW is a bare git dir of balrog-ai/experiments holding COMMIT (read with ``git show``), or a
  directory laid out like its ``submissions/`` folder (``LLM/<submission>/textworld/<task>/
  <task>_run_NN.{csv,json}``).

Writes DIR/balrog_textworld.otlp.jsonl.gz and DIR/balrog_textworld.runs.jsonl (same order:
submission, task, episode). Stdlib only; the OTLP span helpers are shared with react_webshop.py.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import sys
from collections.abc import Iterator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gitraw import git_files, git_show, is_git, walk_files
from react_webshop import Trace, agent_request, agent_root_attrs, write_source  # shared OTLP shape

SOURCE = "balrog_textworld"
REPO = "balrog-ai/experiments"
COMMIT = "989931c5f7acb66ace99d423a480fd537d74e749"  # 2025-07-23, "Merge pull request #13" (grok4)
BASE = "submissions/LLM"
TASKS = ("coin_collector", "the_cooking_game", "treasure_hunter")
TOOL = "textworld"  # BALROG has no tool layer: the completion goes to TextWorld's env.step
MAX_STEPS = 80  # BALROG config envs.textworld_kwargs.max_episode_steps
TASK_TEXT = {
    "coin_collector": "TextWorld coin_collector: explore a randomly generated maze with "
    "'go <dir>' and 'take coin' when the coin is in the room.",
    "treasure_hunter": "TextWorld treasure_hunter: explore a randomly generated maze and find a "
    "specific object; doors and containers may be closed or locked (keys must match).",
    "the_cooking_game": "TextWorld the_cooking_game: find the cookbook, gather and process the "
    "ingredients as the recipe says (slice/chop/dice, grill/fry/roast), 'prepare meal' in the "
    "kitchen and 'eat meal'.",
}

# TextWorld's (Inform 7) parser errors: the text was not turned into an action at all, the
# counterpart of WebShop's "Invalid action!". Matched on the whole observation, after an
# optional "(the key)\n"-style clarification line the parser prints. BALROG itself marks
# nothing as failed; an action the game ran and refused ("You can't go that way.", "You have
# to unlock ... first") is the world's answer, a result, and is not marked either.
ERRORS = [
    (re.compile(r"That's not a verb I recognise\.$"), "unknown_verb"),
    (re.compile(r"I only understood you as far as wanting to .*\.$", re.S), "parse_error"),
    (re.compile(r"I didn't understand that sentence\.$"), "parse_error"),
    (re.compile(r"I beg your pardon\?$"), "parse_error"),
    (re.compile(r"You'll have to say which compass direction to go in\.$"), "parse_error"),
    (re.compile(r"You seem to want to talk to someone, but I can't see whom\.$"), "parse_error"),
    (re.compile(r"What do you want to .*\?$"), "parse_error"),
    (re.compile(r"You must name something more substantial\.$"), "parse_error"),
    (re.compile(r"You can't see any such thing\.$"), "no_such_thing"),
]
CLARIFY = re.compile(r"^\([^\n]*\)\n")
# The Inform status line the later submissions' observations end with: a prompt, the room's
# name and score/moves (`>   ...   -= Bedroom =-2/11`). Set aside before matching, so that the
# same parser error is an error in every submission.
STATUS_LINE = re.compile(r"\n+>[ \t]*-= [^\n]* =-\d+/\d+$")


def local_root(raw: str) -> str:
    return os.path.join(raw, "LLM") if os.path.isdir(os.path.join(raw, "LLM")) else raw


def list_runs(raw: str) -> list[tuple[str, str, int]]:
    """(submission, task, episode) for every TextWorld episode with both a CSV and a JSON."""
    rels = git_files(raw, COMMIT, BASE) if is_git(raw) else walk_files(local_root(raw))
    have = set(rels)
    runs = []
    rx = re.compile(r"^([^/]+)/textworld/([a-z_]+)/\2_run_(\d+)\.csv$")
    for p in rels:
        m = rx.match(p)
        if m and m.group(2) in TASKS and p[:-4] + ".json" in have:
            runs.append((m.group(1), m.group(2), int(m.group(3))))
    return sorted(runs)


def read(raw: str, rel: str) -> str:
    """``rel`` under submissions/LLM/ at COMMIT, or under an extracted copy."""
    if is_git(raw):
        return git_show(raw, COMMIT, f"{BASE}/{rel}")
    with open(os.path.join(local_root(raw), rel), encoding="utf-8", newline="") as f:
        return f.read()


def classify(obs: str) -> str | None:
    body = STATUS_LINE.sub("", CLARIFY.sub("", obs.strip()))
    for rx, kind in ERRORS:
        if rx.fullmatch(body):
            return kind
    return None


def convert_run(raw: str, sub: str, task: str, ep: int) -> tuple[dict, dict]:
    rel = f"{sub}/textworld/{task}/{task}_run_{ep:02d}"
    log = json.loads(read(raw, rel + ".json"))
    # BALROG's csv.writer uses escapechar "˘"; two header orders exist (the column order changed
    # in the harness before its public release), DictReader handles both
    rows = list(csv.DictReader(io.StringIO(read(raw, rel + ".csv")), escapechar="˘"))
    assert len(rows) == log["num_steps"], f"{rel}: {len(rows)} rows, num_steps {log['num_steps']}"
    assert [int(r["Step"]) for r in rows] == list(range(len(rows))), f"{rel}: step numbers"
    model = log["client"]["model_id"]
    run_id = f"{SOURCE}/{sub}/{task}/run{ep:02d}"
    tr = Trace(run_id, model, SOURCE)
    n_err = 0
    ret = 0.0
    for step, r in enumerate(rows):
        command, reasoning, obs = r["Action"], r["Reasoning"], r["Observation"]
        call_id = f"call_{step}"
        args = {"command": command}
        parts = []
        if reasoning:
            parts.append({"type": "text", "content": reasoning})
        else:
            parts.append({"type": "text", "content": command})
        parts.append({"type": "tool_call", "id": call_id, "name": TOOL, "arguments": args})
        tr.chat(step, parts)
        err = classify(obs)
        tr.tool(step, call_id, TOOL, args, obs, err)
        n_err += err is not None
        ret += float(r["Reward"])
    assert rows[-1]["Done"] == "True" or len(rows) == MAX_STEPS, f"{rel}: ended without done"
    n = len(rows)
    progression = float(log["progression"])
    success = progression == 1.0
    if success:
        exit_status = "won"
    elif n >= MAX_STEPS:
        exit_status = "step_limit"
    else:
        exit_status = "game_over"
    root_attrs = agent_root_attrs(
        agent=f"BALROG {log['agent']['type']} agent (TextWorld)",
        run_id=run_id,
        model=model,
        task=TASK_TEXT[task],
        source=SOURCE,
        exit_status=exit_status,
        repo=REPO,
        commit=COMMIT,
        path=f"{BASE}/{rel}.csv",
    )
    req = agent_request(f"BALROG {log['agent']['type']} agent", SOURCE, tr.finish(n, root_attrs))
    meta = {
        "run_id": run_id,
        "source": SOURCE,
        "repo": REPO,
        "commit": COMMIT,
        "path": f"{BASE}/{rel}.csv",
        "model": model,
        "submission": sub,
        "agent_type": log["agent"]["type"],
        "task": task,
        "episode": ep,
        "outcome": {
            "progression": progression,
            "score": float(rows[-1]["Reward"]),  # the Reward column is the running game score
            "episode_return": log["episode_return"],  # BALROG's sum of that column, as logged
            "exit_status": exit_status,
            "n_errors": n_err,
            "success": success,
        },
        "n_steps": n,
        "n_tool_calls": n,
    }
    assert abs(ret - float(log["episode_return"])) < 1e-9, f"{rel}: rewards do not sum"
    return req, meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--raw", required=True, help="bare git dir of balrog-ai/experiments, or dir")
    ap.add_argument("--out", required=True, help="output directory (e.g. /work/corpus-extra)")
    a = ap.parse_args()
    runs = list_runs(a.raw)
    counts: dict[str, list[int]] = {}

    def gen() -> Iterator[tuple[dict, dict]]:
        for sub, task, ep in runs:
            req, meta = convert_run(a.raw, sub, task, ep)
            c = counts.setdefault(sub, [0, 0])
            c[0] += 1
            c[1] += meta["outcome"]["success"]
            yield req, meta

    gz, metas = write_source(a.out, SOURCE, gen())
    for sub, (n, ok) in counts.items():
        print(f"{SOURCE}/{sub}: {n} runs, {ok} won")
    print(f"{SOURCE}: {len(metas)} runs, {sum(m['outcome']['success'] for m in metas)} won -> {gz}")


if __name__ == "__main__":
    main()
