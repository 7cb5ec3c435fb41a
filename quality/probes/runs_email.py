"""Email/calendar assistant: list_messages(folder, query), read_message(id),
send_message(to, subject, body), create_event(...), find_free_slots(...). Invented runs.

Label convention: loop_start = index of the first tool call that repeats an attempt that
had already come back futile (the first repetition, not the first attempt)."""

import json

from harness import Run

ME = "priya.raman@northwind.io"

# id, from, subject, date, body, reply (None = no reply needed)
INBOX = [
    (
        "18bc2f1a9e4d7001",
        "Marco Bellini <marco.bellini@northwind.io>",
        "Q4 roadmap review — slides attached?",
        "Mon, 13 Nov 2023 08:02:11 +0000",
        "Hi Priya, can you send me the latest roadmap deck before Wednesday? I want to pre-read it. Thanks, Marco",
        (
            "Re: Q4 roadmap review — slides attached?",
            "Hi Marco, the deck is in the shared drive under Roadmap/Q4/roadmap-v7.pdf. I'll ping you if anything changes before Wednesday. Priya",
        ),
    ),
    (
        "18bc2f40c1aa7002",
        "GitHub <noreply@github.com>",
        "[northwind/api] Dependabot alert: axios < 1.6.0",
        "Mon, 13 Nov 2023 08:15:40 +0000",
        "A high severity vulnerability (CVE-2023-45857) was found in axios, a dependency of northwind/api...",
        None,
    ),
    (
        "18bc30019b227003",
        "Lena Fischer <lena.fischer@acmecorp.de>",
        "Contract renewal — pricing question",
        "Mon, 13 Nov 2023 09:31:05 +0100",
        "Hello Priya, before we sign the renewal, could you confirm whether the 12% volume discount still applies if we drop to 40 seats? Best, Lena",
        (
            "Re: Contract renewal — pricing question",
            "Hi Lena, the 12% volume discount applies from 50 seats. At 40 seats it would be 8%. I've copied our account manager to send an updated quote. Best, Priya",
        ),
    ),
    (
        "18bc31a7d4e17004",
        "Figma <no-reply@figma.com>",
        "Weekly digest: 14 comments on 'Checkout v3'",
        "Mon, 13 Nov 2023 10:00:00 +0000",
        "Here's what happened in your files this week...",
        None,
    ),
    (
        "18bc32c8800a7005",
        "Tom Okafor <tom.okafor@northwind.io>",
        "Out sick today",
        "Mon, 13 Nov 2023 10:12:44 +0000",
        "Hey, I'm out sick today, can you cover the 2pm vendor call? Notes are in the doc. Tom",
        (
            "Re: Out sick today",
            "Feel better Tom — I'll take the 2pm vendor call and post notes in the doc afterwards. Priya",
        ),
    ),
    (
        "18bc3321f9b07006",
        "HR Team <hr@northwind.io>",
        "Reminder: open enrollment closes Nov 30",
        "Mon, 13 Nov 2023 11:00:03 +0000",
        "This is a reminder that benefits open enrollment closes on November 30...",
        None,
    ),
    (
        "18bc34e6aa5c7007",
        "Sara Lindqvist <sara.lindqvist@northwind.io>",
        "Can you review my PRD by Thursday?",
        "Mon, 13 Nov 2023 11:47:29 +0000",
        "Hi! I've shared the PRD for bulk export. Could you review by Thursday EOD? Mainly the permissions section. Sara",
        (
            "Re: Can you review my PRD by Thursday?",
            "Hi Sara, yes — I'll review the bulk export PRD by Thursday EOD, focusing on the permissions section. Priya",
        ),
    ),
    (
        "18bc35b01d727008",
        "Stripe <notifications@stripe.com>",
        "Your November invoice is available",
        "Mon, 13 Nov 2023 12:05:51 +0000",
        "Invoice INV-2023-1184 for $2,340.00 is now available...",
        None,
    ),
    (
        "18bc3702e8337009",
        "Daniel Cho <daniel.cho@brightlabs.co>",
        "Intro: Priya <> Daniel (data partnership)",
        "Mon, 13 Nov 2023 13:20:17 -0800",
        "Hi Priya, Jess suggested we connect about a data partnership. Would you have 30 min next week? Daniel",
        (
            "Re: Intro: Priya <> Daniel (data partnership)",
            "Hi Daniel, thanks for reaching out — happy to talk. Tuesday 21 Nov 9:00-9:30 PT or Wednesday 22 Nov 10:00 PT work for me; let me know which suits. Priya",
        ),
    ),
    (
        "18bc37f3a4c1700a",
        "Jira <jira@northwind.atlassian.net>",
        "[NW-2231] Export fails for >10k rows (assigned to you)",
        "Mon, 13 Nov 2023 13:41:02 +0000",
        "Tom Okafor assigned NW-2231 to you. Priority: High...",
        None,
    ),
    (
        "18bc38a1226e700b",
        "Aisha Khan <aisha.khan@northwind.io>",
        "Offsite dates — please vote",
        "Mon, 13 Nov 2023 14:03:38 +0000",
        "Team, please reply with your preference: Jan 16-17 or Jan 23-24. Aisha",
        (
            "Re: Offsite dates — please vote",
            "Hi Aisha, Jan 23-24 works better for me (Jan 16 clashes with the board prep). Priya",
        ),
    ),
    (
        "18bc392c0f55700c",
        "LinkedIn <messages-noreply@linkedin.com>",
        "You appeared in 9 searches this week",
        "Mon, 13 Nov 2023 14:30:00 +0000",
        "See who's looking at your profile...",
        None,
    ),
    (
        "18bc3a87bb12700d",
        "Marco Bellini <marco.bellini@northwind.io>",
        "Re: Q4 roadmap review — one more thing",
        "Mon, 13 Nov 2023 15:10:09 +0000",
        "Also, can we move the review from Wed 3pm to Wed 4pm? Marco",
        ("Re: Q4 roadmap review — one more thing", "Wed 4pm works — I'll update the invite. Priya"),
    ),
    (
        "18bc3b4d9a03700e",
        "AWS Billing <aws-billing@amazon.com>",
        "AWS Budgets: 'prod-monthly' exceeded 80%",
        "Mon, 13 Nov 2023 16:22:45 +0000",
        "Your budget prod-monthly has exceeded 80% of the $18,000.00 limit...",
        None,
    ),
    (
        "18bc3c19e7f8700f",
        "Chen Wei <chen.wei@northwind.io>",
        "Interview feedback needed",
        "Mon, 13 Nov 2023 17:05:12 +0000",
        "Could you submit your feedback for the Senior PM candidate (J. Alvarez) in Greenhouse by tomorrow? Chen",
        (
            "Re: Interview feedback needed",
            "Hi Chen, done — feedback for J. Alvarez is in Greenhouse (Strong yes, notes attached). Priya",
        ),
    ),
]


