"""Compact per-step viewer for one corpus run (a reading aid for hand-labelling).

Usage: python quality/show_run.py RUN_ID [--args N] [--res N] [--text N] [--corpus DIR]

Prints every span of the run in start-time order. Tool calls get a 0-based step index
(among tool calls only), the tool name, truncated arguments, the first/last lines of the
result, an error flag, and two short hashes: A = hash(tool, canonical args) and
R = hash(masked result). Equal hashes make repeats visible; they are NOT the judge.
Model text of each turn is printed (truncated) on a `  > ` line.
"""

import argparse
import gzip
import hashlib
import json
import os
import re
import sys

MASKS = [
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"), "<TS>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds|min)\b"), "<DUR>"),
    (
        re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I),
        "<UUID>",
    ),
    (re.compile(r"\b0x[0-9a-f]+\b", re.I), "<HEX>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b", re.I), "<HEX>"),
    (re.compile(r"\d{4,}"), "<N>"),
]


def mask(s):
    for rx, rep in MASKS:
        s = rx.sub(rep, s)
    return s


def h(s):
    return hashlib.sha1(s.encode("utf-8", "replace")).hexdigest()[:6]


def canonical_args(raw):
    """Arguments as sorted compact JSON, or the raw text when it is not JSON."""
    try:
        return json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":"))
    except Exception:
        return raw


def attrs(span):
    out = {}
    for a in span.get("attributes", []):
        v = a["value"]
        out[a["key"]] = next(iter(v.values())) if v else None
    return out


def load(run_id, corpus):
    src = run_id.split("/")[0]
    idx = 0
    with open(os.path.join(corpus, "runs.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r["source"] != src:
                continue
            if r["run_id"] == run_id:
                meta = r
                break
            idx += 1
        else:
            sys.exit("unknown run id")
    with gzip.open(os.path.join(corpus, src + ".otlp.jsonl.gz"), "rt") as f:
        for i, line in enumerate(f):
            if i == idx:
                return meta, json.loads(line)


def lines_preview(s, n):
    ls = [line for line in s.splitlines() if line.strip() not in ("<output>", "</output>")]
    ls = [re.sub(r"^<returncode>(-?\d+)</returncode>", r"rc=\1 ", line) for line in ls] or [""]
    if len(ls) > 1 and ls[0].startswith("rc=") and not ls[0][4:].strip():
        ls = ls[1:]
    sel = ls if len(ls) <= 2 * n else [*ls[:n], f"... [{len(ls) - 2 * n} lines] ...", *ls[-n:]]
    return [line[:220] for line in sel]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_id")
    ap.add_argument("--args", type=int, default=200)
    ap.add_argument("--res", type=int, default=3, help="first/last N result lines")
    ap.add_argument("--text", type=int, default=200)
    ap.add_argument("--corpus", default="/work/shared/corpus")
    ap.add_argument("--from", dest="lo", type=int, default=0, help="first step to show")
    ap.add_argument("--to", dest="hi", type=int, default=10**9, help="last step to show")
    a = ap.parse_args()
    meta, req = load(a.run_id, a.corpus)
    spans = []
    for rs in req["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            spans.extend(ss["spans"])
    spans.sort(key=lambda s: (int(s["startTimeUnixNano"]), s["name"].startswith("execute_tool")))
    root = next(s for s in spans if "parentSpanId" not in s)
    ra = attrs(root)
    print(f"# {a.run_id}  outcome={json.dumps(meta['outcome'])}")
    print(
        f"# n_steps={meta['n_steps']} n_tool_calls={meta['n_tool_calls']} exit={ra.get('loop_eval.exit_status')}"
    )
    step = 0
    for s in spans:
        if s is root:
            continue
        at = attrs(s)
        err = s.get("status", {}).get("code") == 2
        if s["name"].startswith("chat"):
            if not (a.lo <= step <= a.hi):
                continue
            texts = []
            try:
                for m in json.loads(at.get("gen_ai.output.messages") or "[]"):
                    for p in m.get("parts", []):
                        if p.get("type") == "text":
                            texts.append(p.get("content", ""))
            except Exception:
                texts.append(str(at.get("gen_ai.output.messages"))[: a.text])
            t = " ".join(" ".join(texts).split())
            tag = " [FORMAT_ERR]" if err else ""
            if t or err:
                print(f"  > T{h(mask(t.lower()))}{tag} {t[: a.text]}")
            if "loop_eval.user_reply" in at:
                u = " ".join(str(at["loop_eval.user_reply"]).split())
                print(f"  < user: {u[: a.text]}")
            if "loop_eval.user_tool_calls" in at:
                # tau2 dual control: what the simulated user did on their own device
                for c in json.loads(at["loop_eval.user_tool_calls"]):
                    r = " ".join(str(c.get("result")).split())
                    err = " ERR" if c.get("error") else ""
                    print(
                        f"  < user did: {c['name']} {json.dumps(c['arguments'])}{err} -> {r[:120]}"
                    )
            continue
        tool = at.get("gen_ai.tool.name")
        cargs = canonical_args(at.get("gen_ai.tool.call.arguments") or "")
        res = str(at.get("gen_ai.tool.call.result") or "")
        ah = h(tool + "\x00" + cargs)
        rh = h(mask(res))
        flag = "ERR" if err else "ok "
        et = at.get("error.type", "")
        shown = " ".join(cargs.split())
        if not (a.lo <= step <= a.hi):
            step += 1
            continue
        print(
            f"[{step:3d}] {flag} A{ah} R{rh} {tool} {shown[: a.args]} {('(' + et + ')') if et else ''}"
        )
        for line in lines_preview(res, a.res) if a.res > 0 else []:
            print(f"        | {line}")
        step += 1


if __name__ == "__main__":
    main()
