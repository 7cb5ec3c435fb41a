"""Convert tau2-bench telecom simulation results (dual-control mode) to OTLP JSON traces.

Why: tau2-bench telecom is a dual-control harness (the agent calls CRM tools while a simulated
user operates their own phone through tools of its own), unlike any harness in the development
corpus. Reading the results files that sierra-research published keeps outcomes real (the
benchmark's own reward) and the tool calls exactly as the harness recorded them.

Usage: python3 quality/sources/tau2_telecom.py --raw <tau2-bench git dir or extracted dir> --out DIR

``--raw`` is either a git directory (read at the pinned commit with ``git show``) or a folder
holding the result files under their repository paths. Stdlib only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gitraw import git_show_bytes
from react_webshop import write_source  # the shared writer of a source's two files

SOURCE = "tau2_telecom"
REPO = "sierra-research/tau2-bench"
COMMIT = "59d0fb96f4292815e1f6463fb2f139ffef47dc7f"
RESULTS_DIR = "src/experiments/model_training/results"
# (result file, short model name used in run ids): the dual-control ("default") telecom runs.
FILES = [
    ("gpt-4.1_telecom_default_gpt-4.1_1trials.json", "gpt-4.1"),
    (
        "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm_telecom_default_gpt-4.1_1trials.json",
        "ft-gpt-4.1-tau2-full-sft",
    ),
]
AGENT_NAME = "tau2-bench llm_agent (telecom, dual control)"
GREETING = "Hi! How can I help you today?"  # tau2 orchestrator default first message
CAP = 64 * 1024
T0 = 1704067200 * 10**9  # 2024-01-01T00:00:00Z, synthetic timestamps: 1 s per step
SEC = 10**9


def _hex(seed: str, n: int) -> str:
    """Deterministic lowercase hex id derived from the run id (same ids on every run)."""
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def _cap(text: str) -> tuple[str, bool]:
    """Cap text at 64 KiB of UTF-8, like the shared corpus, without splitting a character."""
    b = text.encode("utf-8")
    if len(b) <= CAP:
        return text, False
    return b[:CAP].decode("utf-8", "ignore"), True


def _attr(key: str, value: Any) -> dict[str, Any]:
    """One OTLP/JSON attribute; ints as decimal strings, as the collector's file exporter does."""
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def read_raw(raw: str, name: str) -> bytes:
    """Read one results file from a git dir (at COMMIT) or from an extracted tree."""
    rel = f"{RESULTS_DIR}/{name}"
    if os.path.isfile(os.path.join(raw, rel)):
        with open(os.path.join(raw, rel), "rb") as f:
            return f.read()
    return git_show_bytes(raw, COMMIT, rel)


