"""Travel booking agent calling a JSON API: search_flights(origin, destination, date, cabin),
get_fare_rules(offer_id), hold_seat(offer_id, seat), book(offer_id, passenger),
get_booking(booking_ref), search_hotels(city, checkin, checkout[, page_token]). Invented runs.

Results are JSON strings with offers (ids like "off_8f3a..."), prices, times, request ids
and realistic errors (offer_expired, rate_limited, seat_unavailable).

Label convention: Run(name, shape, label, loop_start). label is "loop-free" or "loop";
loop_start = index (0-based, counting tool calls only, not model turns) of the first tool
call that repeats an attempt that had already come back futile (the first repetition, not
the first attempt); None for loop-free runs."""

# ruff: noqa

import json
import random
import time

from harness import Run

SHAPE = "travel-api"

CARRIERS = {
    ("LHR", "JFK"): [
        ("BA", 112, "07:55", 475),
        ("VS", 3, "11:20", 470),
        ("AA", 101, "14:10", 480),
        ("BA", 177, "18:35", 475),
    ],
    ("JFK", "SFO"): [
        ("UA", 1522, "06:00", 400),
        ("DL", 460, "08:45", 395),
        ("B6", 415, "12:05", 405),
        ("AA", 177, "17:30", 410),
    ],
    ("MAN", "LIS"): [
        ("TP", 1329, "06:40", 170),
        ("U2", 2045, "10:15", 175),
        ("FR", 1644, "17:55", 170),
    ],
    ("LGW", "BCN"): [
        ("VY", 7823, "07:10", 125),
        ("BA", 2710, "12:40", 130),
        ("U2", 8577, "19:05", 125),
    ],
}


def _hex(rng, n):
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _ts(r, plus=0.0):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(r.clock + plus))


def _j(obj):
    return json.dumps(obj, ensure_ascii=False)


def _arrive(dep, minutes):
    h, m = map(int, dep.split(":"))
    t = h * 60 + m + minutes
    return f"{(t // 60) % 24:02d}:{t % 60:02d}"


def _offers(r, rng, origin, dest, date, cabin, base, n=None, seats=None):
    flights = CARRIERS[(origin, dest)]
    if n:
        flights = flights[:n]
    out = []
    for carrier, num, dep, mins in flights:
        price = round(base * rng.uniform(0.85, 1.35), 2)
        out.append(
            {
                "offer_id": "off_" + _hex(rng, 20),
                "carrier": carrier,
                "flight": f"{carrier}{num}",
                "depart": f"{date}T{dep}",
                "arrive": f"{date}T{_arrive(dep, mins)}",
                "stops": 0,
                "cabin": cabin,
                "fare_brand": rng.choice(["Basic", "Standard", "Flex"])
                if cabin == "economy"
                else {"premium_economy": "Premium Standard"}.get(cabin, "Business Saver"),
                "price": {"amount": price, "currency": "GBP" if origin[0] in "LM" else "USD"},
                "seats_left": seats if seats is not None else rng.randint(2, 9),
            }
        )
    out.sort(key=lambda o: o["price"]["amount"])
    return out


def _search(r, rng, origin, dest, date, cabin, base, offers=None, **kw):
    offers = (
        offers if offers is not None else _offers(r, rng, origin, dest, date, cabin, base, **kw)
    )
    res = {
        "request_id": "req_" + _hex(rng, 12),
        "generated_at": _ts(r),
        "offers_expire_at": _ts(r, 900),
        "origin": origin,
        "destination": dest,
        "date": date,
        "offers": offers,
    }
    r.call(
        "search_flights",
        {"origin": origin, "destination": dest, "date": date, "cabin": cabin},
        _j(res),
        dur=rng.uniform(0.9, 2.4),
    )
    return offers


def _err(r, rng, tool, args, error, **extra):
    body = {"error": error, **extra, "request_id": "req_" + _hex(rng, 12), "at": _ts(r)}
    r.call(tool, args, _j(body), error=True, dur=rng.uniform(0.15, 0.6))


