"""Convert the ReAct WebShop runs (ysymyth/ReAct, WebShop.ipynb) to OTLP JSON traces.

Why: WebShop is a web-shopping harness (search box + clickable buttons), unlike any of the
development corpus' four harnesses. The notebook's committed output holds the printed
trajectory of all 500 episodes ``fixed_0`` .. ``fixed_499`` of one ReAct run
(text-davinci-002), with the running reward after each one, so every run has a real outcome.

Usage: python3 quality/sources/react_webshop.py --raw RAW --out DIR
  RAW is a bare git dir of ysymyth/ReAct (read with ``git show COMMIT:WebShop.ipynb``), or a
  directory or file holding an extracted ``WebShop.ipynb``.

Writes DIR/react_webshop.otlp.jsonl.gz (one ExportTraceServiceRequest per line, one run per
line) and DIR/react_webshop.runs.jsonl (one index line per run, same order). Stdlib only.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gitraw import git_show_bytes

SOURCE = "react_webshop"
REPO = "ysymyth/ReAct"
COMMIT = "6bdb3a1fd38b8188fc7ba4102969fe483df8fdc9"
PATH = "WebShop.ipynb"
CELL = 7  # the `res1 = run_episodes(prompt1, 500)` cell: ReAct prompt, 500 episodes
MODEL = "text-davinci-002"  # named in the notebook's llm() helper
AGENT = "ReAct (WebShop)"
T0 = 1_704_067_200_000_000_000  # 2024-01-01T00:00:00Z, as the shared corpus
STEP_NS = 1_000_000_000
CAP = 64 * 1024

EP_HEAD = re.compile(r"-----------------\n(\d+)\n")
STATS = re.compile(r"\n(\d+) ([0-9.e-]+) ([0-9.e-]+) ([0-9.e-]+)\n-------------\n")
# verb[argument]; the closing bracket is missing when the model hit max_tokens mid-thought
ACTION = re.compile(r"^([A-Za-z_ ]+)\[(.*?)\]?$", re.S)
SCORE = re.compile(r"Your score \(min 0\.0, max 1\.0\): ([0-9.]+)")


# ------------------------------------------- OTLP helpers (shared shape; medagentbench.py and intercode_ctf.py import them)
def hex_id(run_id: str, salt: str, n: int) -> str:
    """Deterministic lowercase hex id, so re-conversion gives byte-identical traces."""
    return hashlib.sha256(f"{run_id}\x00{salt}".encode()).hexdigest()[: 2 * n]


def attr(key: str, value: Any) -> dict:
    """One OTLP KeyValue; ints as intValue strings like the collector's JSON encoding."""
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": str(value)}}


def cap(text: str) -> tuple[str, bool]:
    """Cut text to 64 KiB of UTF-8, as the shared corpus does."""
    b = text.encode("utf-8")
    if len(b) <= CAP:
        return text, False
    return b[:CAP].decode("utf-8", "ignore"), True


def agent_root_attrs(
    *,
    agent: str,
    run_id: str,
    model: str,
    task: str,
    source: str,
    exit_status: str,
    repo: str,
    commit: str,
    path: str,
) -> list[dict]:
    """The root (invoke_agent) span's attributes: who ran, on what task, how it ended, and
    where in which public repository the raw run lives."""
    return [
        attr("gen_ai.operation.name", "invoke_agent"),
        attr("gen_ai.agent.name", agent),
        attr("gen_ai.conversation.id", run_id),
        attr("gen_ai.request.model", model),
        attr(
            "gen_ai.input.messages",
            json.dumps([{"role": "user", "parts": [{"type": "text", "content": task}]}]),
        ),
        attr("loop_eval.source", source),
        attr("loop_eval.exit_status", exit_status),
        attr("loop_eval.raw_repo", repo),
        attr("loop_eval.raw_commit", commit),
        attr("loop_eval.raw_path", path),
        attr("loop_eval.synthetic_timestamps", True),
    ]


def request(resource_attrs: list[dict], spans: list[dict]) -> dict:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": resource_attrs},
                "scopeSpans": [
                    {"scope": {"name": "loop_eval.to_otlp", "version": "1.0"}, "spans": spans}
                ],
            }
        ]
    }


def agent_request(agent: str, source: str, spans: list[dict]) -> dict:
    """One run's export request: the agent's resource (service name, source) around its spans."""
    return request([attr("service.name", agent), attr("loop_eval.source", source)], spans)


