"""Minimal reproductions / ablations isolating each finding. Run: python ablations.py"""

import json

from harness import Run, play


def show(name, r, note=""):
    sigs, _ = play(r)
    t = [(x["step"], x["dim"], x["rule"]) for x in sigs if x["level"] == "term"]
    sorted({(x["dim"], x["rule"]) for x in sigs if x["level"] == "warn"})
    print(f"{name:58} TERMs={t}  {note}")


# --- F1: tool_pattern counts (tool,args) laps whatever the results: progressing poll + sleep
def f1_poll_progress():
    r = Run("f1", "", "loop-free", None)
    for _i, pct in enumerate([5, 14, 29, 41, 58, 73, 88]):
        r.call(
            "get_job_status",
            {"job_id": "etl-7"},
            json.dumps({"state": "RUNNING", "progress": f"{pct}%"}),
        )
        r.call("sleep", {"seconds": 30}, "slept 30s")
    return r


# --- F1b: same for scroll + read on a long page, every read new
def f1_scroll_read():
    r = Run("f1b", "", "loop-free", None)
    for n in range(6):
        r.call("scroll", {"direction": "down"}, f"Scrolled to section {n}")
        r.call(
            "get_page_text",
            {},
            f"== Section {n}: {['Intro', 'Design', 'Safety', 'Membership', 'Compaction', 'Perf'][n]} == new paragraphs",
        )
    return r


# --- F2: replay_cycle on a legit wait: sleep + k8s get pods, ContainerCreating 3 polls (AGE masked)
def f2_wait_replay():
    r = Run("f2", "", "loop-free", None)
    for age in ["31s", "43s", "55s", "58s"]:
        r.call("sleep", {"seconds": 10}, "slept 10s")
        r.call(
            "k8s",
            {"args": ["get", "pods", "-l", "app=web"]},
            f"web-7d9f8c6b5-x2kqz  0/1  ContainerCreating  0  {age}",
        )
    r.call("sleep", {"seconds": 10}, "slept 10s")
    r.call(
        "k8s",
        {"args": ["get", "pods", "-l", "app=web"]},
        "web-7d9f8c6b5-x2kqz  1/1  Running  0  67s",
    )
    return r


# --- F2b: same with a poll_tools config? (what a user could do) -> see f2_config below
# --- F3: poll_no_progress counts `sleep` (constant result by nature) across progressing polls
def f3_sleep_poll():
    r = Run("f3", "", "loop-free", None)
    for i in range(21):
        r.call(
            "get_job_status",
            {"job_id": f"etl-{i // 3}"},
            json.dumps({"state": "RUNNING", "progress": f"{i * 4}%"}),
        )
        r.call("sleep", {"seconds": 15}, "slept 15s")
        r.call(
            "lookup_order",
            {"order_id": f"A-{10400 + i}"},
            json.dumps({"order_id": f"A-{10400 + i}", "status": "shipped"}),
        )
    return r


# --- F4: one-tool `python` harness: exec category streak 15/30, every call different and fine
def f4_python_onetool(n=60):
    r = Run("f4", "", "loop-free", None)
    for i in range(n):
        r.call(
            "python",
            {"code": f"print(df.iloc[{i}].to_dict())"},
            f"{{'row': {i}, 'value': {i * i}}}",
        )
    return r


# --- M1: Postgres error echoes the query (LINE 1: ... + caret): same error looks new every time
def m1_sql(echo=True):
    r = Run("m1", "", "loop", 0)
    for n in range(10):
        q = [
            "SELECT utm_source, AVG(duration) FROM web_sessions",
            "SELECT s.utm_source, AVG(s.duration) FROM web_sessions s",
            "select utm_source, avg(duration) from web_sessions",
            "SELECT utm_source, AVG(duration)::numeric FROM web_sessions",
            "SELECT COALESCE(utm_source,'-'), AVG(duration) FROM web_sessions",
            "SELECT utm_source AS src, AVG(duration) FROM web_sessions",
            "SELECT utm_source, ROUND(AVG(duration)) FROM web_sessions",
            "SELECT utm_source, AVG(duration) avg_d FROM public.web_sessions",
            "SELECT DISTINCT utm_source, AVG(duration) FROM web_sessions",
            "SELECT utm_source, AVG(duration) FROM web_sessions ws",
        ][n] + " GROUP BY 1"
        err = 'ERROR:  column "duration" does not exist'
        if echo:
            err += f"\nLINE 1: {q[:64]}...\n{' ' * (8 + q.find('duration'))}^"
        r.call("run_query", {"sql": q}, err, error=True)
    return r


# --- M2: traceback echoes the code line that raised; code changes, exception does not
def m2_nb(echo=True):
    r = Run("m2", "", "loop", 0)
    codes = [
        "df.groupby('user_id')['amount'].sum()",
        "df.groupby(['user_id'])['amount'].sum()",
        "df.groupby('user_id').amount.sum()",
        "df.groupby('user_id')['amount'].agg('sum')",
        "df.groupby('user_id')[['amount']].sum()",
        "df.pivot_table(index='user_id', values='amount', aggfunc='sum')",
        "df.groupby('user_id', as_index=False)['amount'].sum()",
        "df.groupby('user_id')['amount'].aggregate(sum)",
        "df.groupby('user_id')['amount'].apply(sum)",
    ]
    for n, c in enumerate(codes):
        out = f"TypeError                                 Traceback (most recent call last)\nCell In[{n + 3}], line 1\n"
        out += (
            f"----> 1 {c}\n" if echo else ""
        ) + "TypeError: unsupported operand type(s) for +: 'decimal.Decimal' and 'float'"
        r.call("execute_cell", {"code": c}, out, error=True)
    return r


