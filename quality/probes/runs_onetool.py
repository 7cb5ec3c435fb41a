from harness import Run

PY_STEPS = [
    (
        "import os, sys; print(sys.version); print(os.getcwd())",
        "3.11.6 (main, Oct  3 2023, 10:40:35) [GCC 12.2.0]\n/home/agent/work",
    ),
    (
        "import subprocess; print(subprocess.run(['ls','-la'],capture_output=True,text=True).stdout)",
        "total 24\ndrwxr-xr-x 3 agent agent 4096 Nov 14 22:01 .\n-rw-r--r-- 1 agent agent 18211 Nov 14 21:58 sales_q3.xlsx\n-rw-r--r-- 1 agent agent  912 Nov 14 21:58 brief.md",
    ),
    (
        "print(open('brief.md').read())",
        "# Brief\nSummarise Q3 sales by region, flag regions down >10% QoQ, draft an email to the VP.",
    ),
    (
        "import pandas as pd\nx = pd.ExcelFile('sales_q3.xlsx'); print(x.sheet_names)",
        "['Q2', 'Q3', 'regions']",
    ),
    (
        "q3 = pd.read_excel('sales_q3.xlsx', sheet_name='Q3'); print(q3.head()); print(q3.shape)",
        "  region   month  revenue\n0  EMEA  2023-07  412000\n...\n(36, 3)",
    ),
    (
        "q2 = pd.read_excel('sales_q3.xlsx', sheet_name='Q2'); print(q2.shape, q2.columns.tolist())",
        "(36, 3) ['region', 'month', 'revenue']",
    ),
    (
        "print(q3.groupby('region').revenue.sum())",
        "region\nAPAC     1021000\nEMEA     1199500\nLATAM     388200\nNA       2650100\nName: revenue, dtype: int64",
    ),
    (
        "print(q2.groupby('region').revenue.sum())",
        "region\nAPAC     1120400\nEMEA     1184000\nLATAM     451900\nNA       2598000\nName: revenue, dtype: int64",
    ),
    (
        "chg = (q3.groupby('region').revenue.sum() / q2.groupby('region').revenue.sum() - 1) * 100\nprint(chg.round(1))",
        "region\nAPAC    -8.9\nEMEA     1.3\nLATAM  -14.1\nNA       2.0\nName: revenue, dtype: float64",
    ),
    ("print(chg[chg < -10])", "region\nLATAM   -14.1\nName: revenue, dtype: float64"),
    (
        "reg = pd.read_excel('sales_q3.xlsx', sheet_name='regions'); print(reg)",
        "  region        owner\n0   APAC    K. Tanaka\n1   EMEA    L. Moreau\n2  LATAM  R. Oliveira\n3     NA     S. Patel",
    ),
    (
        "lat = q3[q3.region=='LATAM']; print(lat)",
        "   region    month  revenue\n24  LATAM  2023-07   151000\n25  LATAM  2023-08   129700\n26  LATAM  2023-09   107500",
    ),
    (
        "print(q2[q2.region=='LATAM'])",
        "   region    month  revenue\n24  LATAM  2023-04   149200\n25  LATAM  2023-05   151100\n26  LATAM  2023-06   151600",
    ),
    ("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt", ""),
    (
        "pd.concat([q2,q3]).pivot_table(index='month', columns='region', values='revenue').plot(); plt.savefig('trend.png'); print('saved')",
        "saved",
    ),
    ("import os; print(os.path.getsize('trend.png'))", "28114"),
    (
        "print(pd.concat([q2,q3]).groupby('month').revenue.sum())",
        "month\n2023-04    1801200\n2023-05    1790100\n...\n2023-09    1880500",
    ),
    (
        "top = q3.sort_values('revenue', ascending=False).head(5); print(top)",
        "   region    month  revenue\n3      NA  2023-09   941000\n...",
    ),
    (
        "print(q3.revenue.describe())",
        "count        36.0\nmean     146966.7\nstd       92211.4\n...",
    ),
    (
        "print(q3.groupby('month').revenue.sum().pct_change().round(3))",
        "month\n2023-07      NaN\n2023-08    0.012\n2023-09    0.021",
    ),
    (
        "summary = chg.round(1).to_dict(); print(summary)",
        "{'APAC': -8.9, 'EMEA': 1.3, 'LATAM': -14.1, 'NA': 2.0}",
    ),
    ("import json; json.dump(summary, open('summary.json','w')); print('ok')", "ok"),
    (
        "print(open('summary.json').read())",
        '{"APAC": -8.9, "EMEA": 1.3, "LATAM": -14.1, "NA": 2.0}',
    ),
    ("lat_m = lat.revenue.pct_change().round(3).tolist(); print(lat_m)", "[nan, -0.141, -0.171]"),
    (
        "print(q3[q3.region=='APAC'])",
        "   region    month  revenue\n0   APAC  2023-07   355000\n1   APAC  2023-08   338000\n2   APAC  2023-09   328000",
    ),
    (
        "email = f'''Hi,\\nQ3 revenue: NA +2.0%, EMEA +1.3%, APAC -8.9%, LATAM -14.1% QoQ.\\nLATAM declined every month (151k -> 107.5k).\\n'''\nprint(len(email))",
        "112",
    ),
    ("open('email_draft.txt','w').write(email); print('written')", "written"),
    (
        "import textwrap; print(textwrap.fill(email, 72))",
        "Hi, Q3 revenue: NA +2.0%, EMEA +1.3%, APAC -8.9%, LATAM -14.1% QoQ.\nLATAM declined every month (151k -> 107.5k).",
    ),
    ("print(reg[reg.region=='LATAM'].owner.item())", "R. Oliveira"),
    (
        "email += '\\nCc: R. Oliveira (LATAM owner)\\n'; open('email_draft.txt','w').write(email); print('updated')",
        "updated",
    ),
    (
        "import hashlib; print(hashlib.md5(open('sales_q3.xlsx','rb').read()).hexdigest())",
        "9f1c2e7b44a0d3e1c8b5f60a2d7e9c13",
    ),
    (
        "print(sorted(os.listdir('.')))",
        "['brief.md', 'email_draft.txt', 'sales_q3.xlsx', 'summary.json', 'trend.png']",
    ),
    ("from PIL import Image; im = Image.open('trend.png'); print(im.size)", "(640, 480)"),
    ("print(q3.isna().sum().to_dict())", "{'region': 0, 'month': 0, 'revenue': 0}"),
    ("print(q2.isna().sum().to_dict())", "{'region': 0, 'month': 0, 'revenue': 0}"),
    ("check = q3.groupby('region').revenue.sum().sum(); print(check)", "5258800"),
    ("print(q2.groupby('region').revenue.sum().sum())", "5354300"),
    ("print(round((5258800/5354300-1)*100, 2))", "-1.78"),
    (
        "email += 'Total: -1.8% QoQ.\\n'; open('email_draft.txt','w').write(email); print(open('email_draft.txt').read())",
        "Hi,\nQ3 revenue: ...\nTotal: -1.8% QoQ.",
    ),
    (
        "import zipfile\nwith zipfile.ZipFile('deliverables.zip','w') as z:\n    [z.write(f) for f in ['summary.json','trend.png','email_draft.txt']]\nprint('zipped')",
        "zipped",
    ),
    (
        "print(zipfile.ZipFile('deliverables.zip').namelist())",
        "['summary.json', 'trend.png', 'email_draft.txt']",
    ),
    ("print('DONE')", "DONE"),
]