def listing(msgs):
    lines = [f"{len(msgs)} messages"]
    for mid, frm, subj, date, _b, _rep in msgs:
        lines.append(f"{mid}  {date[5:22]}  {frm.split('<')[0].strip():22.22}  {subj}")
    return "\n".join(lines)


def full(m):
    mid, frm, subj, date, body, _rep = m
    return (
        f"Message-ID: <{mid}@mail.northwind.io>\nFrom: {frm}\nTo: {ME}\nDate: {date}\n"
        f"Subject: {subj}\nContent-Type: text/plain; charset=UTF-8\n\n{body}"
    )


def email_triage_legit():
    r = Run("email_inbox_triage_legit", "email-calendar", "loop-free", None)
    r.turn("Triage the 15 unread messages; reply where a reply is needed, skip notifications.")
    r.call("list_messages", {"folder": "INBOX", "query": "is:unread"}, listing(INBOX))
    for i, m in enumerate(INBOX):
        r.call("read_message", {"id": m[0]}, full(m))
        if m[5] is not None:
            to = m[1].split("<")[1].rstrip(">")
            subj, body = m[5]
            r.call(
                "send_message",
                {"to": to, "subject": subj, "body": body},
                json.dumps(
                    {"id": f"18bc4{i:02d}e{7 + i}b0c{i}f1", "threadId": m[0], "labelIds": ["SENT"]}
                ),
            )
        if m[0] == "18bc3a87bb12700d":
            r.call(
                "create_event",
                {
                    "title": "Q4 roadmap review",
                    "start": "2023-11-15T16:00:00+00:00",
                    "end": "2023-11-15T17:00:00+00:00",
                    "attendees": ["marco.bellini@northwind.io"],
                    "replaces": "evt_7q2k9c",
                },
                json.dumps(
                    {
                        "id": "evt_8m3x1d",
                        "status": "confirmed",
                        "htmlLink": "https://calendar.google.com/event?eid=ZXZ0XzhtM3gxZA",
                    }
                ),
            )
        if i == 7:
            r.turn(
                "Halfway. Notifications so far: GitHub, Figma, HR, Stripe — no replies needed. NW-2231 noted for the task list."
            )
    r.turn("Triage done: 8 replies sent, 1 event moved, 7 notifications skipped.")
    return r


