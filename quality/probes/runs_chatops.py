"""Team-chat ops bot. Invented runs.

Shape "chat-ops". Tools:
  read_channel(channel, limit)  -> messages (ts like "1700001234.005600", user ids like
      "U04ABC12DEF", text), has_more, a next_cursor, fetched_at. Some calls also pass an
      optional `cursor` to read older history.
  post_message(channel, text)   -> {"ok": true, "ts": ...} or {"ok": false, "error": "not_in_channel"}
      (optionally with thread_ts to reply in a thread)
  search_messages(query)        -> matches with channel, ts, user, text, permalink
  add_reaction(channel, ts, name) -> {"ok": true} or {"ok": false, "error": ...}

Label convention: label is "loop-free" or "loop". loop_start = 0-based index (counting tool
calls only) of the first tool call that repeats an attempt that had already come back
futile (the first repetition, not the first attempt); None for loop-free runs. A loop means
the agent is stuck repeating attempts that produce nothing new, for at least 3 futile
repetitions."""
# ruff: noqa

import base64
import json
import random
from datetime import datetime, timezone

from harness import Run

SHAPE = "chat-ops"
ALNUM = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
BOT = "U05QPSB0T7Z"  # the bot's own user id


def _j(obj):
    return json.dumps(obj, separators=(",", ":"))


def _uid(rng):
    return "U0" + rng.choice("3456") + "".join(rng.choice(ALNUM) for _ in range(8))


def _cid(rng):
    return "C0" + rng.choice("3456") + "".join(rng.choice(ALNUM) for _ in range(8))


class _TS:
    def __init__(self, rng, start=1700001234.0):
        self.rng = rng
        self.t = start

    def next(self, lo=20, hi=240):
        self.t += self.rng.uniform(lo, hi)
        return f"{int(self.t)}.{self.rng.randint(0, 999999):06d}"


def _next_cursor(ts):
    return base64.b64encode(f"next_ts:{ts.replace('.', '')}".encode()).decode()