class Run:
    """Accumulates the spans of one run; steps and synthetic times follow the shared corpus."""

    def __init__(self, run_id: str, model: str) -> None:
        self.run_id = run_id
        self.model = model
        self.trace_id = _hex(run_id, 32)
        self.root_id = _hex(run_id + "/root", 16)
        self.spans: list[dict[str, Any]] = []
        self.step = 0
        self.n_tools = 0
        self.n_truncated = 0
        self.t0 = T0  # moved 1 s on after the harness greeting, so no two turns share a start

    def _span(
        self, name: str, kind: int, start: int, end: int, attrs: list[dict[str, Any]]
    ) -> dict[str, Any]:
        span = {
            "traceId": self.trace_id,
            "spanId": _hex(f"{self.run_id}/{len(self.spans)}", 16),
            "parentSpanId": self.root_id,
            "name": name,
            "kind": kind,
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(end),
            "attributes": attrs,
        }
        self.spans.append(span)
        return span

    def chat(
        self, parts: list[dict[str, Any]], extra: list[dict[str, Any]], n_calls: int, is_step: bool
    ) -> None:
        """A model turn: text-only turns are one step; a turn with k calls spans k steps.

        The harness's fixed greeting is not a step (``is_step`` false): no model produced it.
        """
        text = json.dumps([{"role": "assistant", "parts": parts}], ensure_ascii=False)
        text, cut = _cap(text)
        start = self.t0 + self.step * SEC
        end = start + (SEC // 2 if n_calls else SEC - 1)
        attrs = [
            _attr("gen_ai.operation.name", "chat"),
            _attr("gen_ai.request.model", self.model),
            _attr("gen_ai.conversation.id", self.run_id),
            _attr("gen_ai.output.messages", text),
            *([_attr("loop_eval.step", self.step)] if is_step else []),
            *extra,
        ]
        if cut:
            attrs.append(_attr("loop_eval.result_truncated", True))
        self._span(f"chat {self.model}", 3, start, end, attrs)
        if not is_step:
            self.t0 += SEC
        elif not n_calls:
            self.step += 1

    def tool(self, call: dict[str, Any], result: str, is_error: bool, first: bool) -> None:
        """One agent tool call; the result is the tool message verbatim (capped)."""
        base = self.t0 + self.step * SEC
        start = base + (SEC // 2 if first else 0)
        res, cut = _cap(result)
        attrs = [
            _attr("gen_ai.operation.name", "execute_tool"),
            _attr("gen_ai.tool.name", call["name"]),
            _attr("gen_ai.tool.call.id", call.get("id") or ""),
            _attr(
                "gen_ai.tool.call.arguments",
                json.dumps(call.get("arguments") or {}, ensure_ascii=False),
            ),
            _attr("gen_ai.tool.call.result", res),
            _attr("gen_ai.conversation.id", self.run_id),
            _attr("loop_eval.step", self.step),
        ]
        if cut:
            attrs.append(_attr("loop_eval.result_truncated", True))
            self.n_truncated += 1
        if is_error:
            attrs.append(_attr("error.type", "tool_error"))
        span = self._span(f"execute_tool {call['name']}", 1, start, base + SEC - 1, attrs)
        if is_error:
            span["status"] = {"code": 2, "message": result[:200]}
        self.step += 1
        self.n_tools += 1


def _next_assistant(msgs: list[dict[str, Any]], i: int) -> int:
    """Index of the next assistant message at or after i (skipping user turns and tool results)."""
    while i < len(msgs) and msgs[i]["role"] != "assistant":
        i += 1
    return i


def convert_sim(
    sim: dict[str, Any], run_id: str, model: str, raw_path: str, source: str, agent: str
) -> tuple[dict, Run]:
    """One simulation -> one ExportTraceServiceRequest (the shared corpus layout)."""
    msgs = sim["messages"]
    results = {m["id"]: m for m in msgs if m["role"] == "tool" and m.get("id")}
    run = Run(run_id, model)
    for i, m in enumerate(msgs):
        if m["role"] != "assistant":
            continue
        calls = m.get("tool_calls") or []
        parts: list[dict[str, Any]] = []
        if m.get("content"):
            parts.append({"type": "text", "content": m["content"]})
        for c in calls:
            parts.append(
                {
                    "type": "tool_call",
                    "id": c.get("id"),
                    "name": c["name"],
                    "arguments": c.get("arguments") or {},
                }
            )
        extra: list[dict[str, Any]] = []
        # The orchestrator's fixed greeting opens every dual-control run; no model produced it.
        greeting = i == 0 and not calls and m.get("content") == GREETING and not m.get("cost")
        if greeting:
            extra.append(_attr("loop_eval.harness_message", True))
        if not calls:
            # What the simulated user said and did on their device before the agent's next turn.
            j = _next_assistant(msgs, i + 1)
            said = [
                u["content"] for u in msgs[i + 1 : j] if u["role"] == "user" and u.get("content")
            ]
            did = []
            for u in msgs[i + 1 : j]:
                if u["role"] == "user":
                    for c in u.get("tool_calls") or []:
                        r = results.get(c.get("id"), {})
                        did.append(
                            {
                                "name": c["name"],
                                "arguments": c.get("arguments") or {},
                                "result": r.get("content"),
                                "error": bool(r.get("error")),
                            }
                        )
            if said:
                extra.append(_attr("loop_eval.user_reply", "\n".join(said)))
            if did:
                txt, _ = _cap(json.dumps(did, ensure_ascii=False))
                extra.append(_attr("loop_eval.user_tool_calls", txt))
        run.chat(parts, extra, len(calls), not greeting)
        for k, c in enumerate(calls):
            r = results.get(c.get("id"))
            if r is None:
                raise ValueError(f"{run_id}: no tool result for call {c.get('id')}")
            run.tool(c, r.get("content") or "", bool(r.get("error")), k == 0)
    end = run.t0 + max(run.step, 1) * SEC
    root_attrs = [
        _attr("gen_ai.operation.name", "invoke_agent"),
        _attr("gen_ai.agent.name", agent),
        _attr("gen_ai.conversation.id", run_id),
        _attr("gen_ai.request.model", model),
        _attr("loop_eval.source", source),
        _attr("loop_eval.exit_status", sim["termination_reason"]),
        _attr("loop_eval.raw_repo", REPO),
        _attr("loop_eval.raw_commit", COMMIT),
        _attr("loop_eval.raw_path", raw_path),
        _attr("loop_eval.synthetic_timestamps", True),
    ]
    root = {
        "traceId": run.trace_id,
        "spanId": run.root_id,
        "name": f"invoke_agent {source}",
        "kind": 1,
        "startTimeUnixNano": str(T0),
        "endTimeUnixNano": str(end),
        "attributes": root_attrs,
    }
    req = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [_attr("service.name", agent), _attr("loop_eval.source", source)]
                },
                "scopeSpans": [
                    {
                        "scope": {"name": "loop_eval.to_otlp", "version": "1.0"},
                        "spans": [root, *run.spans],
                    }
                ],
            }
        ]
    }
    return req, run


