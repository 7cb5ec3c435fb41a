# ruff: noqa: E731  (a one-line timestamp helper inside the log builder)
"""CI-fixing agent with one CLI tool gh(args: list[str]) plus edit_file(path, old, new).
In this harness edit_file commits the change and pushes it to the PR branch (the result
says so), which triggers CI. Invented runs.

Label convention: loop_start = index of the first tool call that repeats an attempt that
had already come back futile (the first repetition, not the first attempt)."""

import json

from harness import Run

REPO = "northwind/datekit"


def gh(r, args, out, error=False):
    r.call("gh", {"args": args}, out, error=error)


def run_view(rid, status, jobs, elapsed, conclusion=None):
    head = "✓" if conclusion == "success" else ("X" if conclusion == "failure" else "*")
    lines = [
        f"{head} fix/iso-week-parsing CI · {rid}",
        f"Triggered via push about {elapsed} ago",
        "",
        "JOBS",
    ]
    for name, st, dur in jobs:
        mark = {"success": "✓", "failure": "X", "in_progress": "*", "queued": "-"}[st]
        lines.append(
            f"{mark} {name}"
            + (f" in {dur}" if dur else "")
            + (
                f" (ID {sum(ord(c) * 131**i for i, c in enumerate(name + rid)) % 10**11})"
                if st != "queued"
                else ""
            )
        )
    lines.append("")
    lines.append(f"status: {status}" + (f", conclusion: {conclusion}" if conclusion else ""))
    return "\n".join(lines)


FAIL_LOG_1 = """test (3.11)	Run pytest	2023-11-14T21:03:12.4410277Z ============================= test session starts ==============================
test (3.11)	Run pytest	2023-11-14T21:03:12.4411820Z platform linux -- Python 3.11.6, pytest-7.4.3, pluggy-1.3.0
test (3.11)	Run pytest	2023-11-14T21:03:12.4412101Z collected 214 items
test (3.11)	Run pytest	2023-11-14T21:03:15.9021388Z tests/test_parse.py ........................F.........                    [ 16%]
test (3.11)	Run pytest	2023-11-14T21:03:19.1170032Z =================================== FAILURES ===================================
test (3.11)	Run pytest	2023-11-14T21:03:19.1171544Z _________________________ test_iso_week_year_boundary __________________________
test (3.11)	Run pytest	2023-11-14T21:03:19.1172890Z     def test_iso_week_year_boundary():
test (3.11)	Run pytest	2023-11-14T21:03:19.1173310Z >       assert parse("2021-W01-1") == date(2021, 1, 4)
test (3.11)	Run pytest	2023-11-14T21:03:19.1173902Z E       AssertionError: assert datetime.date(2021, 1, 3) == datetime.date(2021, 1, 4)
test (3.11)	Run pytest	2023-11-14T21:03:19.1174420Z tests/test_parse.py:88: AssertionError
test (3.11)	Run pytest	2023-11-14T21:03:19.2201876Z =========================== short test summary info ============================
test (3.11)	Run pytest	2023-11-14T21:03:19.2202334Z FAILED tests/test_parse.py::test_iso_week_year_boundary - AssertionError: assert datetime.date(2021, 1, 3) == datetime.date(2021, 1, 4)
test (3.11)	Run pytest	2023-11-14T21:03:19.2203001Z ======================== 1 failed, 213 passed in 6.82s =========================
test (3.11)	Run pytest	2023-11-14T21:03:19.4410021Z ##[error]Process completed with exit code 1."""