# --- M3: pytest tmp_path counter (pytest-of-agent/pytest-N) makes a same-failure output new
def m3_pytest(counter=True, rounds=7):
    r = Run("m3", "", "loop", 0)
    for n in range(rounds):
        r.call(
            "write_file",
            {
                "path": "/w/src/export.py",
                "content": f"def export_csv(rows, path):\n    # attempt {n}\n    ...\n",
            },
            "Successfully wrote to /w/src/export.py",
        )
        tp = f"pytest-{31 + n}" if counter else "pytest-31"
        r.call(
            "run_command",
            {"command": "python -m pytest -q tests/test_export.py"},
            f"tmp_path = PosixPath('/tmp/pytest-of-agent/{tp}/test_export_roundtrip0')\nE  AssertionError: assert [['id'], [], ['1']] == [['id'], ['1']]\n1 failed, 1 passed in 0.{21 + n}s",
            error=True,
        )
    return r


# --- M4: dead button; page text carries a MM:SS countdown (not masked) and/or a periodic screenshot
def m4_browser(countdown=True, screenshot=True):
    r = Run("m4", "", "loop", 0)
    for n in range(8):
        r.call("click", {"selector": "button#checkout-btn"}, "Clicked <button id=checkout-btn>")
        tail = f"\nTickets held for {14 - n // 2:02d}:{(59 - 17 * n) % 60:02d}" if countdown else ""
        r.call("get_page_text", {}, "Select tickets\nGA Floor $65.00 [ - 1 + ]\nCheckout" + tail)
        if screenshot and n % 3 == 2:
            r.call(
                "screenshot",
                {},
                f"Saved screenshot to /tmp/browser-2b9e0d17/shot_{1700001040 + n * 7}.png",
            )
    return r


# --- J1: flaky API retried immediately (same args, same 502), succeeds on 4th
def j1_retry():
    r = Run("j1", "", "loop-free", None)
    for _k in range(3):
        r.call(
            "issue_refund",
            {"order_id": "A-10519", "amount": 124.0},
            "HTTP 502 Bad Gateway: upstream connect error",
            error=True,
        )
    r.call(
        "issue_refund",
        {"order_id": "A-10519", "amount": 124.0},
        '{"refund_id": "re_9Kx", "status": "succeeded"}',
    )
    return r


# --- J2: scroll tool whose result is a constant confirmation (content arrives next observation)
def j2_scroll_const():
    r = Run("j2", "", "loop-free", None)
    for _ in range(6):
        r.call(
            "scroll", {"direction": "down", "amount": 600}, "Scrolled down the page by 600 pixels"
        )
    return r


if __name__ == "__main__":
    show("F1  poll w/ progress + sleep, 7 laps", f1_poll_progress(), "(expect none)")
    show("F1b scroll+read, 6 laps, all new content", f1_scroll_read(), "(expect none)")
    show(
        "F2  sleep+k8s get pods, ContainerCreating x4 then Running",
        f2_wait_replay(),
        "(expect none)",
    )
    show("F3  21 sleeps between progressing polls", f3_sleep_poll(), "(expect none)")
    show("F4  python one-tool, 60 distinct ok calls", f4_python_onetool(60), "(expect none)")
    show("M1  SQL same error, query echoed (10x)", m1_sql(True), "(expect TERM)")
    show("M1' SQL same error, no echo (control)", m1_sql(False), "(expect TERM)")
    show("M2  traceback echoes code line (9x)", m2_nb(True), "(expect TERM)")
    show("M2' traceback without code line (control)", m2_nb(False), "(expect TERM)")
    show("M3  pytest tmp_path counter, 7 rounds", m3_pytest(True), "(expect TERM)")
    show("M3' no counter (control), 7 rounds", m3_pytest(False), "(expect TERM)")
    show("M3'' pytest counter, 10 rounds", m3_pytest(True, 10), "(expect TERM)")
    show("M4  dead button + countdown + screenshots", m4_browser(True, True), "(expect TERM)")
    show("M4a countdown only", m4_browser(True, False), "(expect TERM)")
    show("M4b screenshots only", m4_browser(False, True), "(expect TERM)")
    show("J1  flaky 502 x3 then success (immediate)", j1_retry(), "(judgement)")
    show("J2  6 scrolls, constant confirmation", j2_scroll_const(), "(judgement)")


# --- M5: notebook edit_cell + execute_cell(cell_index), identical traceback except the
#         execution counter `Cell In[N]` (an unmasked small number)
def m5_nb_counter(counter=True, rounds=8):
    r = Run("m5", "", "loop", 0)
    for n in range(rounds):
        r.call(
            "edit_cell",
            {
                "cell_index": 3,
                "source": f"FMT = '%d/%m/%Y %H:%M'{' ' * n}\ndf['ts'] = pd.to_datetime(df['ts'], format=FMT, dayfirst={n % 2 == 0})",
            },
            "Cell 3 updated",
        )
        k = 4 + n if counter else 4
        r.call(
            "execute_cell",
            {"cell_index": 3},
            f'ValueError  Traceback (most recent call last)\nCell In[{k}], line 2\nValueError: unconverted data remains when parsing with format "%d/%m/%Y %H:%M": ":07"',
            error=True,
        )
    return r


if __name__ == "__main__":
    show(
        "M5  edit_cell+execute_cell, Cell In[N] counter, 8 rounds",
        m5_nb_counter(True),
        "(expect TERM)",
    )
    show("M5' same, constant Cell In[4] (control)", m5_nb_counter(False), "(expect TERM)")