def _fetched(r):
    return datetime.fromtimestamp(r.clock, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _msg(ts, user, text, **extra):
    m = {"type": "message", "ts": ts, "user": user, "text": text}
    m.update(extra)
    return m


def _history(r, cid, name, msgs_newest_first, has_more):
    out = {
        "ok": True,
        "channel": {"id": cid, "name": name},
        "messages": msgs_newest_first,
        "has_more": has_more,
        "fetched_at": _fetched(r),
    }
    if has_more:
        out["response_metadata"] = {"next_cursor": _next_cursor(msgs_newest_first[-1]["ts"])}
    return out


def _permalink(name, ts):
    return f"https://acme-eng.chat.example.com/archives/{name}/p{ts.replace('.', '')}"


def _match(chan, ts, user, text, link=None):
    """One search_messages match; its permalink is under `link` (default: the channel name)."""
    return {
        "channel": {"name": chan},
        "ts": ts,
        "user": user,
        "text": text,
        "permalink": _permalink(link or chan, ts),
    }


def _read_channel(r, channel, limit, cid, name, msgs_newest_first, has_more, cursor=None):
    """A read_channel call answered with _history() of the given messages."""
    args = {"channel": channel, "limit": limit}
    if cursor is not None:
        args["cursor"] = cursor
    r.call("read_channel", args, _j(_history(r, cid, name, msgs_newest_first, has_more)))


def _search(r, query, matches, **messages_extra):
    """A search_messages call for query answered with these matches."""
    r.call(
        "search_messages",
        {"query": query},
        _j(
            {
                "ok": True,
                "query": query,
                "messages": {"total": len(matches), "matches": matches, **messages_extra},
            }
        ),
    )


def _post(r, channel, text, cid, ts, thread_ts=None):
    """A post_message call (a thread reply when thread_ts is given) answered ok with ts."""
    args = {"channel": channel, "text": text}
    ok = {"ok": True, "channel": cid, "ts": ts}
    if thread_ts is not None:
        args["thread_ts"] = ok["thread_ts"] = thread_ts
    r.call("post_message", args, _j(ok))


def _react(r, channel, ts, name, result=None, error=False):
    """An add_reaction call, answered ok unless another result is given."""
    r.call(
        "add_reaction",
        {"channel": channel, "ts": ts, "name": name},
        _j({"ok": True}) if result is None else result,
        error=error,
    )


# ---------------------------------------------------------------------------------------
# loop-free 1: summarise a busy incident channel, reading older pages, then one summary
# ---------------------------------------------------------------------------------------
def chat_incident_summary():
    rng = random.Random(1101)
    r = Run("chat_incident_summary", SHAPE, "loop-free", None)
    ts = _TS(rng, 1700056920.0)
    ic, sre1, sre2, dev1, sup = (_uid(rng) for _ in range(5))
    pd_bot, deploy_bot = "U04PGRDTY01", "U04DPL0YBT9"
    chan = "#inc-2318-checkout-latency"
    cid = _cid(rng)
    lines = [
        (
            pd_bot,
            ":rotating_light: INC-2318 triggered: checkout-api p99 latency > 2s (SLO burn 14x). Service: checkout-api, urgency: high",
        ),
        (ic, "I'm IC. sre on-call please ack. Bridge: https://meet.example.com/inc-2318"),
        (sre1, "ack'd. p99 went from 380ms to 2.7s at 14:02 UTC. error rate still low (0.4%)"),
        (sre1, "not region-specific, us-east-1 and eu-west-1 both affected"),
        (
            dev1,
            "checkout-api 4.12.3 went out at 13:55 via deploy-bot. diff includes the new tax calculation client",
        ),
        (ic, f"<@{dev1}> can we roll back 4.12.3?"),
        (
            dev1,
            "rolling back also reverts the VAT fix for DE that finance needs live today. checking traces first",
        ),
        (
            sre2,
            "traces: ~1.9s spent in tax-svc /v2/quote. new client isn't reusing connections, full TLS handshake per request",
        ),
        (sre2, "tax-svc also pinned at 24 pods, HPA at its ceiling"),
        (sup, "support seeing ~40 tickets 'payment spinning forever', mostly mobile app"),
        (ic, "status page updated: 'Investigating degraded checkout performance'"),
        (
            dev1,
            "confirmed: TaxQuoteClient builds a new http client per call. PR #8812 switches to a shared pool",
        ),
        (ic, "decision: hotfix forward instead of rollback. ETA?"),
        (dev1, "PR #8812 approved, building 4.12.4, ~12 min"),
        (sre2, "bumped tax-svc HPA max 24 -> 40 as a stopgap"),
        (sre1, "p99 down to 1.4s after the HPA bump"),
        (deploy_bot, "checkout-api 4.12.4 deploy started (canary 10%)"),
        (sre1, "canary p99 410ms vs 1.3s on old pods :tada:"),
        (deploy_bot, "checkout-api 4.12.4 promoted to 100%"),
        (sre1, "p99 back to 360ms, SLO burn under 1x"),
        (sup, "ticket inflow stopped, we'll reply to the affected customers"),
        (
            ic,
            f"monitoring 30m before resolving. <@{sre2}> please revert the HPA max tomorrow after review",
        ),
        (
            ic,
            f"resolving INC-2318. postmortem owner <@{dev1}>, due Friday. <@{BOT}> please post a summary here for the exec digest",
        ),
    ]
    msgs = [_msg(ts.next(30, 300), u, t) for u, t in lines]
    newest = list(reversed(msgs))
    r.turn(
        "Asked to summarise INC-2318. Reading the channel newest-first, then older pages until has_more is false."
    )
    _read_channel(r, chan, 10, cid, chan[1:], newest[:10], True)
    r.turn(
        "Latest 10 cover the hotfix and resolution. Need the start of the incident; reading the older page."
    )
    _read_channel(
        r, chan, 10, cid, chan[1:], newest[10:20], True, cursor=_next_cursor(newest[9]["ts"])
    )
    r.turn(
        "That has the diagnosis (per-request TLS in the tax client). One more page for the trigger."
    )
    _read_channel(
        r, chan, 10, cid, chan[1:], newest[20:], False, cursor=_next_cursor(newest[19]["ts"])
    )
    r.turn(
        "Full timeline read. I'd like the PR details and the customer impact number, which weren't given here."
    )
    _search(
        r,
        "PR #8812 TaxQuoteClient",
        [
            _match(
                "checkout-dev",
                "1700058113.228104",
                dev1,
                "PR #8812: reuse a single pooled HTTP client in TaxQuoteClient (max 64 conns, keepalive 90s). Adds a regression test asserting one client per process.",
                link="C04CHKDEV22",
            ),
            _match(
                "code-review",
                "1700058240.610977",
                sre2,
                "approved #8812, please also add a connection-count metric to the tax client dashboard",
                link="C04CDREVW01",
            ),
        ],
    )
    _search(
        r,
        "INC-2318 affected customers in:#support-escalations",
        [
            _match(
                "support-escalations",
                "1700061022.004410",
                sup,
                "INC-2318 wrap-up: 63 customers contacted, 11 abandoned carts re-sent with a 10% code. No failed charges found.",
                link="C05SUPESC19",
            )
        ],
    )
    _read_channel(
        r,
        "#deploys",
        5,
        "C04DEPL0YS1",
        "deploys",
        [
            _msg(
                "1700059851.330021",
                deploy_bot,
                "checkout-api 4.12.4 promoted to 100% (canary 9m, 0 rollbacks)",
            ),
            _msg(
                "1700059290.118742",
                deploy_bot,
                "checkout-api 4.12.4 canary 10% started by " + dev1,
            ),
            _msg("1700058702.551903", deploy_bot, "search-indexer 1.8.0 deployed to 100%"),
            _msg("1700056523.902115", deploy_bot, "checkout-api 4.12.3 promoted to 100%"),
            _msg("1700055911.073340", deploy_bot, "checkout-api 4.12.3 canary 10% started"),
        ],
        True,
    )
    summary = (
        "*INC-2318 summary (checkout latency), resolved*\n"
        "- *Impact:* checkout-api p99 rose from 380ms to 2.7s starting 14:02 UTC in all regions; ~40 support tickets, 63 customers contacted, no failed charges.\n"
        "- *Cause:* 4.12.3 (13:55) added a tax client that opened a new HTTP/TLS connection per quote, saturating tax-svc (HPA capped at 24 pods).\n"
        "- *Mitigation:* HPA max raised to 40 (p99 to 1.4s), then hotfix 4.12.4 (PR #8812, pooled client) canaried and promoted; p99 360ms.\n"
        "- *Decision:* fixed forward rather than rolling back, to keep the DE VAT fix live.\n"
        f"- *Follow-ups:* postmortem <@{dev1}> due Friday; <@{sre2}> to revert the HPA max; add a connection-count metric to the tax client dashboard."
    )
    _post(r, chan, summary, cid, ts.next(1800, 2400))
    _react(r, chan, msgs[-1]["ts"], "white_check_mark")
    r.turn("Summary posted in the incident channel and the IC's request marked done.")
    return r


# ---------------------------------------------------------------------------------------
# loop-free 2: answering several different questions in different threads
# ---------------------------------------------------------------------------------------
def chat_answer_threads():
    rng = random.Random(1202)
    r = Run("chat_answer_threads", SHAPE, "loop-free", None)
    ts = _TS(rng, 1700140000.0)
    a, bb, c, d, e, f = (_uid(rng) for _ in range(6))
    cid = _cid(rng)
    q1 = _msg(
        ts.next(),
        a,
        f"<@{BOT}> how do I rotate the staging postgres creds? vault says my lease expired",
        reply_count=0,
    )
    chatter1 = _msg(ts.next(), c, "anyone else seeing slow CI runners this morning?", reply_count=2)
    q2 = _msg(ts.next(), bb, f"<@{BOT}> who's on call for payments this week?", reply_count=0)
    q3 = _msg(
        ts.next(),
        c,
        f"<@{BOT}> which region is kafka-prod-2 in? need it for the VPC peering form",
        reply_count=0,
    )
    chatter2 = _msg(
        ts.next(),
        e,
        "reminder: platform office hours at 3pm",
        reactions=[{"name": "+1", "users": [a, c], "count": 2}],
    )
    q4 = _msg(
        ts.next(),
        d,
        f"<@{BOT}> where's the runbook for cert renewals on the edge proxies?",
        reply_count=0,
    )
    hist = [q4, chatter2, q3, q2, chatter1, q1]
    r.turn("Checking #help-platform for unanswered questions addressed to me.")
    _read_channel(r, "#help-platform", 20, cid, "help-platform", hist, False)
    r.turn(
        "Four questions for me: staging DB creds, payments on-call, kafka-prod-2 region, cert runbook. Taking them in order."
    )

    def reply(chan, q, text):
        _post(r, chan, text, cid, ts.next(30, 90), thread_ts=q["ts"])

    _search(
        r,
        "rotate staging postgres credentials vault",
        [
            _match(
                "platform-announce",
                "1699022051.443120",
                e,
                "Staging DB creds now come from vault path database/creds/staging-rw. Run `vault read database/creds/staging-rw`; leases last 8h, renew with `vault lease renew`.",
            ),
            _match(
                "help-platform",
                "1699450117.002281",
                f,
                "if your lease expired just read the path again, you get a fresh user. old user is revoked automatically",
            ),
        ],
    )
    reply(
        "#help-platform",
        q1,
        "Leases on staging creds are 8h and can't be revived. Run `vault read database/creds/staging-rw` to get a fresh user/password (the expired one is revoked automatically). To extend an active one: `vault lease renew <lease_id>`.",
    )
    _search(
        r,
        "payments on-call schedule this week",
        [
            _match(
                "payments-oncall",
                "1700092811.551030",
                "U04PGRDTY01",
                f"On-call handoff: primary <@{f}>, secondary <@{a}> until Mon 09:00 UTC.",
            )
        ],
    )
    reply(
        "#help-platform",
        q2,
        f"Payments on-call this week: primary <@{f}>, secondary <@{a}>, handing off Monday 09:00 UTC.",
    )
    _search(
        r,
        "kafka-prod-2 region",
        [
            _match(
                "data-infra",
                "1698311402.883412",
                e,
                "kafka-prod-2 is live in eu-west-1 (3 AZs), VPC vpc-0a41c9e2 / 10.42.0.0/16. kafka-prod-1 stays in us-east-1.",
            ),
            _match(
                "help-platform", "1698900023.120088", c, "thanks! peering for kafka-prod-1 done"
            ),
        ],
    )
    reply(
        "#help-platform",
        q3,
        "kafka-prod-2 is in eu-west-1 (VPC vpc-0a41c9e2, CIDR 10.42.0.0/16). kafka-prod-1 is the us-east-1 one.",
    )
    _search(
        r,
        "edge proxy cert renewal runbook",
        [
            _match(
                "sre",
                "1689113000.211930",
                d,
                "Runbook for edge cert renewal (certbot on the envoy hosts): https://wiki.example.com/sre/edge-certs",
            )
        ],
    )
    r.turn(
        "That runbook is from July and mentions certbot; I believe edge moved to cert-manager. Checking for a newer one."
    )
    _search(
        r,
        "cert-manager edge envoy runbook",
        [
            _match(
                "sre",
                "1697551290.774015",
                e,
                "Edge proxies migrated to cert-manager. Old certbot runbook is deprecated; new one: https://wiki.example.com/sre/edge-certs-cert-manager (manual renew: `cmctl renew -n edge edge-tls`).",
            ),
        ],
    )
    reply(
        "#help-platform",
        q4,
        "Edge proxies use cert-manager now: https://wiki.example.com/sre/edge-certs-cert-manager (manual renew: `cmctl renew -n edge edge-tls`). The older certbot page is deprecated.",
    )
    r.turn("#help-platform done. #help-data also pings me sometimes; checking it.")
    did = _cid(rng)
    q5 = _msg(
        ts.next(),
        bb,
        f"<@{BOT}> is events_raw partitioned by day or by hour? my query scans way too much",
        reply_count=0,
    )
    _read_channel(
        r,
        "#help-data",
        20,
        did,
        "help-data",
        [q5, _msg("1700131002.118200", e, "dbt run finished for the marketing models")],
        False,
    )
    _search(
        r,
        "events_raw partition",
        [
            _match(
                "data-eng",
                "1698777310.600215",
                e,
                "events_raw is partitioned by event_date (day) and clustered by event_type, tenant_id. Always filter on event_date.",
            )
        ],
    )
    reply(
        "#help-data",
        q5,
        "events_raw is partitioned by day (`event_date`) and clustered on `event_type, tenant_id`. Filter on `event_date` (not `event_ts`) to prune partitions.",
    )
    r.turn("Answered all five questions in their threads.")
    return r


# ---------------------------------------------------------------------------------------
# loop-free 3: polling a deploy channel until "deploy finished" appears
# ---------------------------------------------------------------------------------------
def chat_poll_deploy():
    rng = random.Random(1303)
    r = Run("chat_poll_deploy", SHAPE, "loop-free", None)
    ts = _TS(rng, 1700203300.0)
    dbot = "U04DPL0YBT9"
    eng, qa = _uid(rng), _uid(rng)
    cid = "C04DEPL0YS1"
    older = [
        _msg(ts.next(), dbot, "search-indexer 1.8.1 deploy #5518 finished (9m02s)"),
        _msg(ts.next(), eng, "kicking off api-gateway 2.31.0, should be ~20 min"),
    ]
    stages = [
        [
            _msg(
                ts.next(),
                dbot,
                f"api-gateway v2.31.0 deploy #5521 started by <@{eng}> (pipeline https://ci.example.com/p/5521)",
            )
        ],
        [
            _msg(
                ts.next(120, 200),
                dbot,
                "#5521 build complete, image sha256:9f1c2e0b7a… pushed (3m12s)",
            )
        ],
        [
            _msg(
                ts.next(60, 90),
                dbot,
                "#5521 step 3/6: running migrations (0042_add_idempotency_keys)",
            )
        ],
        [
            _msg(ts.next(40, 60), dbot, "#5521 migrations complete (41s)"),
            _msg(ts.next(30, 60), dbot, "#5521 canary 10%: error rate 0.03%, p99 212ms"),
        ],
        [
            _msg(ts.next(200, 260), dbot, "#5521 canary 50%: error rate 0.02%, p99 208ms"),
            _msg(ts.next(10, 30), qa, "smoke tests on canary green"),
        ],
        [_msg(ts.next(200, 300), dbot, "#5521 promoted to 100%")],
        [
            _msg(
                ts.next(120, 200),
                dbot,
                "#5521 deploy finished :white_check_mark: api-gateway v2.31.0 live in all regions (18m44s)",
            )
        ],
    ]
    r.turn(
        "Waiting for api-gateway 2.31.0 to finish deploying, then announce in #releases. Polling #deploys."
    )
    seen = list(older)
    polls = [[0, 1], [2], [3], [4], [5, 6]]
    notes = [
        "Build done and deploy started. Checking again in a couple of minutes.",
        "Migrations running.",
        "Migrations complete, canary at 10% with normal error rate.",
        "Canary 50%, QA smoke green. Waiting for promotion.",
    ]
    for k, idxs in enumerate(polls):
        for i in idxs:
            seen.extend(stages[i])
        r.clock += 0 if k == 0 else 120.0  # bot sleeps between polls
        _read_channel(r, "#deploys", 8, cid, "deploys", list(reversed(seen))[:8], True)
        if k < len(notes):
            r.turn(notes[k])
    finished = stages[6][0]
    r.turn("'deploy finished' is in. Announcing.")
    _post(
        r,
        "#releases",
        ":rocket: api-gateway v2.31.0 is live in all regions (deploy #5521, 18m44s). Includes idempotency keys for POST /payments (migration 0042). Canary error rate stayed at 0.02-0.03%.",
        "C04RELEASE7",
        ts.next(20, 40),
    )
    _react(r, "#deploys", finished["ts"], "rocket")
    _post(r, "#deploys", "Announced in #releases.", cid, ts.next(5, 15), thread_ts=finished["ts"])
    return r


# ---------------------------------------------------------------------------------------
# loop-free 4: different search queries that each find different things
# ---------------------------------------------------------------------------------------
def chat_search_research():
    rng = random.Random(1404)
    r = Run("chat_search_research", SHAPE, "loop-free", None)
    ts = _TS(rng, 1700301000.0)
    asker, own1, own2, sre = (_uid(rng) for _ in range(4))
    q = _msg(
        ts.next(),
        asker,
        f"<@{BOT}> has redis sentinel failover broken payments-gateway before? we're planning a sentinel upgrade next week. who owns pgw?",
    )
    _read_channel(
        r,
        "#sre",
        15,
        _cid(rng),
        "sre",
        [q, _msg("1700297410.552019", sre, "postgres minor upgrades done for staging")],
        True,
    )
    r.turn(
        "Three things to find: past sentinel failover incidents with payments-gateway, the owner, and relevant config."
    )

    _search(
        r,
        "sentinel failover payments-gateway",
        [
            _match(
                "inc-1877-pgw-errors",
                "1688720112.301554",
                sre,
                "pgw 5xx spike lines up exactly with sentinel failover of redis-payments at 09:14, clients kept writing to the old master for 40s",
            ),
            _match(
                "sre",
                "1688731190.007721",
                own1,
                "INC-1877 is ours, pgw's redis client caches the master address and doesn't subscribe to +switch-master",
            ),
        ],
    )
    r.turn("Yes, INC-1877 in July. Now the owner.")
    _search(
        r,
        "payments-gateway owner team",
        [
            _match(
                "service-catalog",
                "1694001200.118330",
                "U04CATAL0G2",
                f"payments-gateway: team-payments-core, tech lead <@{own1}>, EM <@{own2}>, tier 1, on-call rota payments-primary",
            ),
        ],
    )
    _search(
        r,
        "INC-1877 postmortem",
        [
            _match(
                "postmortems",
                "1689078003.550912",
                own1,
                "INC-1877 postmortem: https://wiki.example.com/pm/inc-1877. Action items: PGW-3921 (subscribe to sentinel events), PGW-3922 (lower down-after-milliseconds)",
            ),
        ],
    )
    _search(
        r,
        "PGW-3921",
        [
            _match(
                "team-payments-core",
                "1691402204.220417",
                own1,
                "PGW-3921 merged: client now re-resolves master on +switch-master, tested with forced failover in staging (4s blip)",
            ),
            _match(
                "team-payments-core",
                "1691402350.901337",
                own2,
                "nice, closing PGW-3921. PGW-3922 still open, needs sentinel config change from SRE",
            ),
        ],
    )
    _search(
        r,
        "down-after-milliseconds sentinel",
        [
            _match(
                "sre",
                "1691500087.330019",
                sre,
                "sentinel down-after-milliseconds is still 30000 on redis-payments; PGW-3922 wants 5000, will do with the next sentinel upgrade",
            )
        ],
    )
    r.turn(
        "PGW-3921 fixed the client; PGW-3922 (down-after-milliseconds) is still pending, which matters for next week's upgrade. Checking the incident channel for the failover duration."
    )
    _read_channel(
        r,
        "#inc-1877-pgw-errors",
        20,
        _cid(rng),
        "inc-1877-pgw-errors",
        [
            _msg(
                "1688725500.610201",
                own1,
                "resolved; failover itself took 31s (down-after 30s), pgw recovered only after pod restarts at 09:26",
            ),
            _msg("1688721033.002818", sre, "restarting pgw pods to drop cached master"),
            _msg(
                "1688720112.301554",
                sre,
                "pgw 5xx spike lines up exactly with sentinel failover of redis-payments at 09:14",
            ),
        ],
        False,
    )
    r.call(
        "post_message",
        {
            "channel": "#sre",
            "thread_ts": q["ts"],
            "text": (
                "Yes, once: INC-1877 (Jul 7). A sentinel failover of redis-payments took 31s and pgw kept writing to the old master "
                "until pods were restarted 12 min later. Postmortem: https://wiki.example.com/pm/inc-1877\n"
                "- PGW-3921 (client re-resolves master on +switch-master) shipped in Aug; staging failover now a ~4s blip.\n"
                "- PGW-3922 (down-after-milliseconds 30000 -> 5000) is *still open* and was planned for the sentinel upgrade, so worth doing in the same change.\n"
                f"Owner: team-payments-core, tech lead <@{own1}>, EM <@{own2}>."
            ),
        },
        _j({"ok": True, "channel": "C04SRECHAN8", "ts": ts.next(300, 500), "thread_ts": q["ts"]}),
    )
    r.turn("Answered with history, status of both action items and the owners.")
    return r


# ---------------------------------------------------------------------------------------
# loop 1: posting to a channel the bot is not in, reworded each time
# ---------------------------------------------------------------------------------------
def chat_not_in_channel_loop():
    rng = random.Random(1505)
    r = Run("chat_not_in_channel_loop", SHAPE, "loop", 4)
    ts = _TS(rng, 1700400000.0)
    lead, pm = _uid(rng), _uid(rng)
    req = _msg(
        ts.next(),
        lead,
        f"<@{BOT}> once the 4.13 notes are final in #release-drafts, please post them to #announcements",
    )
    _read_channel(r, "#eng-leads", 10, _cid(rng), "eng-leads", [req], False)
    _search(
        r,
        "release notes 4.13 final",
        [
            _match(
                "release-drafts",
                "1700399120.004551",
                pm,
                "4.13 notes FINAL, ok to publish",
                link="C05RELDRFT3",
            )
        ],
    )
    notes = (
        "Offline mode for the field app, bulk CSV import for assets (up to 50k rows), SSO group sync for Okta and Azure AD, "
        "and 30+ fixes including the timezone bug in scheduled reports."
    )
    _read_channel(
        r,
        "#release-drafts",
        5,
        "C05RELDRFT3",
        "release-drafts",
        [
            _msg("1700399120.004551", pm, "4.13 notes FINAL, ok to publish"),
            _msg("1700398702.330118", pm, "*Release 4.13*: " + notes),
        ],
        True,
    )
    r.turn("Notes are final. Posting to #announcements.")
    texts = [
        ("#announcements", ":mega: *Release 4.13 is out!* " + notes),
        ("#announcements", "*Release 4.13 is now available.* Highlights: " + notes),
        ("announcements", "Release 4.13 shipped today: " + notes),
        ("C05ANN7QX2M", ":tada: 4.13 is live! " + notes + " Full notes in #release-drafts."),
        (
            "#announcements",
            "4.13 released: offline mode, bulk CSV import, SSO group sync, 30+ fixes.",
        ),
        ("#announcements", "Hi all, release 4.13 is live. " + notes),
    ]
    thoughts = [
        None,
        "not_in_channel. Maybe the formatting (emoji prefix) tripped something; rewording.",
        "Same error. Try the channel name without the '#'.",
        "Still not_in_channel. Use the channel id instead of the name.",
        "Still failing. Maybe the message is too long for an announcement channel; a short version.",
        "Same again. One more try with a plainer wording.",
    ]
    for (chan, text), th in zip(texts, thoughts):
        if th:
            r.turn(th)
        r.call(
            "post_message",
            {"channel": chan, "text": text},
            _j(
                {
                    "ok": False,
                    "error": "not_in_channel",
                    "warning": "missing_charset",
                    "response_metadata": {"warnings": ["missing_charset"]},
                }
            ),
            error=True,
        )
    r.turn("Posting keeps failing with not_in_channel; will retry shortly.")
    return r


# ---------------------------------------------------------------------------------------
# loop 2: re-reading a channel waiting for a reply that never comes, reminders in between
# ---------------------------------------------------------------------------------------
def chat_waiting_for_approval_loop():
    rng = random.Random(1606)
    r = Run("chat_waiting_for_approval_loop", SHAPE, "loop", 4)
    ts = _TS(rng, 1700500000.0)
    approver, requester = "U04ABC12DEF", _uid(rng)
    cid = _cid(rng)
    dm = "D05QX7K2M1A"
    cr = _msg(
        ts.next(),
        requester,
        f"CR-8812: raise max_connections on pg-orders-prod from 400 to 600 during tonight's window. Needs approval from <@{approver}>. <@{BOT}> please chase and tell me when approved.",
    )
    hist = [cr]
    r.turn("Need approval on CR-8812 from U04ABC12DEF. Reading #change-requests.")
    _read_channel(r, "#change-requests", 10, cid, "change-requests", list(hist), False)
    ping_ts = ts.next(30, 60)
    _post(
        r,
        "#change-requests",
        f"<@{approver}> CR-8812 is waiting on your approval (window opens 22:00 UTC). Reply here with 'approved' or concerns.",
        cid,
        ping_ts,
        thread_ts=cr["ts"],
    )
    cr_after = dict(cr, reply_count=1, latest_reply=ping_ts, reply_users=[BOT])
    hist = [cr_after]
    reminders = [
        "Friendly reminder: CR-8812 (pg-orders-prod max_connections 400 -> 600) still needs your approval in #change-requests.",
        "Hi! Just a friendly reminder about CR-8812, the change window opens at 22:00 UTC.",
        "Friendly reminder #3: CR-8812 approval is still pending.",
        "Friendly reminder: could you take a look at CR-8812 when you get a moment?",
    ]
    seq = ["read", "dm", "read", "dm", "read", "dm", "read", "read", "dm", "read"]
    notes = {
        0: "No reply yet. Sending a DM reminder.",
        2: "Still nothing. Another reminder.",
        4: "No new messages. Reminding again.",
        6: "Still no reply.",
        7: "Nothing. One more nudge.",
    }
    k = 0
    for i, step in enumerate(seq):
        r.clock += 300.0
        if step == "read":
            _read_channel(r, "#change-requests", 10, cid, "change-requests", hist, False)
        else:
            _post(r, dm, reminders[k], dm, ts.next(300, 320))
            k += 1
        if i in notes:
            r.turn(notes[i])
    r.turn("Approver still hasn't replied. I'll keep checking.")
    return r


# ---------------------------------------------------------------------------------------
# loop 3: paraphrased searches that return the same 3 results
# ---------------------------------------------------------------------------------------
def chat_paraphrase_search_loop():
    rng = random.Random(1707)
    r = Run("chat_paraphrase_search_loop", SHAPE, "loop", 2)
    ts = _TS(rng, 1700600000.0)
    asker, x, y, z = (_uid(rng) for _ in range(4))
    q = _msg(
        ts.next(),
        asker,
        f"<@{BOT}> customer on an annual plan wants a partial refund for the unused 5 months. what's our policy / how do I do it in the billing console?",
    )
    _read_channel(r, "#help-billing", 10, _cid(rng), "help-billing", [q], False)
    same = [
        {
            "channel": {"name": "billing-eng"},
            "ts": "1696100231.550120",
            "user": x,
            "text": "refund endpoint now supports idempotency keys, see PR #4410",
        },
        {
            "channel": {"name": "help-billing"},
            "ts": "1697002918.003317",
            "user": y,
            "text": "monthly plans: full refund within 14 days, no questions asked. just click Refund on the invoice",
        },
        {
            "channel": {"name": "finance"},
            "ts": "1698230110.711846",
            "user": z,
            "text": "annual plan renewals for EMEA move to the 1st of the month starting Jan",
        },
    ]
    queries = [
        "partial refund annual plan",
        "prorated refund yearly subscription",
        "refund annual plan partially",
        "annual subscription partial refund policy",
        "how to refund part of an annual plan billing console",
        "pro-rata refund unused months annual",
        "annual plan refund remaining months",
    ]
    thoughts = [
        "Three hits: an API change, the monthly refund rule, and EMEA renewal dates. None covers partial annual refunds. Rephrasing.",
        "Same three. Maybe 'prorated' isn't the word they use.",
        "Same results again. Try asking for the policy explicitly.",
        "Same three messages. Perhaps console wording.",
        "Still the same three. Try 'pro-rata'.",
        "Identical results. One more phrasing.",
    ]
    for i, query in enumerate(queries):
        order = [same[(i + k) % 3] for k in range(3)] if i % 2 else same
        _search(
            r,
            query,
            [
                dict(
                    m_,
                    permalink=_permalink(m_["channel"]["name"], m_["ts"]),
                    score=round(rng.uniform(0.41, 0.63), 3),
                )
                for m_ in order
            ],
            paging={"count": 20, "total": 3, "page": 1, "pages": 1},
        )
        if i < len(thoughts):
            r.turn(thoughts[i])
    r.call(
        "post_message",
        {
            "channel": "#help-billing",
            "thread_ts": q["ts"],
            "text": "I couldn't find a documented policy for partial refunds on annual plans. The only refund rule I found is for monthly plans (full refund within 14 days).",
        },
        _j({"ok": True, "channel": "C05HLPBILL2", "ts": ts.next(600, 900), "thread_ts": q["ts"]}),
    )
    return r


# ---------------------------------------------------------------------------------------
# loop 4: add_reaction failing with already_reacted, again and again
# ---------------------------------------------------------------------------------------
def chat_already_reacted_loop():
    rng = random.Random(1808)
    r = Run("chat_already_reacted_loop", SHAPE, "loop", 5)
    ts = _TS(rng, 1700700000.0)
    dbot, qa = "U04DPL0YBT9", _uid(rng)
    cid = "C04DEPL0YS1"
    deploys = []
    for svc, ver in [
        ("billing-api", "3.4.1"),
        ("search-indexer", "1.8.2"),
        ("notifier", "0.19.0"),
        ("api-gateway", "2.31.1"),
    ]:
        t = ts.next(300, 900)
        deploys.append(
            _msg(t, dbot, f"{svc} v{ver} deploy finished, QA sign-off: <@{qa}> :+1:", reply_count=1)
        )
    deploys[3]["reactions"] = [{"name": "white_check_mark", "users": [BOT], "count": 1}]
    r.turn(
        "Mark every QA-signed deploy in #deploys with :white_check_mark: for the release tracker."
    )
    _read_channel(r, "#deploys", 10, cid, "deploys", list(reversed(deploys)), True)
    r.turn("Four signed-off deploys. Reacting to each.")
    for d in deploys[:3]:
        _react(r, "#deploys", d["ts"], "white_check_mark")
    last = deploys[3]["ts"]
    fail = _j({"ok": False, "error": "already_reacted"})
    _react(r, "#deploys", last, "white_check_mark", fail, error=True)
    r.turn("already_reacted on the api-gateway message. Retrying.")
    _react(r, "#deploys", last, "white_check_mark", fail, error=True)
    r.turn("Still already_reacted. Re-reading the channel to check the message.")
    _read_channel(r, "#deploys", 10, cid, "deploys", list(reversed(deploys)), True)
    r.turn("The message is there. Trying the reaction again.")
    _react(r, "#deploys", last, "white_check_mark", fail, error=True)
    r.turn("Maybe the name needs colons.")
    _react(r, "#deploys", last, ":white_check_mark:", fail, error=True)
    _react(r, cid, last, "white_check_mark", fail, error=True)
    r.turn("Using the channel id didn't help either. Retrying with the plain name once more.")
    _react(r, "#deploys", last, "white_check_mark", fail, error=True)
    return r


RUNS = [
    chat_incident_summary,
    chat_answer_threads,
    chat_poll_deploy,
    chat_search_research,
    chat_not_in_channel_loop,
    chat_waiting_for_approval_loop,
    chat_paraphrase_search_loop,
    chat_already_reacted_loop,
]