def gh_ci_fix_legit():
    r = Run("gh_ci_fix_poll_until_green_legit", "gh-cli", "loop-free", None)
    r.turn("PR #412 has a red CI. Find out why and fix it.")
    gh(
        r,
        ["pr", "checks", "412", "--repo", REPO],
        "Some checks were not successful\n0 cancelled, 1 failing, 3 successful, 0 skipped, and 0 pending checks\n\nX  CI / test (3.11)  1m48s  https://github.com/northwind/datekit/actions/runs/6871103345/job/18687210021\n✓  CI / lint        31s    https://github.com/northwind/datekit/actions/runs/6871103345/job/18687209873\n✓  CI / test (3.10) 1m52s  https://github.com/northwind/datekit/actions/runs/6871103345/job/18687209950\n✓  CI / build-docs  1m05s  https://github.com/northwind/datekit/actions/runs/6871103345/job/18687210105",
    )
    gh(r, ["run", "view", "6871103345", "--repo", REPO, "--log-failed"], FAIL_LOG_1)
    gh(
        r,
        ["pr", "diff", "412", "--repo", REPO],
        "diff --git a/src/datekit/parse.py b/src/datekit/parse.py\n@@ -141,7 +141,9 @@ def _parse_iso_week(s):\n     year, week, dow = m.group(1, 2, 3)\n-    jan1 = date(int(year), 1, 1)\n-    start = jan1 - timedelta(days=jan1.weekday())\n+    jan4 = date(int(year), 1, 4)\n+    start = jan4 - timedelta(days=jan4.isoweekday())\n     return start + timedelta(weeks=int(week) - 1, days=int(dow) - 1)",
    )
    r.turn(
        "isoweekday() is 1..7, so subtracting it overshoots by one day... actually Monday of week 1 is jan4 - (isoweekday-1). Fix the off-by-one."
    )
    r.call(
        "edit_file",
        {
            "path": "src/datekit/parse.py",
            "old": "    start = jan4 - timedelta(days=jan4.isoweekday())",
            "new": "    start = jan4 - timedelta(days=jan4.isoweekday() - 1)",
        },
        'Edited src/datekit/parse.py (1 line changed). Committed 9c41e07 "fix: ISO week start off by one" and pushed to origin/fix/iso-week-parsing.',
    )
    gh(
        r,
        ["run", "list", "--repo", REPO, "--branch", "fix/iso-week-parsing", "--limit", "2"],
        "STATUS  TITLE                          WORKFLOW  BRANCH               EVENT  ID          ELAPSED  AGE\n*       fix: ISO week start off by one  CI        fix/iso-week-parsing  push   6871298810  4s       about 4 seconds ago\nX       feat: parse ISO week dates      CI        fix/iso-week-parsing  push   6871103345  1m58s    about 14 minutes ago",
    )
    rid = "6871298810"
    J = ["lint", "test (3.10)", "test (3.11)", "build-docs"]
    polls = [
        ("queued", [(j, "queued", None) for j in J], "9s"),
        (
            "in_progress",
            [("lint", "in_progress", None)] + [(j, "queued", None) for j in J[1:]],
            "27s",
        ),
        (
            "in_progress",
            [
                ("lint", "success", "29s"),
                ("test (3.10)", "in_progress", None),
                ("test (3.11)", "in_progress", None),
                ("build-docs", "in_progress", None),
            ],
            "52s",
        ),
        (
            "in_progress",
            [
                ("lint", "success", "29s"),
                ("test (3.10)", "in_progress", None),
                ("test (3.11)", "in_progress", None),
                ("build-docs", "success", "1m02s"),
            ],
            "1m31s",
        ),
        (
            "in_progress",
            [
                ("lint", "success", "29s"),
                ("test (3.10)", "success", "1m49s"),
                ("test (3.11)", "in_progress", None),
                ("build-docs", "success", "1m02s"),
            ],
            "2m05s",
        ),
        (
            "completed",
            [
                ("lint", "success", "29s"),
                ("test (3.10)", "success", "1m49s"),
                ("test (3.11)", "success", "1m53s"),
                ("build-docs", "success", "1m02s"),
            ],
            "2m21s",
            "success",
        ),
    ]
    for poll in polls:
        gh(r, ["run", "view", rid, "--repo", REPO], run_view(rid, *poll))
    gh(
        r,
        ["pr", "checks", "412", "--repo", REPO],
        "All checks were successful\n0 cancelled, 0 failing, 4 successful, 0 skipped, and 0 pending checks\n\n✓  CI / build-docs  1m02s\n✓  CI / lint        29s\n✓  CI / test (3.10) 1m49s\n✓  CI / test (3.11) 1m53s",
    )
    gh(
        r,
        [
            "pr",
            "comment",
            "412",
            "--repo",
            REPO,
            "--body",
            "Fixed the off-by-one in `_parse_iso_week` (Monday of ISO week 1 = Jan 4 − (isoweekday − 1)). CI is green.",
        ],
        "https://github.com/northwind/datekit/pull/412#issuecomment-1811402297",
    )
    r.turn("CI green on #412; left a comment.")
    return r


# ---- same CI failure after six different edits ------------------------------------------