def _pax(given, family, dob, **extra):
    """The passenger object of a book call."""
    return {"given_name": given, "family_name": family, "dob": dob, **extra}


def _ticketed(r, ref, ticket, total):
    """The body of a booking that came back TICKETED right away."""
    return {
        "booking_ref": ref,
        "status": "TICKETED",
        "ticket_numbers": [ticket],
        "total": total,
        "created_at": _ts(r),
    }


def _fare_rules(r, offer_id, rules, dur):
    """A get_fare_rules call for offer_id answered with these rules."""
    r.call("get_fare_rules", {"offer_id": offer_id}, _j({"offer_id": offer_id, **rules}), dur=dur)


def _hold(r, rng, offer_id, seat, dur):
    """A successful hold_seat call (hold valid for 15 minutes)."""
    r.call(
        "hold_seat",
        {"offer_id": offer_id, "seat": seat},
        _j({"hold_id": "hld_" + _hex(rng, 10), "seat": seat, "held_until": _ts(r, 900)}),
        dur=dur,
    )


def _book(r, offer_id, passenger, booking, dur):
    """A book call answered with the booking body."""
    r.call("book", {"offer_id": offer_id, "passenger": passenger}, _j(booking), dur=dur)


def _get_ticketed(r, ref, offer, seat, passenger):
    """A get_booking call on a TICKETED single-segment booking."""
    r.call(
        "get_booking",
        {"booking_ref": ref},
        _j(
            {
                "booking_ref": ref,
                "status": "TICKETED",
                "segments": [{"flight": offer["flight"], "depart": offer["depart"], "seat": seat}],
                "passenger": passenger,
                "updated_at": _ts(r),
            }
        ),
        dur=0.5,
    )


# ---------------------------------------------------------------------------------------
# loop-free
# ---------------------------------------------------------------------------------------


def travel_compare_dates():
    """Ten searches on the same route, each a different date, then books the cheapest."""
    r = Run("travel_compare_dates", SHAPE, "loop-free", None)
    rng = random.Random(101)
    r.turn(
        "Task: cheapest economy LHR→JFK in the first ten days of October for Sam Ortiz. I'll search each date."
    )
    best = None
    for d in range(1, 11):
        date = f"2024-10-{d:02d}"
        base = 520 - (140 if d == 8 else 0) + rng.randint(-30, 40)
        offers = _search(r, rng, "LHR", "JFK", date, "economy", base)
        cheapest = offers[0]
        if best is None or cheapest["price"]["amount"] < best["price"]["amount"]:
            best = cheapest
        if d in (3, 6, 9):
            r.turn(
                f"So far the cheapest is {best['flight']} on {best['depart'][:10]} at £{best['price']['amount']:.2f}. Continuing with the next dates."
            )
    r.turn(
        f"Best fare: {best['flight']} {best['depart']} at £{best['price']['amount']:.2f}. Checking fare rules."
    )
    _fare_rules(
        r,
        best["offer_id"],
        {
            "fare_basis": "OLN0Z8S4",
            "refundable": False,
            "change_fee": {"amount": 75.0, "currency": "GBP"},
            "baggage": {"carry_on": "1x23kg", "checked": "0"},
            "seat_selection": "paid, from £28",
            "ticketing_deadline": _ts(r, 3600 * 24),
        },
        dur=0.7,
    )
    r.turn("Non-refundable but changeable for £75; fine per policy. Holding an aisle seat.")
    r.call(
        "hold_seat",
        {"offer_id": best["offer_id"], "seat": "31C"},
        _j(
            {
                "hold_id": "hld_" + _hex(rng, 10),
                "offer_id": best["offer_id"],
                "seat": "31C",
                "seat_fee": {"amount": 28.0, "currency": "GBP"},
                "held_until": _ts(r, 1200),
            }
        ),
        dur=0.9,
    )
    _book(
        r,
        best["offer_id"],
        _pax("Samuel", "Ortiz", "1988-07-14", email="s.ortiz@example.com"),
        _ticketed(
            r,
            "KXQ4T7",
            "125-2418873301",
            {"amount": round(best["price"]["amount"] + 28.0, 2), "currency": "GBP"},
        ),
        dur=2.6,
    )
    _get_ticketed(r, "KXQ4T7", best, "31C", "ORTIZ/SAMUEL MR")
    r.turn("Booked KXQ4T7, ticketed, seat 31C.")
    return r