def slots(day_ranges):
    return json.dumps(
        {"timeZone": "America/Los_Angeles", "slots": day_ranges, "duration_minutes": 60}
    )


ATT = [
    "priya.raman@northwind.io",
    "marco.bellini@northwind.io",
    "lena.fischer@acmecorp.de",
    "daniel.cho@brightlabs.co",
]


def email_scheduling_legit():
    r = Run("email_schedule_four_people_legit", "email-calendar", "loop-free", None)
    r.turn(
        "Schedule a 60-minute partnership kickoff with Marco, Lena (Berlin) and Daniel (SF), within the next two weeks."
    )
    r.call(
        "find_free_slots",
        {
            "attendees": ATT,
            "start": "2023-11-14",
            "end": "2023-11-17",
            "duration_minutes": 60,
            "working_hours_only": True,
        },
        slots([])[:-1] + ', "note": "no common 60-minute slot in working hours of all attendees"}',
    )
    r.call(
        "find_free_slots",
        {
            "attendees": ATT,
            "start": "2023-11-20",
            "end": "2023-11-22",
            "duration_minutes": 60,
            "working_hours_only": True,
        },
        slots(
            [
                {
                    "start": "2023-11-21T08:00:00-08:00",
                    "end": "2023-11-21T09:00:00-08:00",
                    "conflicts": [
                        "lena.fischer@acmecorp.de: outside working hours (17:00-18:00 CET)"
                    ],
                }
            ]
        ),
    )
    r.turn(
        "Only slot next Mon–Wed is after Lena's day ends. Thanksgiving Thu/Fri is out for the US people. Try the week after."
    )
    r.call(
        "find_free_slots",
        {
            "attendees": ATT,
            "start": "2023-11-27",
            "end": "2023-12-01",
            "duration_minutes": 60,
            "working_hours_only": True,
        },
        slots(
            [
                {"start": "2023-11-28T07:00:00-08:00", "end": "2023-11-28T08:00:00-08:00"},
                {
                    "start": "2023-11-29T08:00:00-08:00",
                    "end": "2023-11-29T09:00:00-08:00",
                    "conflicts": ["marco.bellini@northwind.io: tentative 'Dentist'"],
                },
                {"start": "2023-11-30T07:30:00-08:00", "end": "2023-11-30T08:30:00-08:00"},
            ]
        ),
    )
    r.call(
        "list_messages",
        {"folder": "INBOX", "query": "from:daniel.cho@brightlabs.co"},
        "1 messages\n18bc3702e8337009  13 Nov 2023 13:20  Daniel Cho              Intro: Priya <> Daniel (data partnership)",
    )
    r.call(
        "read_message",
        {"id": "18bc3702e8337009"},
        full(INBOX[8]) + "\n\nP.S. I don't take meetings before 8am PT.",
    )
    r.turn(
        "Daniel doesn't meet before 8am PT, which rules out Tue 28 07:00 and Thu 30 07:30. Wed 29 08:00 has Marco tentative. Check a half-hour later window on Wed/Thu with 45 min."
    )
    r.call(
        "find_free_slots",
        {
            "attendees": ATT,
            "start": "2023-11-29",
            "end": "2023-11-30",
            "duration_minutes": 45,
            "earliest": "08:00",
            "timezone": "America/Los_Angeles",
        },
        json.dumps(
            {
                "timeZone": "America/Los_Angeles",
                "duration_minutes": 45,
                "slots": [
                    {
                        "start": "2023-11-29T08:00:00-08:00",
                        "end": "2023-11-29T08:45:00-08:00",
                        "conflicts": ["marco.bellini@northwind.io: tentative 'Dentist'"],
                    },
                    {"start": "2023-11-30T08:15:00-08:00", "end": "2023-11-30T09:00:00-08:00"},
                ],
            }
        ),
    )
    r.call(
        "create_event",
        {
            "title": "Northwind × Brightlabs × Acme — partnership kickoff",
            "start": "2023-11-30T08:15:00-08:00",
            "end": "2023-11-30T09:00:00-08:00",
            "attendees": ATT[1:],
            "conference": "meet",
            "description": "Agenda: goals, data scope, next steps.",
        },
        json.dumps(
            {
                "id": "evt_4ka91pz",
                "status": "confirmed",
                "start": "2023-11-30T16:15:00Z",
                "end": "2023-11-30T17:00:00Z",
                "hangoutLink": "https://meet.google.com/qxw-prtn-kzb",
            }
        ),
    )
    for to, name, local in [
        ("marco.bellini@northwind.io", "Marco", "8:15-9:00 PT"),
        ("lena.fischer@acmecorp.de", "Lena", "17:15-18:00 CET"),
        ("daniel.cho@brightlabs.co", "Daniel", "8:15-9:00 PT"),
    ]:
        r.call(
            "send_message",
            {
                "to": to,
                "subject": "Partnership kickoff — Thu 30 Nov",
                "body": f"Hi {name}, I've sent an invite for Thu 30 Nov, {local} (45 min). Meet link in the invite. Priya",
            },
            json.dumps({"id": f"18bd0{len(name)}1a{len(to)}c", "labelIds": ["SENT"]}),
        )
    r.call(
        "find_free_slots",
        {
            "attendees": ["priya.raman@northwind.io", "marco.bellini@northwind.io"],
            "start": "2023-11-27",
            "end": "2023-11-28",
            "duration_minutes": 30,
        },
        slots(
            [
                {"start": "2023-11-27T13:00:00-08:00", "end": "2023-11-27T13:30:00-08:00"},
                {"start": "2023-11-28T10:30:00-08:00", "end": "2023-11-28T11:00:00-08:00"},
            ]
        ),
    )
    r.call(
        "create_event",
        {
            "title": "Prep: partnership kickoff",
            "start": "2023-11-27T13:00:00-08:00",
            "end": "2023-11-27T13:30:00-08:00",
            "attendees": ["marco.bellini@northwind.io"],
        },
        json.dumps({"id": "evt_4kb22qa", "status": "confirmed"}),
    )
    r.turn("Kickoff booked for Thu 30 Nov 8:15 PT, prep with Marco Mon 27 Nov 13:00 PT.")
    return r