def money_fail_log(rid_seed, t0):
    h, m, s = t0
    ts = lambda ds: (
        f"2023-11-15T{h:02d}:{m:02d}:{(s + ds) % 60:02d}.{(rid_seed * 7919 + ds * 104729) % 10**7:07d}Z"
    )
    dur = 5.9 + (rid_seed % 7) * 0.13
    return "\n".join(
        [
            f"test (3.12)\tRun pytest\t{ts(0)} ============================= test session starts ==============================",
            f"test (3.12)\tRun pytest\t{ts(0)} platform linux -- Python 3.12.0, pytest-7.4.3, pluggy-1.3.0",
            f"test (3.12)\tRun pytest\t{ts(0)} collected 388 items",
            f"test (3.12)\tRun pytest\t{ts(4)} tests/test_money.py ..........F.....................                   [ 14%]",
            f"test (3.12)\tRun pytest\t{ts(6)} =================================== FAILURES ===================================",
            f"test (3.12)\tRun pytest\t{ts(6)} ___________________________ test_round_half_even ____________________________",
            f"test (3.12)\tRun pytest\t{ts(6)}     def test_round_half_even():",
            f"test (3.12)\tRun pytest\t{ts(6)} >       assert Money('2.675', 'USD').rounded() == Money('2.68', 'USD')",
            f"test (3.12)\tRun pytest\t{ts(6)} E       AssertionError: assert Money('2.67', 'USD') == Money('2.68', 'USD')",
            f"test (3.12)\tRun pytest\t{ts(6)} tests/test_money.py:142: AssertionError",
            f"test (3.12)\tRun pytest\t{ts(7)} FAILED tests/test_money.py::test_round_half_even - AssertionError: assert Money('2.67', 'USD') == Money('2.68', 'USD')",
            f"test (3.12)\tRun pytest\t{ts(7)} ======================== 1 failed, 387 passed in {dur:.2f}s =========================",
            f"test (3.12)\tRun pytest\t{ts(7)} ##[error]Process completed with exit code 1.",
        ]
    )


def gh_same_failure_loop():
    # calls: 0 checks, 1 log, 2 read file, then per cycle: edit, run list, run view --log-failed
    # cycle 1 edit = 3; cycle 2 edit (first repetition) = 6
    r = Run("gh_same_ci_failure_six_edits_loop", "gh-cli", "loop", 6)
    R2 = "northwind/ledger"
    r.turn("CI on PR #97 (branch feat/money-rounding) fails. Make it green.")
    gh(
        r,
        ["pr", "checks", "97", "--repo", R2],
        "Some checks were not successful\n0 cancelled, 1 failing, 2 successful, 0 skipped, and 0 pending checks\n\nX  CI / test (3.12)  2m11s  https://github.com/northwind/ledger/actions/runs/6880011203/job/18712234410\n✓  CI / lint        24s\n✓  CI / typecheck   41s",
    )
    gh(
        r,
        ["run", "view", "6880011203", "--repo", R2, "--log-failed"],
        money_fail_log(1, (9, 2, 11)),
    )
    gh(
        r,
        [
            "api",
            f"repos/{R2}/contents/src/ledger/money.py?ref=feat/money-rounding",
            "--jq",
            ".content | @base64d",
        ],
        "from decimal import Decimal, ROUND_HALF_EVEN\n\nclass Money:\n    def __init__(self, amount, currency):\n        self.amount = Decimal(float(amount))\n        self.currency = currency\n\n    def rounded(self):\n        return Money(self.amount.quantize(Decimal('0.01'), rounding=ROUND_HALF_EVEN), self.currency)\n    ...",
    )
    edits = [
        ("rounding=ROUND_HALF_EVEN)", "rounding=ROUND_HALF_UP)", "fix: use ROUND_HALF_UP"),
        (
            "from decimal import Decimal, ROUND_HALF_EVEN",
            "from decimal import Decimal, ROUND_HALF_EVEN, ROUND_HALF_UP, getcontext\ngetcontext().rounding = ROUND_HALF_UP",
            "fix: set decimal context rounding",
        ),
        (
            "self.amount.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)",
            "self.amount.normalize().quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)",
            "fix: normalize before quantize",
        ),
        (
            "self.amount.normalize().quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)",
            "Decimal(round(float(self.amount), 2))",
            "fix: use builtin round",
        ),
        (
            "Decimal(round(float(self.amount), 2))",
            "Decimal(format(float(self.amount), '.2f'))",
            "fix: format to 2dp",
        ),
        (
            "Decimal(format(float(self.amount), '.2f'))",
            "Decimal(str(round(self.amount * 100) / 100))",
            "fix: integer cents rounding",
        ),
    ]
    base_id = 6880054410
    for k, (old, new, msg) in enumerate(edits):
        sha = f"{(0x3A91C7 + k * 0x1F2B3) & 0xFFFFFF:06x}{k}"
        r.call(
            "edit_file",
            {"path": "src/ledger/money.py", "old": old, "new": new},
            f'Edited src/ledger/money.py (1 hunk). Committed {sha} "{msg}" and pushed to origin/feat/money-rounding.',
        )
        rid = base_id + k * 40217
        gh(
            r,
            ["run", "list", "--repo", R2, "--branch", "feat/money-rounding", "--limit", "1"],
            f"STATUS  TITLE  WORKFLOW  BRANCH  EVENT  ID  ELAPSED  AGE\nX       {msg}  CI  feat/money-rounding  push  {rid}  2m{8 + k}s  about {3 + k % 2} minutes ago",
        )
        gh(
            r,
            ["run", "view", str(rid), "--repo", R2, "--log-failed"],
            money_fail_log(k + 2, (9, 10 + 6 * k, (17 * k) % 50)),
        )
        if k in (1, 3, 4):
            r.turn(
                [
                    "",
                    "Same assertion. The context change didn't take. Try normalizing first.",
                    "",
                    "Still 2.67. Use Python's round instead.",
                    "Still 2.67 != 2.68. Try formatting.",
                ][k]
            )
    return r


