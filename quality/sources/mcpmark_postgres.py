"""Convert the MCPMark community Postgres runs (eval-sys/mcpmark-community-experiments) to OTLP JSON.

Why: a database agent driven through MCP servers, unlike every harness already converted.
MCPMark (eval-sys/mcpmark) gives the model a task on a live PostgreSQL database (chinook,
dvdrental, employees, lego, security, sports, vectors) and the tools of one MCP server; its own
agent (``MCPMarkAgent``, LiteLLM with tools, at most 100 turns) calls them until the model
answers without a tool call. A task-specific verifier script then checks the database state and
the answer. The community repository commits, per MCP server and run, every task's full
message log (``messages.json``) and its ``meta.json`` with the verifier's verdict, failures
included. Three MCP servers on the same 21 tasks, 4 runs each, one model
(claude-sonnet-4.5): crystaldba's postgres-mcp, InsForge and Supabase.

Usage: python3 quality/sources/mcpmark_postgres.py --raw RAW --out DIR
  RAW is a bare git dir of eval-sys/mcpmark-community-experiments holding COMMIT (read with
  ``git show``), or a directory laid out like its ``mcp_servers/postgres/`` folder
  (``<server>/run-<k>/<task>/{messages,meta}.json``; the repository root also works).

Writes DIR/mcpmark_postgres.otlp.jsonl.gz and DIR/mcpmark_postgres.runs.jsonl (same order:
server, run, task). Stdlib only; the OTLP span helpers are shared with react_webshop.py.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gitraw import git_files, git_show_bytes, is_git, walk_files
from react_webshop import Trace, agent_request, agent_root_attrs, attr, write_source

SOURCE = "mcpmark_postgres"
REPO = "eval-sys/mcpmark-community-experiments"
# 2025-11-05 HEAD (the Postgres runs were added in a620cd4 and 490875b)
COMMIT = "92db83e36c6da2691141a0698f137665aa0116fe"
BASE = "mcp_servers/postgres"
SERVERS = {  # folder -> the server's name in its meta.json
    "crystaldba": "Postgres MCP Pro (Crystal DBA)",
    "insforge": "InsForge",
    "supabase": "Supabase",
}
MAX_TURNS = 100  # MCPMarkAgent.MAX_TURNS
# MCPMarkAgent's own replies when the call did not reach a result (mcpmark_agent.py at 528b589)
TIMEOUT = re.compile(r"^Error: Tool call '[^']*' timed out after 60 seconds$")


def local_root(raw: str) -> str:
    for sub in (BASE, "postgres"):
        if os.path.isdir(os.path.join(raw, sub)):
            return os.path.join(raw, sub)
    return raw


def list_runs(raw: str) -> list[tuple[str, int, str]]:
    """(server, run, task) for every task folder with a meta.json."""
    rels = git_files(raw, COMMIT, BASE) if is_git(raw) else walk_files(local_root(raw))
    rx = re.compile(r"^([a-z]+)/run-(\d+)/([^/]+)/meta\.json$")
    out = []
    for p in rels:
        m = rx.match(p)
        if m and m.group(1) in SERVERS:
            out.append((m.group(1), int(m.group(2)), m.group(3)))
    return sorted(out)


def read(raw: str, rel: str) -> bytes | None:
    """``rel`` under mcp_servers/postgres/ at COMMIT (None if the snapshot lacks the blob)."""
    if is_git(raw):
        try:
            return git_show_bytes(raw, COMMIT, f"{BASE}/{rel}")
        except Exception:
            return None
    p = os.path.join(local_root(raw), rel)
    if not os.path.exists(p):
        return None
    with open(p, "rb") as f:
        return f.read()


def normalise(msgs: list[dict]) -> tuple[str, list[tuple[str, list[dict]]], dict[str, str]]:
    """The task text, the assistant turns as (text, [calls]) and the results by call id.

    Two layouts occur. Normally the harness converted its chat log with
    ``_convert_to_sdk_format``: a ``user`` item, then per turn an optional ``message`` item (the
    text) and ``function_call`` items, each answered by a ``function_call_output`` whose
    ``output`` is ``{"type": "text", "text": <the tool message's content>, ...}``. Where a Claude
    run ended on an exception the harness kept its raw chat messages instead (``system``,
    ``user``, ``assistant`` with ``tool_calls``, ``tool``)."""
    turns: list[tuple[str, list[dict]]] = []
    results: dict[str, str] = {}
    task = None
    if msgs and msgs[0].get("role") == "system":  # raw chat messages (they keep the system one)
        for m in msgs:
            role = m["role"]
            if role == "system":
                continue
            if role == "user":
                assert task is None, "second user message"
                task = m["content"]
            elif role == "assistant":
                calls = [
                    {
                        "id": c["id"],
                        "name": c["function"]["name"],
                        "arguments": c["function"]["arguments"],
                    }
                    for c in m.get("tool_calls") or []
                ]
                turns.append((m.get("content") or "", calls))
            elif role == "tool":
                results[m["tool_call_id"]] = m["content"]
            else:
                raise ValueError(role)
        return task, turns, results
    text: str | None = None
    calls: list[dict] = []
    after_output = False

    def flush() -> None:
        nonlocal text, calls
        if text is not None or calls:
            turns.append((text or "", calls))
        text, calls = None, []

    for it in msgs:
        kind = it.get("type")
        if kind is None and it.get("role") == "user":
            assert task is None, "second user message"
            task = it["content"]
        elif kind == "message":
            assert it["role"] == "assistant", it["role"]
            flush()
            parts = [c["text"] for c in it["content"] if c.get("type") == "output_text"]
            assert len(parts) == len(it["content"]), "message part"
            text = "\n".join(parts)
            after_output = False
        elif kind == "function_call":
            if after_output:
                flush()
            calls.append({"id": it["call_id"], "name": it["name"], "arguments": it["arguments"]})
            after_output = False
        elif kind == "function_call_output":
            out = json.loads(it["output"])
            assert out["type"] == "text" and set(out) == {"type", "text", "annotations", "meta"}
            results[it["call_id"]] = out["text"]
            after_output = True
        else:
            raise ValueError(kind)
    flush()
    return task, turns, results


def classify(result: str) -> str | None:
    """error.type of a tool result, only where the harness or the server says the call failed.

    The tool message is the MCP ``CallToolResult`` as JSON (``meta``, ``content``,
    ``structuredContent``, ``isError``), or the harness's ``Error: ...`` when the call itself
    failed (its 60 s timeout, or an exception such as the MCP error for invalid arguments).
    Supabase and InsForge report failures with ``isError``; crystaldba's postgres-mcp never
    sets it and returns its error report as the text instead (``Error: <exception>``, or a
    ``{'error': ...}`` dict from its analysis tools)."""
    try:
        res = json.loads(result)
    except json.JSONDecodeError:
        assert result.startswith("Error: "), result[:80]
        return "timeout" if TIMEOUT.match(result) else "call_failed"
    assert set(res) == {"meta", "content", "structuredContent", "isError"}, sorted(res)
    if res["isError"]:
        return "tool_error"
    texts = [c.get("text", "") for c in res["content"] if c.get("type") == "text"]
    if texts and (texts[0].startswith("Error: ") or texts[0].startswith("{'error': ")):
        return "error_text"
    return None


def exit_status(error_message: str | None) -> str:
    if not error_message:
        return "agent_stop"
    if error_message.startswith("Max turns"):
        return "max_turns"
    if "ContextWindowExceededError" in error_message:
        return "error (ContextWindowExceededError)"
    if error_message.startswith("Agent execution failed"):
        return "error (agent execution failed)"
    return f"error ({error_message.splitlines()[0][:80]})"


def convert_run(
    raw: str, server: str, run: int, task_name: str, counts: dict
) -> tuple[dict, dict] | None:
    rel = f"{server}/run-{run}/{task_name}"
    meta = json.loads(read(raw, rel + "/meta.json"))
    c = counts.setdefault(server, {})
    blob = read(raw, rel + "/messages.json")
    if blob is None:  # absent from the snapshot (files of 4 MiB and more)
        c["skipped:messages_absent"] = c.get("skipped:messages_absent", 0) + 1
        return None
    msgs = json.loads(blob)
    er = meta["execution_result"]
    if not msgs:  # the harness failed before the agent ran ("State Duplication Error")
        assert er["error_message"] and not er["success"], rel
        c["skipped:no_messages"] = c.get("skipped:no_messages", 0) + 1
        return None
    # MCPMark calls crystaldba's server plain "postgres" (its first Postgres MCP service)
    assert meta["task_name"] == task_name, rel
    assert meta["mcp"] == ("postgres" if server == "crystaldba" else server), rel
    task, turns, results = normalise(msgs)
    assert task, rel
    model = meta["litellm_run_model_name"]
    run_id = f"{SOURCE}/{server}/run{run}/{task_name}"
    tr = Trace(run_id, model, SOURCE)
    step = n_tools = n_err = 0
    seen: set[str] = set()
    for text, calls in turns:
        parts: list[dict] = []
        if text:
            parts.append({"type": "text", "content": text})
        parsed = []
        for call in calls:
            args = json.loads(call["arguments"]) if call["arguments"] else {}
            assert isinstance(args, dict), rel
            parsed.append(args)
            parts.append(
                {"type": "tool_call", "id": call["id"], "name": call["name"], "arguments": args}
            )
        tr.chat(step, parts)
        if not calls:
            step += 1
            continue
        for call, args in zip(calls, parsed, strict=True):
            assert call["id"] not in seen, f"{rel}: duplicate call id"
            seen.add(call["id"])
            result = results.get(call["id"])
            err = classify(result) if result is not None else None
            span = tr.tool(step, call["id"], call["name"], args, result or "", err)
            if result is None:
                span["attributes"].append(attr("loop_eval.result_not_logged", True))
                c["not_logged"] = c.get("not_logged", 0) + 1
            key = f"{err or 'ok'}"
            c[key] = c.get(key, 0) + 1
            n_err += err is not None
            n_tools += 1
            step += 1
    assert set(results) <= seen, f"{rel}: result without a call"
    status = exit_status(er["error_message"])
    if status == "max_turns":
        assert len(turns) == MAX_TURNS, f"{rel}: {len(turns)} turns at max_turns"
    root_attrs = agent_root_attrs(
        agent=f"MCPMark agent ({SERVERS[server]} MCP server, PostgreSQL)",
        run_id=run_id,
        model=model,
        task=task,
        source=SOURCE,
        exit_status=status,
        repo=REPO,
        commit=COMMIT,
        path=f"{BASE}/{rel}/messages.json",
    )
    req = agent_request(f"MCPMark agent ({SERVERS[server]})", SOURCE, tr.finish(step, root_attrs))
    # the harness counts one turn per model reply, as the turns here
    assert len(turns) == meta["turn_count"], f"{rel}: {len(turns)} turns, {meta['turn_count']}"
    out = {
        "run_id": run_id,
        "source": SOURCE,
        "repo": REPO,
        "commit": COMMIT,
        "path": f"{BASE}/{rel}/messages.json",
        "model": model,
        "server": server,
        "run": run,
        "task_id": task_name,
        "category": task_name.split("__")[0],
        "outcome": {
            "success": bool(er["success"]),
            "error_message": er["error_message"],
            "verification_error": er["verification_error"],
            "exit_status": status,
            "turn_count": meta["turn_count"],
            "n_errors": n_err,
        },
        "n_steps": step,
        "n_tool_calls": n_tools,
    }
    return req, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--raw", required=True, help="bare git dir of the repository, or a dir")
    ap.add_argument("--out", required=True, help="output directory (e.g. /work/corpus-extra)")
    a = ap.parse_args()
    runs = list_runs(a.raw)
    counts: dict[str, dict[str, int]] = {}
    per: dict[str, list[int]] = {}

    def gen() -> Iterator[tuple[dict, dict]]:
        for server, run, task_name in runs:
            got = convert_run(a.raw, server, run, task_name, counts)
            if got is None:
                continue
            p = per.setdefault(server, [0, 0])
            p[0] += 1
            p[1] += got[1]["outcome"]["success"]
            yield got

    gz, metas = write_source(a.out, SOURCE, gen())
    for server, (n, ok) in per.items():
        print(f"{SOURCE}/{server}: {n} runs, {ok} success; {dict(sorted(counts[server].items()))}")
    ok = sum(m["outcome"]["success"] for m in metas)
    print(f"{SOURCE}: {len(metas)} runs, {ok} success -> {gz}")


if __name__ == "__main__":
    main()