def travel_rate_limit_then_success():
    """Hotel search, then two rate-limited flight searches with backoff, then success and booking."""
    r = Run("travel_rate_limit_then_success", SHAPE, "loop-free", None)
    rng = random.Random(202)
    r.turn(
        "Task: Barcelona trip 12–15 Nov for Mei Chen: flight from Gatwick and a hotel near Eixample."
    )
    r.call(
        "search_hotels",
        {"city": "Barcelona", "checkin": "2024-11-12", "checkout": "2024-11-15"},
        _j(
            {
                "request_id": "req_" + _hex(rng, 12),
                "results": [
                    {
                        "hotel_id": "htl_bcn_0412",
                        "name": "Hotel Praktik Rambla",
                        "area": "Eixample",
                        "stars": 3,
                        "nightly": {"amount": 131.0, "currency": "EUR"},
                        "rating": 8.7,
                    },
                    {
                        "hotel_id": "htl_bcn_1187",
                        "name": "Casa Bonay",
                        "area": "Eixample",
                        "stars": 4,
                        "nightly": {"amount": 212.0, "currency": "EUR"},
                        "rating": 9.0,
                    },
                    {
                        "hotel_id": "htl_bcn_0093",
                        "name": "H10 Casanova",
                        "area": "Eixample",
                        "stars": 4,
                        "nightly": {"amount": 168.0, "currency": "EUR"},
                        "rating": 8.5,
                    },
                ],
                "total_results": 3,
            }
        ),
        dur=1.3,
    )
    r.turn("H10 Casanova at €168 fits the budget. Now flights.")
    args = {"origin": "LGW", "destination": "BCN", "date": "2024-11-12", "cabin": "economy"}
    _err(r, rng, "search_flights", args, "rate_limited", retry_after=2)
    r.turn("Rate limited; waiting 2 seconds and retrying.")
    r.clock += 2.0
    _err(r, rng, "search_flights", args, "rate_limited", retry_after=4)
    r.turn("Still rate limited, retry_after is 4 now. Backing off 4 seconds.")
    r.clock += 4.0
    offers = _search(r, rng, "LGW", "BCN", "2024-11-12", "economy", 95)
    o = offers[0]
    r.turn(
        f"Got {len(offers)} offers. Cheapest {o['flight']} at £{o['price']['amount']:.2f}. Checking its fare rules."
    )
    _fare_rules(
        r,
        o["offer_id"],
        {
            "refundable": False,
            "change_fee": {"amount": 45.0, "currency": "GBP"},
            "baggage": {"carry_on": "1x10kg", "checked": "0"},
            "ticketing_deadline": _ts(r, 7200),
        },
        dur=0.6,
    )
    _hold(r, rng, o["offer_id"], "8A", dur=0.8)
    _book(
        r,
        o["offer_id"],
        _pax("Mei", "Chen", "1992-02-03"),
        _ticketed(r, "B7MZ2Q", "125-2419001187", o["price"]),
        dur=2.2,
    )
    _get_ticketed(r, "B7MZ2Q", o, "8A", "CHEN/MEI MS")
    r.turn("Outbound booked (B7MZ2Q); the hotel shortlist is H10 Casanova. Reporting back.")
    return r