# ---- exploration: many different gh calls --------------------------------------------


def gh_explore_legit():
    r = Run("gh_repo_exploration_legit", "gh-cli", "loop-free", None)
    R3 = "orbitdb/relay"
    r.turn(
        "Onboarding: summarise the state of orbitdb/relay — activity, open bugs, release cadence, CI health."
    )
    gh(
        r,
        ["repo", "view", R3],
        "orbitdb/relay\nA peer-to-peer relay for OrbitDB replicas\n\nLicense: MIT · Stars: 1.2k · Forks: 143 · Watchers: 31\nDefault branch: main · Last push: 2023-11-14\n\nREADME\n# relay\nRun `npx @orbitdb/relay --port 4002`...",
    )
    gh(
        r,
        ["pr", "list", "--repo", R3, "--state", "open", "--limit", "10"],
        "Showing 7 of 7 open pull requests in orbitdb/relay\n\n#388  feat: websocket transport v2          ws-v2            about 2 days ago\n#385  fix: memory leak in peer store        fix/peerstore    about 5 days ago\n#381  chore(deps): bump libp2p to 0.46.21   dependabot/...   about 1 week ago\n#377  docs: deployment on fly.io            docs/fly         about 2 weeks ago\n#370  refactor: split relay.js              refactor/split   about 1 month ago\n#362  feat: metrics endpoint                feat/metrics     about 1 month ago\n#341  WIP: circuit relay v2 reservations    crv2             about 3 months ago",
    )
    gh(
        r,
        ["pr", "view", "388", "--repo", R3],
        "feat: websocket transport v2 #388\nOpen • haadcode wants to merge 14 commits into main from ws-v2 • +612 −188\nReviewers: tabcat (Changes requested), julienmalard (Approved)\nLabels: enhancement\n\nReplaces the old ws transport with @libp2p/websockets 7.x and adds TLS termination...\n\nView this pull request on GitHub: https://github.com/orbitdb/relay/pull/388",
    )
    gh(
        r,
        ["pr", "view", "385", "--repo", R3, "--comments"],
        "fix: memory leak in peer store #385\nOpen • tabcat wants to merge 3 commits into main from fix/peerstore • +41 −9\n\ntabcat • 5d • The peer store never evicts entries for peers that disconnect without a goodbye...\njulienmalard • 4d • Confirmed: RSS drops from 1.9GB to 310MB after 24h on our node.\nhaadcode • 2d • LGTM once #381 lands (needs libp2p 0.46.21).",
    )
    gh(
        r,
        ["pr", "diff", "385", "--repo", R3, "--name-only"],
        "src/peer-store.js\ntest/peer-store.test.js\nCHANGELOG.md",
    )
    gh(
        r,
        ["pr", "checks", "381", "--repo", R3],
        "Some checks were not successful\n0 cancelled, 1 failing, 2 successful, 0 skipped, and 0 pending checks\n\nX  test / node-18  3m02s\n✓  test / node-20  2m41s\n✓  lint            19s",
    )
    gh(
        r,
        ["issue", "list", "--repo", R3, "--label", "bug", "--state", "open"],
        "Showing 9 of 9 open issues in orbitdb/relay that match your search\n\n#384  Relay OOM after ~30h uptime                  bug, p1       about 6 days ago\n#379  node-18: fetch is not defined in tests       bug, ci       about 1 week ago\n#366  Reservations not released on disconnect      bug           about 1 month ago\n#359  Docker image runs as root                    bug, security about 1 month ago\n#351  --port flag ignored when PORT env set        bug           about 2 months ago\n#330  Wrong multiaddr in /status                   bug, good first issue  about 3 months ago\n#318  Crash on SIGHUP                              bug           about 4 months ago\n#301  IPv6 listen fails on Alpine                  bug           about 5 months ago\n#287  Flaky test: dial timeout                     bug, ci       about 6 months ago",
    )
    gh(
        r,
        ["issue", "view", "384", "--repo", R3],
        "Relay OOM after ~30h uptime #384\nOpen • kvz opened about 6 days ago • 6 comments\nLabels: bug, p1\n\nOur relay (v0.4.2, node 20.9) gets OOM-killed every ~30h. Heap snapshot shows PeerStore maps growing unbounded...",
    )
    gh(
        r,
        ["issue", "view", "379", "--repo", R3, "--comments"],
        "node-18: fetch is not defined in tests #379\nOpen • tabcat opened about 1 week ago • 2 comments\n\nThe new metrics test uses global fetch, which is only unflagged in node 18.0+... CI uses node 18.17 so it should work?\nhaadcode • 6d • It's the test runner: mocha --experimental-vm-modules disables it. Proposed: drop node 18 (EOL April 2025).",
    )
    gh(
        r,
        [
            "issue",
            "list",
            "--repo",
            R3,
            "--state",
            "closed",
            "--limit",
            "5",
            "--json",
            "number,title,closedAt",
            "--jq",
            ".[] | [.number,.title,.closedAt] | @tsv",
        ],
        "383\tRelease v0.4.2\t2023-11-06T12:01:44Z\n380\tDocs: env vars table\t2023-11-03T09:22:10Z\n376\tSupport PORT env var\t2023-10-28T18:40:02Z\n372\tREADME badge broken\t2023-10-20T07:15:51Z\n368\tUpgrade to libp2p 0.46\t2023-10-18T21:33:09Z",
    )
    gh(
        r,
        ["release", "list", "--repo", R3, "--limit", "8"],
        "TITLE    TYPE    TAG NAME  PUBLISHED\nv0.4.2   Latest  v0.4.2    about 8 days ago\nv0.4.1           v0.4.1    about 1 month ago\nv0.4.0           v0.4.0    about 2 months ago\nv0.3.3           v0.3.3    about 4 months ago\nv0.3.2           v0.3.2    about 5 months ago\nv0.3.1           v0.3.1    about 7 months ago\nv0.3.0           v0.3.0    about 8 months ago\nv0.2.0           v0.2.0    about 1 year ago",
    )
    gh(
        r,
        ["release", "view", "v0.4.2", "--repo", R3],
        "v0.4.2\nhaadcode released this about 8 days ago\n\n## Fixes\n- Respect PORT env var (#376)\n- Correct docs for env vars (#380)\n\nAssets\nrelay-linux-x64.tar.gz  18.4 MiB\nrelay-darwin-arm64.tar.gz  17.9 MiB",
    )
    gh(
        r,
        [
            "api",
            f"repos/{R3}/contributors?per_page=5",
            "--jq",
            ".[] | [.login,.contributions] | @tsv",
        ],
        "haadcode\t812\ntabcat\t433\njulienmalard\t97\ndependabot[bot]\t64\nkvz\t12",
    )
    gh(
        r,
        [
            "api",
            f"repos/{R3}/commits?per_page=5",
            "--jq",
            '.[] | [.sha[0:7], .commit.author.date, .commit.message | split("\\n")[0]] | @tsv',
        ],
        "4be17a2\t2023-11-14T10:12:03Z\tMerge pull request #386 from orbitdb/fix/sighup-log\n91c0d3e\t2023-11-13T19:48:27Z\tfix: log on SIGHUP instead of crashing\n77fa2b1\t2023-11-09T08:30:55Z\tci: cache npm\n2d6e910\t2023-11-06T11:58:40Z\tchore: release v0.4.2\nb31c4f0\t2023-11-03T09:21:44Z\tdocs: env vars table",
    )
    gh(
        r,
        ["workflow", "list", "--repo", R3],
        "NAME            STATE   ID\ntest            active  48211934\nlint            active  48211935\nrelease         active  48211936\ndocker-publish  active  51107721",
    )
    gh(
        r,
        ["run", "list", "--repo", R3, "--workflow", "test", "--limit", "8"],
        "STATUS  TITLE                                   WORKFLOW  BRANCH          EVENT         ID          ELAPSED  AGE\n✓       Merge pull request #386                 test      main            push          6869901122  2m39s    about 1 day ago\nX       chore(deps): bump libp2p to 0.46.21     test      dependabot/...  pull_request  6861220481  3m02s    about 1 week ago\n✓       fix: log on SIGHUP instead of crashing  test      fix/sighup-log  pull_request  6859983310  2m44s    about 1 day ago\nX       feat: websocket transport v2            test      ws-v2           pull_request  6858120077  3m15s    about 2 days ago\n✓       ci: cache npm                           test      main            push          6838011236  2m51s    about 5 days ago\n✓       chore: release v0.4.2                   test      main            push          6790022114  4m09s    about 8 days ago\nX       fix: memory leak in peer store          test      fix/peerstore   pull_request  6785504413  3m01s    about 5 days ago\n✓       docs: env vars table                    test      main            push          6768800219  2m30s    about 11 days ago",
    )
    gh(
        r,
        ["run", "view", "6858120077", "--repo", R3, "--log-failed"],
        "node-18\tRun npm test\t2023-11-12T14:22:09.1101324Z   1) metrics endpoint\n node-18\tRun npm test\t2023-11-12T14:22:09.1102210Z        returns prometheus text:\nnode-18\tRun npm test\t2023-11-12T14:22:09.1102788Z      ReferenceError: fetch is not defined\nnode-18\tRun npm test\t2023-11-12T14:22:09.1103301Z       at Context.<anonymous> (test/metrics.test.js:14:17)\nnode-18\tRun npm test\t2023-11-12T14:22:09.2240114Z ##[error]Process completed with exit code 1.",
    )
    r.turn(
        "All three failing PR runs look like the node-18 fetch problem (#379), not real regressions. Check the branch protection and labels next."
    )
    gh(
        r,
        ["api", f"repos/{R3}/branches/main/protection", "--jq", ".required_status_checks.contexts"],
        '["test / node-18","test / node-20","lint"]',
    )
    gh(
        r,
        ["label", "list", "--repo", R3],
        "Showing 12 of 12 labels in orbitdb/relay\n\nbug               Something isn't working  #d73a4a\nci                CI and test infra        #0e8a16\ndocumentation     Improvements to docs     #0075ca\nenhancement       New feature or request   #a2eeef\ngood first issue  Good for newcomers       #7057ff\np1                High priority            #b60205\nsecurity          Security issue           #ee0701\n...",
    )
    gh(
        r,
        ["search", "issues", "--repo", R3, "memory leak", "--state", "all"],
        "Showing 3 of 3 issues\n\norbitdb/relay  #385  fix: memory leak in peer store  (pull request)  open    about 5 days ago\norbitdb/relay  #384  Relay OOM after ~30h uptime                       open    about 6 days ago\norbitdb/relay  #212  Memory grows with many subscriptions                closed  about 1 year ago",
    )
    gh(
        r,
        ["issue", "view", "212", "--repo", R3],
        "Memory grows with many subscriptions #212\nClosed • haadcode opened about 1 year ago • 4 comments\nFixed in v0.2.0 by unsubscribing topics on peer disconnect (#215).",
    )
    gh(
        r,
        [
            "api",
            "graphql",
            "-f",
            'query=query{repository(owner:"orbitdb",name:"relay"){issues(states:OPEN){totalCount} pullRequests(states:OPEN){totalCount} discussions{totalCount}}}',
        ],
        json.dumps(
            {
                "data": {
                    "repository": {
                        "issues": {"totalCount": 23},
                        "pullRequests": {"totalCount": 7},
                        "discussions": {"totalCount": 18},
                    }
                }
            }
        ),
    )
    gh(
        r,
        ["api", f"repos/{R3}/actions/cache/usage"],
        json.dumps(
            {
                "full_name": "orbitdb/relay",
                "active_caches_size_in_bytes": 412881920,
                "active_caches_count": 9,
            }
        ),
    )
    r.turn(
        "Summary: healthy, ~monthly releases; main blocker is node-18 CI (#379) failing 3 PRs, which also blocks the OOM fix #385 via #381. 23 open issues, 9 bugs."
    )
    return r


RUNS = [gh_ci_fix_legit, gh_same_failure_loop, gh_explore_legit]