def write_source(
    out: str, source: str, runs: Iterable[tuple[dict, dict]]
) -> tuple[str, list[dict]]:
    """Write ``<out>/<source>.otlp.jsonl.gz`` (one request a line) and ``<source>.runs.jsonl``
    (its metadata, same order) from ``(request, meta)`` pairs; returns the .gz path and the
    metadata. gzip's mtime 0 keeps the output byte-identical from run to run."""
    os.makedirs(out, exist_ok=True)
    gz = os.path.join(out, f"{source}.otlp.jsonl.gz")
    idx = os.path.join(out, f"{source}.runs.jsonl")
    metas = []
    with (
        open(gz, "wb") as raw_f,
        gzip.GzipFile(fileobj=raw_f, mode="wb", mtime=0) as g,
        open(idx, "w", encoding="utf-8") as f,
    ):
        for req, meta in runs:
            g.write((json.dumps(req, ensure_ascii=False) + "\n").encode("utf-8"))
            f.write(json.dumps(meta, ensure_ascii=False) + "\n")
            metas.append(meta)
    return gz, metas


class Trace:
    """Builds one run's flat span list: root + chat/tool children at 1 s per step."""

    def __init__(self, run_id: str, model: str, source: str = SOURCE) -> None:
        self.run_id = run_id
        self.model = model
        self.source = source
        self.trace_id = hex_id(run_id, "trace", 16)
        self.root_id = hex_id(run_id, "root", 8)
        self.spans: list[dict] = []
        self.n = 0

    def _span(self, name: str, kind: int, start: int, end: int, attrs: list[dict]) -> dict:
        self.n += 1
        s = {
            "traceId": self.trace_id,
            "spanId": hex_id(self.run_id, f"span{self.n}", 8),
            "parentSpanId": self.root_id,
            "name": name,
            "kind": kind,
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(end),
            "attributes": attrs,
        }
        self.spans.append(s)
        return s

    def chat(
        self, step: int, parts: list[dict], is_step: bool = True, error: str | None = None
    ) -> dict:
        start = T0 + step * STEP_NS
        attrs = [
            attr("gen_ai.operation.name", "chat"),
            attr("gen_ai.request.model", self.model),
            attr("gen_ai.conversation.id", self.run_id),
            attr("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": parts}])),
        ]
        if is_step:
            attrs.append(attr("loop_eval.step", step))
        if error:
            attrs.append(attr("error.type", error))
        s = self._span(f"chat {self.model}", 3, start, start + 2 * STEP_NS // 3, attrs)
        if error:
            s["status"] = {"code": 2, "message": error}
        return s

    def tool(
        self, step: int, call_id: str, tool: str, args: dict, result: str, error: str | None
    ) -> dict:
        start = T0 + step * STEP_NS + 2 * STEP_NS // 3
        text, cut = cap(result)
        attrs = [
            attr("gen_ai.operation.name", "execute_tool"),
            attr("gen_ai.tool.name", tool),
            attr("gen_ai.tool.call.id", call_id),
            attr("gen_ai.tool.call.arguments", json.dumps(args)),
            attr("gen_ai.tool.call.result", text),
            attr("gen_ai.conversation.id", self.run_id),
            attr("loop_eval.step", step),
        ]
        if cut:
            attrs.append(attr("loop_eval.result_truncated", True))
        if error:
            attrs.append(attr("error.type", error))
        s = self._span(f"execute_tool {tool}", 1, start, T0 + (step + 1) * STEP_NS - 1, attrs)
        if error:
            s["status"] = {"code": 2, "message": result[:200]}
        return s

    def finish(self, n_steps: int, root_attrs: list[dict]) -> list[dict]:
        root = {
            "traceId": self.trace_id,
            "spanId": self.root_id,
            "name": f"invoke_agent {self.source}",
            "kind": 1,
            "startTimeUnixNano": str(T0),
            "endTimeUnixNano": str(T0 + max(n_steps, 1) * STEP_NS),
            "attributes": root_attrs,
        }
        return [root, *self.spans]


# ---------------------------------------------------------------- WebShop log parsing
def read_notebook(raw: str) -> dict:
    """The notebook from a bare git dir (at COMMIT) or from an extracted file/dir."""
    if os.path.isdir(raw) and not os.path.exists(os.path.join(raw, PATH)):
        return json.loads(git_show_bytes(raw, COMMIT, PATH))
    path = os.path.join(raw, PATH) if os.path.isdir(raw) else raw
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def episodes(nb: dict) -> list[dict]:
    """Split the cell's printed stdout into episodes with their steps and reward.

    The reward of episode i is recovered from the running mean the harness prints after it
    (mean_i * i - mean_{i-1} * (i-1)); the last observation's "Your score" line, where
    present, must agree.
    """
    text = "".join("".join(o.get("text", "")) for o in nb["cells"][CELL]["outputs"])
    heads = list(EP_HEAD.finditer(text))
    out = []
    prev_mean = 0.0
    for k, m in enumerate(heads):
        idx = int(m.group(1))
        body = text[m.end() : heads[k + 1].start() if k + 1 < len(heads) else len(text)]
        st = STATS.search(body)
        assert st and int(st.group(1)) == idx + 1, f"episode {idx}: no running-reward line"
        mean = float(st.group(2))
        reward = round(mean * (idx + 1) - prev_mean * idx, 6)
        prev_mean = mean
        body = body[: st.start() + 1]
        steps = []
        for chunk in re.split(r"(?m)^Action: ", body)[1:]:
            action, sep, obs = chunk.partition("\nObservation: ")
            assert sep, f"episode {idx}: action without observation"
            steps.append((action, obs[:-2] if obs.endswith("\n\n") else obs.rstrip("\n")))
        assert steps and steps[0][0] == "reset", f"episode {idx}: does not start with reset"
        out.append({"index": idx, "reward": reward, "steps": steps})
    return out


def convert_episode(ep: dict) -> tuple[dict, dict]:
    """One episode -> (ExportTraceServiceRequest, runs.jsonl line)."""
    run_id = f"{SOURCE}/fixed_{ep['index']:03d}"
    tr = Trace(run_id, MODEL)
    instruction = ep["steps"][0][1]
    step = n_tools = n_invalid = 0
    for action, obs in ep["steps"][1:]:
        m = ACTION.match(action.strip())
        verb = m.group(1).strip().lower() if m else ""
        arg = m.group(2) if m else action
        if verb == "think":
            # a thought: the harness answers "OK." without touching the page
            tr.chat(step, [{"type": "text", "content": arg}])
        else:
            # search/click as WebShop names them; another verb (the model wrote "exit[quit]")
            # is its own tool; text with no verb[...] shape is a tool named by its first word
            tool, key = {"search": ("search", "query"), "click": ("click", "target")}.get(
                verb, (verb, "argument")
            )
            if not tool:
                tool, key, arg = (action.split() or ["action"])[0].lower(), "text", action
            call_id = f"call_{n_tools}"
            tr.chat(
                step,
                [
                    {"type": "text", "content": action},
                    {"type": "tool_call", "id": call_id, "name": tool, "arguments": {key: arg}},
                ],
            )
            err = "invalid_action" if obs.strip() == "Invalid action!" else None
            n_invalid += err is not None
            tr.tool(step, call_id, tool, {key: arg}, obs, err)
            n_tools += 1
        step += 1
    last = ep["steps"][-1]
    bought = last[0].strip().lower() == "click[buy now]" and len(ep["steps"]) > 1
    score = SCORE.search(last[1])
    if score:
        assert abs(float(score.group(1)) - ep["reward"]) < 1e-3, run_id
    exit_status = f"reward={ep['reward']:g}" + ("" if bought else " (step limit)")
    root_attrs = agent_root_attrs(
        agent=AGENT,
        run_id=run_id,
        model=MODEL,
        task=instruction,
        source=SOURCE,
        exit_status=exit_status,
        repo=REPO,
        commit=COMMIT,
        path=PATH,
    )
    req = agent_request(AGENT, SOURCE, tr.finish(step, root_attrs))
    meta = {
        "run_id": run_id,
        "source": SOURCE,
        "repo": REPO,
        "commit": COMMIT,
        "path": PATH,
        "model": MODEL,
        "cell": CELL,
        "session": f"fixed_{ep['index']}",
        "outcome": {
            "reward": ep["reward"],
            "bought": bought,
            "score_line": score is not None,
            "n_invalid": n_invalid,
            "success": ep["reward"] == 1.0,
        },
        "n_steps": step,
        "n_tool_calls": n_tools,
    }
    return req, meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--raw", required=True, help="bare git dir of ysymyth/ReAct, or the notebook")
    ap.add_argument("--out", required=True, help="output directory (e.g. /work/corpus-extra)")
    a = ap.parse_args()
    eps = episodes(read_notebook(a.raw))
    assert [e["index"] for e in eps] == list(range(len(eps))), "episodes out of order"
    gz, metas = write_source(a.out, SOURCE, (convert_episode(ep) for ep in eps))
    n_ok = sum(meta["outcome"]["success"] for meta in metas)
    print(f"{SOURCE}: {len(eps)} runs, {n_ok} with reward 1 -> {gz}")


if __name__ == "__main__":
    main()