def onetool_python_legit():
    r = Run("onetool_python_analysis_legit", "one-tool(python)", "loop-free", None)
    for n, (code, out) in enumerate(PY_STEPS):
        if n % 6 == 0:
            r.turn(f"Progress update: step {n}; continuing the analysis.")
        r.call("python", {"code": code}, out)
    return r


ACT_STEPS = [
    "open https://calendar.acme.example",
    "read today's events",
    "open event 'Quarterly planning'",
    "copy attendee list",
    "open https://docs.acme.example/new",
    "type title 'Quarterly planning notes'",
    "paste attendee list",
    "add heading 'Agenda'",
    "open https://mail.acme.example",
    "search mail 'planning agenda'",
    "open newest result",
    "copy agenda bullets",
    "switch to docs tab",
    "paste agenda bullets",
    "add heading 'Decisions'",
    "open https://jira.acme.example/browse/PLAN-212",
    "read ticket description",
    "copy acceptance criteria",
    "switch to docs tab",
    "paste under 'Decisions'",
    "open https://sheets.acme.example/d/okr",
    "read row 'Q4 objectives'",
    "copy cells B2:B9",
    "switch to docs tab",
    "paste OKR table",
    "format table with header row",
    "set document sharing to 'acme.example: can comment'",
    "copy share link",
    "switch to calendar tab",
    "edit event description",
    "paste share link",
    "save event",
    "open https://chat.acme.example/#planning",
    "type message 'Notes doc linked in the invite'",
    "send message",
    "open docs tab",
    "read document outline",
    "fix typo 'Decsions' -> 'Decisions'",
    "read word count",
    "close tabs except docs",
    "report completion to user",
]


def onetool_act_legit():
    r = Run("onetool_act_freetext_legit", "one-tool(act)", "loop-free", None)
    for n, step in enumerate(ACT_STEPS):
        r.call(
            "act",
            {"instruction": step},
            f"Done: {step}. Observation #{n}: page title updated; {3 + n % 7} elements changed.",
        )
    return r


def onetool_bash_like_legit():
    r = Run("onetool_run_freeform_input_legit", "one-tool(input)", "loop-free", None)
    for n, step in enumerate(ACT_STEPS):
        r.call("computer", {"input": step}, f"ok ({step}) -> screen changed, {12 + n} nodes")
    return r


RUNS = [onetool_python_legit, onetool_act_legit, onetool_bash_like_legit]