RULES = [
    {
        "refundable": False,
        "change_fee": 150.0,
        "note": "No refunds. Changes permitted before departure for a fee plus fare difference.",
    },
    {
        "refundable": False,
        "change_fee": 0.0,
        "note": "No refunds. Free changes up to 24h before departure.",
    },
    {
        "refundable": True,
        "cancel_fee": 250.0,
        "note": "Refundable less a cancellation fee of USD 250.",
    },
    {
        "refundable": False,
        "change_fee": 99.0,
        "note": "Basic Economy restrictions apply: no changes after 24h of booking.",
    },
    {
        "refundable": True,
        "cancel_fee": 0.0,
        "note": "Fully refundable until departure. Changes free of charge.",
    },
]


def travel_fare_rules_sweep():
    """Checks fare rules of several different offers looking for a fully refundable one."""
    r = Run("travel_fare_rules_sweep", SHAPE, "loop-free", None)
    rng = random.Random(303)
    r.turn("Task: JFK→SFO on 14 Nov, economy, must be fully refundable (client policy). Searching.")
    offers = _search(r, rng, "JFK", "SFO", "2024-11-14", "economy", 310)
    offers += _search(r, rng, "JFK", "SFO", "2024-11-14", "premium_economy", 520, n=1)
    r.turn(
        "Five offers across two cabins. None says refundable in the summary, so I'll check the fare rules of each, cheapest first."
    )
    chosen = None
    for o, rule in zip(offers, RULES):
        _fare_rules(
            r,
            o["offer_id"],
            {
                "flight": o["flight"],
                "fare_basis": _hex(rng, 6).upper() + "NR",
                **rule,
                "currency": "USD",
                "fetched_at": _ts(r),
            },
            dur=rng.uniform(0.4, 0.9),
        )
        if rule["refundable"] and rule.get("cancel_fee", 1) == 0.0:
            chosen = o
            break
        r.turn(f"{o['flight']}: {rule['note']} Not acceptable; next offer.")
    r.turn(
        f"{chosen['flight']} is fully refundable at ${chosen['price']['amount']:.2f}. Holding a seat."
    )
    _hold(r, rng, chosen["offer_id"], "19D", dur=0.7)
    _book(
        r,
        chosen["offer_id"],
        _pax("Aisha", "Bello", "1979-11-30"),
        _ticketed(r, "RZ93KD", "016-7720044912", chosen["price"]),
        dur=2.4,
    )
    r.turn("Booked RZ93KD on a fully refundable fare.")
    return r


POLL_STAGES = [
    ("PENDING", "payment_authorizing", None),
    ("PENDING", "payment_captured", None),
    ("PENDING", "payment_captured", None),
    ("PENDING", "pnr_created", "queue_position 4"),
    ("PENDING", "ticketing", "queue_position 1"),
    ("TICKETED", "ticketed", None),
]

HOTEL_PAGES = [
    [
        ("htl_lis_0211", "Memmo Alfama", "Alfama", 4, 238.0, 9.2),
        ("htl_lis_0875", "Lisboa Pessoa Hotel", "Chiado", 4, 189.0, 8.8),
        ("htl_lis_0032", "Hotel Avenida Palace", "Baixa", 5, 265.0, 9.0),
    ],
    [
        ("htl_lis_1190", "The Lumiares", "Bairro Alto", 5, 281.0, 9.3),
        ("htl_lis_0448", "Casa do Barão", "Bairro Alto", 3, 142.0, 9.1),
        ("htl_lis_0912", "Hotel Lisboa Plaza", "Avenida", 4, 171.0, 8.6),
    ],
    [
        ("htl_lis_1501", "Browns Central", "Baixa", 4, 164.0, 8.4),
        ("htl_lis_0067", "Hotel Britania", "Avenida", 4, 199.0, 9.0),
    ],
]


def _hotel_results(rows, sold_out=()):
    """search_hotels result entries for (id, name, area, stars, price, rating) rows."""
    return [
        {
            "hotel_id": hid,
            "name": name,
            "area": area,
            "stars": stars,
            "nightly": {"amount": price, "currency": "EUR"},
            "rating": rating,
            "availability": "sold_out" if name in sold_out else "available",
        }
        for hid, name, area, stars, price, rating in rows
    ]