def ev_err():
    return json.dumps(
        {
            "error": {
                "code": 400,
                "status": "INVALID_ARGUMENT",
                "message": "Invalid event: end must be after start",
                "field": "end",
            }
        }
    )


def email_event_validation_loop():
    r = Run("email_create_event_end_before_start_loop", "email-calendar", "loop", 3)
    r.turn("Book the 1:1 Lena asked for: Tuesday 21 Nov, 4pm my time (PT), one hour.")
    r.call(
        "read_message",
        {"id": "18bc30019b227003"},
        full(INBOX[2]) + "\n\nPS: could we do a quick 1:1 on Tue 21 Nov at 4pm your time?",
    )
    r.call(
        "find_free_slots",
        {
            "attendees": [ME, "lena.fischer@acmecorp.de"],
            "start": "2023-11-21",
            "end": "2023-11-21",
            "duration_minutes": 60,
            "working_hours_only": False,
        },
        slots([{"start": "2023-11-21T15:00:00-08:00", "end": "2023-11-21T18:00:00-08:00"}]),
    )
    # bug: start written in PT offset, end written in UTC ('Z') -> end is 09:00 PT, before 16:00 PT
    attempts = [
        ("2023-11-21T16:00:00-08:00", "2023-11-21T17:00:00Z"),
        ("2023-11-21T16:00:00-08:00", "2023-11-21T17:00:00.000Z"),
        ("2023-11-21T16:00:00-08:00", "2023-11-21T17:30:00Z"),
        ("2023-11-21T16:00-08:00", "2023-11-21T17:00Z"),
        ("2023-11-21T15:59:00-08:00", "2023-11-21T17:00:00Z"),
        ("2023-11-21T16:00:00-08:00", "2023-11-21T18:00:00Z"),
        ("2023-11-21T16:00:00-0800", "2023-11-21T17:00:00+00:00"),
        ("2023-11-21T16:00:00-08:00", "2023-11-21T17:00:59Z"),
        ("2023-11-21T16:00:00-08:00", "2023-11-21T23:00:00+00:00"),
    ]
    for k, (s, e) in enumerate(attempts):
        args = {
            "title": "Lena / Priya 1:1",
            "start": s,
            "end": e,
            "attendees": ["lena.fischer@acmecorp.de"],
        }
        if k == 5:
            args["timezone"] = "America/Los_Angeles"
        r.call("create_event", args, ev_err(), error=True)
        if k == 0:
            r.turn("Validation error. Maybe it wants milliseconds in the timestamp.")
        elif k == 3:
            r.turn(
                "Still 'end must be after start'. I'll nudge the start a minute earlier and make the meeting longer."
            )
        elif k == 6:
            r.turn("Let me try a different offset format for the end time.")
    return r


