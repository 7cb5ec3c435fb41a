import importlib
import sys

from harness import report

MODS = [
    "runs_browser",
    "runs_sql",
    "runs_notebook",
    "runs_mcp",
    "runs_ops",
    "runs_support",
    "runs_onetool",
    "runs_research",
    "runs_email",
    "runs_gh",
    "runs_game",
    "runs_desktop",
    "runs_travel",
    "runs_iac",
    "runs_datasci",
    "runs_jsdev",
    "runs_scrape",
    "runs_shop",
    "runs_chatops",
    "runs_setup",
    "runs_codeact",
]
only = [a for a in sys.argv[1:] if not a.startswith("--")]
profile = next((a.split("=")[1] for a in sys.argv[1:] if a.startswith("--profile=")), "general")
runs = []
for m in MODS:
    if only and m not in only:
        continue
    try:
        mod = importlib.import_module(m)
    except ModuleNotFoundError as e:
        if e.name == m:
            continue
        raise
    runs += [f() for f in mod.RUNS]
report(runs, profile=profile, verbose="--quiet" not in sys.argv)