def _hotel_page(rng, page, token_next, sold_out=()):
    return {
        "request_id": "req_" + _hex(rng, 12),
        "results": _hotel_results(HOTEL_PAGES[page], sold_out),
        "next_page_token": token_next,
        "total_results": 8,
    }


def travel_poll_ticketing_and_paging():
    """Books, polls get_booking while the status advances to TICKETED, then pages hotel results."""
    r = Run("travel_poll_ticketing_and_paging", SHAPE, "loop-free", None)
    rng = random.Random(404)
    r.turn(
        "Task: MAN→LIS on 3 June for Tomás Ferreira, then find a hotel 3–6 June in Lisbon, ideally under €180."
    )
    offers = _search(r, rng, "MAN", "LIS", "2024-06-03", "economy", 120)
    o = offers[0]
    _hold(r, rng, o["offer_id"], "12F", dur=0.7)
    created = _ts(r, 2)
    _book(
        r,
        o["offer_id"],
        _pax("Tomás", "Ferreira", "1985-05-21"),
        {
            "booking_ref": "TF8WQ2",
            "status": "PENDING",
            "sub_status": "created",
            "created_at": created,
            "message": "Ticketing is asynchronous; poll get_booking.",
        },
        dur=1.9,
    )
    r.turn("Booking TF8WQ2 created, ticketing is asynchronous. I'll poll until it's ticketed.")
    for status, sub, detail in POLL_STAGES:
        r.clock += 20.0
        body = {
            "booking_ref": "TF8WQ2",
            "status": status,
            "sub_status": sub,
            "created_at": created,
            "updated_at": _ts(r, -3),
        }
        if detail:
            body["detail"] = detail
        if status == "TICKETED":
            body["ticket_numbers"] = ["047-2117730045"]
            body["segments"] = [{"flight": o["flight"], "depart": o["depart"], "seat": "12F"}]
        r.call("get_booking", {"booking_ref": "TF8WQ2"}, _j(body), dur=0.4)
        if sub == "pnr_created":
            r.turn("PNR created, in the ticketing queue at position 4. Progressing; polling again.")
    r.turn("Ticketed (047-2117730045). Now hotels; results are paginated.")
    tokens = [None, "pg_2_" + _hex(rng, 8), "pg_3_" + _hex(rng, 8)]
    for page in range(3):
        args = {"city": "Lisbon", "checkin": "2024-06-03", "checkout": "2024-06-06"}
        if tokens[page]:
            args["page_token"] = tokens[page]
        nxt = tokens[page + 1] if page + 1 < 3 else None
        r.call("search_hotels", args, _j(_hotel_page(rng, page, nxt)), dur=1.1)
        if page == 0:
            r.turn("Page 1: only Lisboa Pessoa Hotel near budget at €189. Fetching page 2.")
        elif page == 1:
            r.turn(
                "Page 2 has Casa do Barão at €142 and Hotel Lisboa Plaza at €171. One more page to be thorough."
            )
    r.turn(
        "Recommend Casa do Barão (€142, 9.1) or Hotel Lisboa Plaza (€171). Flight TF8WQ2 ticketed."
    )
    return r


# ---------------------------------------------------------------------------------------
# loops
# ---------------------------------------------------------------------------------------


BUSINESS_RULES = {
    "refundable": True,
    "cancel_fee": {"amount": 200.0, "currency": "USD"},
    "baggage": {"checked": "2x32kg"},
}


def _hold_expired(r, rng, offer_id, seat):
    """A hold_seat call refused with offer_expired."""
    _err(
        r,
        rng,
        "hold_seat",
        {"offer_id": offer_id, "seat": seat},
        "offer_expired",
        offer_id=offer_id,
        message="Offer is no longer available. Please search again.",
    )