def email_poll_inbox_loop():
    r = Run("email_relist_waiting_for_reply_loop", "email-calendar", "loop", 3)
    r.turn(
        "Send the vendor contract to legal and wait for Dana's approval before replying to the vendor."
    )
    r.call(
        "send_message",
        {
            "to": "dana.whitfield@northwind.io",
            "subject": "Approval needed: Brightlabs DPA v3",
            "body": "Hi Dana, attached is the Brightlabs DPA v3 (redlines accepted). Can you approve so I can countersign today? Priya",
        },
        json.dumps(
            {"id": "18bd11f02a9c4e71", "threadId": "18bd11f02a9c4e71", "labelIds": ["SENT"]}
        ),
    )
    r.turn("Sent. Checking for Dana's reply.")
    old = "2 messages\n18bb90c2de0f6a11  08 Nov 2023 10:02  Dana Whitfield          Re: Brightlabs DPA v2 comments\n18bb72a7c41b5e09  06 Nov 2023 16:45  Dana Whitfield          Brightlabs DPA v2 comments"
    r.call(
        "list_messages",
        {"folder": "INBOX", "query": "from:dana.whitfield@northwind.io newer_than:1d"},
        "0 messages",
    )
    r.call("list_messages", {"folder": "INBOX", "query": "from:dana.whitfield@northwind.io"}, old)
    for k in range(14):
        r.call(
            "list_messages", {"folder": "INBOX", "query": "from:dana.whitfield@northwind.io"}, old
        )
        if k in (3, 8, 12):
            r.turn("No reply from Dana yet. I'll check again.")
    return r


RUNS = [
    email_triage_legit,
    email_scheduling_legit,
    email_event_validation_loop,
    email_poll_inbox_loop,
]