def runs(
    raw: str, source: str, files: list[tuple[str, str]], agent: str
) -> Iterator[tuple[dict, dict]]:
    """Yield (trace, runs.jsonl row) for every simulation, in file order then task order."""
    for name, short in files:
        data = json.loads(read_raw(raw, name))
        model = data["info"]["agent_info"]["llm"]
        task_pos = {t["id"]: n for n, t in enumerate(data["tasks"])}
        sims = sorted(data["simulations"], key=lambda s: (task_pos[s["task_id"]], s["trial"]))
        path = f"{RESULTS_DIR}/{name}"
        for sim in sims:
            rid = f"{source}/{short}/task{task_pos[sim['task_id']]:03d}/trial{sim['trial']}"
            trace, run = convert_sim(sim, rid, model, path, source, agent)
            reward = float(sim["reward_info"]["reward"])
            row = {
                "run_id": rid,
                "source": source,
                "repo": REPO,
                "commit": COMMIT,
                "path": path,
                "model": model,
                "record_index": data["simulations"].index(sim),
                "task_id": sim["task_id"],
                "trial": sim["trial"],
                "outcome": {
                    "reward": reward,
                    "termination_reason": sim["termination_reason"],
                    "success": reward == 1.0,
                },
                "n_steps": run.step,
                "n_tool_calls": run.n_tools,
            }
            yield trace, row


def main(
    argv: list[str] | None = None,
    source: str = SOURCE,
    files: list[tuple[str, str]] = FILES,
    agent: str = AGENT_NAME,
) -> None:
    """Write <out>/<source>.otlp.jsonl.gz and <out>/<source>.runs.jsonl."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", required=True, help="tau2-bench git dir or extracted tree")
    ap.add_argument("--out", required=True, help="output folder")
    a = ap.parse_args(argv)
    _, rows = write_source(a.out, source, runs(a.raw, source, files, agent))
    ok = sum(row["outcome"]["success"] for row in rows)
    print(f"{source}: {len(rows)} runs, {ok} with reward 1", file=sys.stderr)


if __name__ == "__main__":
    main()