def travel_offer_expired_research():
    """Re-searches the same route every time the hold fails with offer_expired; never changes approach."""
    r = Run("travel_offer_expired_research", SHAPE, "loop", 3)
    rng = random.Random(505)
    r.turn("Task: JFK→SFO business on 14 Nov for Greg Lindqvist. Searching.")
    args = dict(origin="JFK", destination="SFO", date="2024-11-14", cabin="business")
    offers = _search(r, rng, *args.values(), base=1180)
    o = offers[0]
    _fare_rules(r, o["offer_id"], {**BUSINESS_RULES, "fetched_at": _ts(r)}, dur=0.6)
    _hold_expired(r, rng, o["offer_id"], "3A")
    r.turn("The offer expired. I'll search again to get a fresh offer.")
    for i in range(6):
        offers = _search(r, rng, *args.values(), base=1180)  # first one: index 3 -> loop_start
        o = offers[0]
        if i == 2:
            _fare_rules(r, o["offer_id"], {**BUSINESS_RULES, "fetched_at": _ts(r)}, dur=0.6)
        _hold_expired(r, rng, o["offer_id"], "3A" if i % 2 == 0 else "2F")
        r.turn(
            [
                "Expired again. Fresh search, and I'll hold immediately this time.",
                "Still offer_expired even straight after the search. Trying once more.",
                "Same error. Maybe a different seat helps; searching again.",
                "offer_expired again. The prices are moving, so offers are live; retrying.",
                "Again expired. One more fresh search.",
                "Expired. Searching again.",
            ][i]
        )
    return r


def travel_seat_sweep_full_flight():
    """Tries seat after seat on a full flight; every hold is seat_unavailable with an empty seat map."""
    r = Run("travel_seat_sweep_full_flight", SHAPE, "loop", 3)
    rng = random.Random(606)
    r.turn(
        "Task: LHR→JFK on 22 Dec, economy, BA177 specifically (client insists on the evening flight). Searching."
    )
    offers = _search(r, rng, "LHR", "JFK", "2024-12-22", "economy", 690, seats=1)
    o = next(x for x in offers if x["flight"] == "BA177")
    _fare_rules(
        r,
        o["offer_id"],
        {
            "flight": "BA177",
            "refundable": False,
            "change_fee": {"amount": 90.0, "currency": "GBP"},
            "seat_selection": "required at hold",
            "fetched_at": _ts(r),
        },
        dur=0.6,
    )
    r.turn("Seat selection is required at hold. Trying 14A.")
    seats = [f"{row}{col}" for row in (14, 15, 16, 17) for col in "ABCDEF"][:20]
    for i, seat in enumerate(seats):
        _err(
            r,
            rng,
            "hold_seat",
            {"offer_id": o["offer_id"], "seat": seat},
            "seat_unavailable",
            seat=seat,
            flight="BA177",
            cabin_load="100%",
            available_seats=[],
        )  # i == 1 -> index 3: loop_start
        if i == 0:
            r.turn("14A is unavailable. Trying 14B.")
        elif i == 5:
            r.turn("Row 14 is taken. Moving to row 15.")
        elif i == 11:
            r.turn("Rows 14 and 15 are full. Trying row 16 — there must be something free.")
        elif i == 17:
            r.turn("Still nothing. Continuing through row 17.")
    return r


def travel_pending_poll_stuck():
    """Polls get_booking for ~20 minutes while the status stays PENDING with no change at all."""
    r = Run("travel_pending_poll_stuck", SHAPE, "loop", 4)
    rng = random.Random(707)
    r.turn("Task: LGW→BCN on 9 Oct for Hannah Vogel. Searching.")
    offers = _search(r, rng, "LGW", "BCN", "2024-10-09", "economy", 88)
    o = offers[0]
    _hold(r, rng, o["offer_id"], "21C", dur=0.7)
    _book(
        r,
        o["offer_id"],
        _pax("Hannah", "Vogel", "1990-09-12"),
        {
            "booking_ref": "HV2L9M",
            "status": "PENDING",
            "sub_status": "awaiting_airline_confirmation",
            "created_at": _ts(r),
        },
        dur=2.1,
    )
    created = _ts(r)
    updated = _ts(r, 1)
    r.turn("Booking HV2L9M is pending airline confirmation. I'll check on it.")
    for i in range(15):
        r.clock += 80.0  # ~1.5 min between polls, ~22 min in total
        body = {
            "booking_ref": "HV2L9M",
            "status": "PENDING",
            "sub_status": "awaiting_airline_confirmation",
            "created_at": created,
            "updated_at": updated,
            "checked_at": _ts(r),
            "request_id": "req_" + _hex(rng, 12),
        }
        r.call(
            "get_booking", {"booking_ref": "HV2L9M"}, _j(body), dur=rng.uniform(0.3, 0.6)
        )  # i == 1 -> index 4: loop_start
        if i in (0, 4, 9, 13):
            r.turn(
                {
                    0: "Still PENDING. Checking again shortly.",
                    4: "Still awaiting airline confirmation, no change since creation. I'll keep polling.",
                    9: "Fifteen minutes and still PENDING with the same updated_at. Checking again.",
                    13: "Still PENDING. One more check.",
                }[i]
            )
    return r


LIS_RESULTS = [
    ("htl_lis_0211", "Memmo Alfama", "Alfama", 4, 238.0, 9.2),
    ("htl_lis_0875", "Lisboa Pessoa Hotel", "Chiado", 4, 189.0, 8.8),
    ("htl_lis_0032", "Hotel Avenida Palace", "Baixa", 5, 265.0, 9.0),
]


def travel_hotel_search_oscillation():
    """Flips between 'Lisbon' and 'Lisboa' hotel searches that return the same results (target sold out)."""
    r = Run("travel_hotel_search_oscillation", SHAPE, "loop", 3)
    rng = random.Random(808)
    r.turn("Task: MAN→LIS 3 June and Memmo Alfama 3–6 June for Tomás Ferreira.")
    offers = _search(r, rng, "MAN", "LIS", "2024-06-03", "economy", 120)
    o = offers[0]
    _book(
        r,
        o["offer_id"],
        _pax("Tomás", "Ferreira", "1985-05-21"),
        _ticketed(r, "TF3PQ8", "047-2117730991", o["price"]),
        dur=2.0,
    )
    r.turn("Flight booked. Now the hotel.")

    def hotels(city):
        body = {
            "request_id": "req_" + _hex(rng, 12),
            "city_resolved": "Lisboa, Portugal (LIS)",
            "checkin": "2024-06-03",
            "checkout": "2024-06-06",
            "results": _hotel_results(LIS_RESULTS, sold_out=("Memmo Alfama",)),
            "next_page_token": None,
            "total_results": 3,
            "generated_at": _ts(r),
        }
        r.call(
            "search_hotels",
            {"city": city, "checkin": "2024-06-03", "checkout": "2024-06-06"},
            _j(body),
            dur=rng.uniform(0.9, 1.6),
        )

    hotels("Lisbon")  # 2: first attempt, Memmo sold out
    r.turn("Memmo Alfama shows sold_out. Searching again, just in case.")
    hotels("Lisbon")  # 3: loop_start (repeats the search that came back sold out)
    r.turn("Still sold out. Maybe the Portuguese city name returns different inventory.")
    hotels("Lisboa")  # 4
    r.turn("Same three hotels, Memmo still sold out. Let me compare with the English name again.")
    hotels("Lisbon")
    hotels("Lisboa")
    r.turn("Identical results. Perhaps availability refreshed; checking Lisbon again.")
    hotels("Lisbon")
    hotels("Lisboa")
    r.turn("Still sold out under both names. Trying once more.")
    hotels("Lisbon")
    hotels("Lisboa")
    hotels("Lisbon")
    return r


RUNS = [
    travel_compare_dates,
    travel_rate_limit_then_success,
    travel_fare_rules_sweep,
    travel_poll_ticketing_and_paging,
    travel_offer_expired_research,
    travel_seat_sweep_full_flight,
    travel_pending_poll_stuck,
    travel_hotel_search_oscillation,
]
