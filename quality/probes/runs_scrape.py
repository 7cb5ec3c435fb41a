"""Web-scraping agent (shape "web-scraping"): http_get(url, headers) returning a status line,
response headers (Date, Set-Cookie, CF-Ray, ...) and a body snippet; parse_html(selector)
applied to the last fetched page; save_record(data). Invented runs.

Label convention: label is "loop-free" or "loop"; loop_start = 0-based index (tool calls
only) of the first tool call that repeats an attempt that had already come back futile
(the first repetition, not the first attempt); None for loop-free runs."""

# ruff: noqa

import base64
import json
import random
from email.utils import formatdate

from harness import Run

SHAPE = "web-scraping"

UA_BOT = "python-httpx/0.27.0"
UA_CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36"


# ---------------------------------------------------------------- helpers


def hexid(rng, n):
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def tok(rng, n=43):
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    return "".join(rng.choice(alphabet) for _ in range(n))


def http_get(r, url, headers, response, error=False, dur=0.8):
    """An http_get call of url answered with a Site.response() text."""
    r.call("http_get", {"url": url, "headers": headers}, response, error=error, dur=dur)


def parse_html(r, selector, result, dur=0.8):
    """A parse_html call of selector on the last fetched page."""
    r.call("parse_html", {"selector": selector}, result, dur=dur)


def save_record(r, data, result, dur=0.8):
    """A save_record call storing data."""
    r.call("save_record", {"data": data}, result, dur=dur)


class Site:
    """Builds plausible HTTP responses whose volatile parts (Date, ray ids, cookies, nonces) vary."""

    def __init__(self, r, rng, host, colo="LHR", cloudflare=True):
        self.r, self.rng, self.host, self.colo, self.cf = r, rng, host, colo, cloudflare

    def date(self):
        return formatdate(self.r.clock + 2.0, usegmt=True)

    def ray(self):
        return f"{hexid(self.rng, 16)}-{self.colo}"

    def cf_bm(self):
        exp = formatdate(self.r.clock + 1802.0, usegmt=True)
        return f"__cf_bm={tok(self.rng, 43)}-{int(self.r.clock)}-1.0.1.1-{tok(self.rng, 64)}; path=/; expires={exp}; domain=.{self.host.split('www.', 1)[-1]}; HttpOnly; Secure; SameSite=None"

    def response(
        self,
        status,
        reason,
        body,
        ctype="text/html; charset=utf-8",
        extra=None,
        total_bytes=None,
        ray=None,
    ):
        h = [f"HTTP/1.1 {status} {reason}", f"Date: {self.date()}", f"Content-Type: {ctype}"]
        if total_bytes:
            h.append(f"Content-Length: {total_bytes}")
        for k, v in extra or []:
            h.append(f"{k}: {v}")
        if self.cf:
            h.append(f"Set-Cookie: {self.cf_bm()}")
            h.append("Server: cloudflare")
            h.append(f"CF-Ray: {ray + '-' + self.colo if ray else self.ray()}")
        else:
            h.append("Server: nginx")
            h.append(
                f"X-Request-Id: {hexid(self.rng, 8)}-{hexid(self.rng, 4)}-{hexid(self.rng, 4)}-{hexid(self.rng, 12)}"
            )
        snippet = body
        if total_bytes and len(body) < total_bytes:
            snippet = body + f"\n… [body truncated, {total_bytes} bytes total]"
        return "\n".join(h) + "\n\n" + snippet


# ---------------------------------------------------------------- loop-free 1


MATERIALS = [
    "Brass",
    "Opal Glass",
    "Rattan",
    "Matte Black",
    "Smoked Oak",
    "Linen",
    "Chrome",
    "Ceramic",
    "Copper",
    "Fluted Glass",
    "Travertine",
    "Walnut",
]
KINDS = [
    "Pendant",
    "Wall Light",
    "Floor Lamp",
    "Table Lamp",
    "Flush Ceiling Light",
    "Spotlight Bar",
    "Desk Lamp",
    "Chandelier",
    "Picture Light",
]
NAMES = [
    "Arden",
    "Bexley",
    "Corin",
    "Dalby",
    "Elstow",
    "Farrow",
    "Greta",
    "Harlow",
    "Ives",
    "Juno",
    "Kesh",
    "Loxley",
    "Marlo",
    "Nyla",
    "Orrin",
    "Pell",
    "Quill",
    "Rye",
    "Soren",
    "Tavi",
]


def lighting_items(rng, page, n):
    items = []
    for i in range(n):
        name = f"{rng.choice(NAMES)} {rng.choice(MATERIALS)} {rng.choice(KINDS)}"
        price = rng.choice(
            [29, 35, 45, 49, 59, 65, 79, 89, 95, 119, 145, 179, 229, 289]
        ) + rng.choice([0.0, 0.5, 0.99])
        stock = rng.choice(["In stock", "In stock", "In stock", "Low stock", "Pre-order"])
        items.append(
            {
                "sku": f"LH-{20000 + page * 100 + i:05d}",
                "name": name,
                "price": f"£{price:.2f}",
                "stock": stock,
            }
        )
    return items


def scrape_paginate_listing():
    """?page=1..12 of a product listing; every page brings new items until the last (shorter) page."""
    rng = random.Random(2101)
    r = Run("scrape_paginate_listing", SHAPE, "loop-free", None)
    site = Site(r, rng, "www.lumenhome.co.uk", colo="LHR")
    headers = {"User-Agent": UA_CHROME, "Accept-Language": "en-GB,en;q=0.9"}
    cookie = f"_shop_session={tok(rng, 32)}"
    total = 0
    r.turn(
        "Scraping the Lighting collection. The first page should tell me how many pages there are."
    )
    for page in range(1, 13):
        n = 12 if page < 12 else 7
        items = lighting_items(rng, page, n)
        url = f"https://www.lumenhome.co.uk/collections/lighting?page={page}"
        cards = "".join(
            f'<li class="product-card" data-sku="{it["sku"]}"><a href="/products/{it["name"].lower().replace(" ", "-")}">{it["name"]}</a><span class="price">{it["price"]}</span></li>'
            for it in items[:3]
        )
        nxt = (
            f'<a rel="next" href="?page={page + 1}">Next</a>'
            if page < 12
            else '<span class="disabled">Next</span>'
        )
        body = (
            f'<!DOCTYPE html><html lang="en-GB"><head><meta charset="utf-8"><title>Lighting – Page {page} of 12 | Lumen Home</title>'
            f'<meta name="csrf-token" content="{tok(rng)}"><script nonce="{tok(rng, 22)}">window.__SHOP={{"page":{page},"cart":"c_{hexid(rng, 12)}"}}</script></head>'
            f'<body><h1>Lighting</h1><p class="count">139 products</p><ul class="product-grid">{cards}…</ul><nav class="pagination">{nxt}</nav>'
        )
        req_headers = dict(headers, Cookie=cookie) if page > 1 else headers
        http_get(
            r,
            url,
            req_headers,
            site.response(
                200,
                "OK",
                body,
                total_bytes=rng.randint(61000, 78000),
                extra=[
                    ("Cache-Control", "private, max-age=0"),
                    ("Set-Cookie", f"_shop_session={tok(rng, 32)}; path=/; HttpOnly; SameSite=Lax"),
                ],
            ),
            dur=rng.uniform(0.35, 1.1),
        )
        parse_html(
            r,
            "li.product-card",
            f"{n} elements matched:\n"
            + "\n".join(
                f"{it['sku']} | {it['name']} | {it['price']} | {it['stock']}" for it in items
            ),
            dur=0.05,
        )
        total += n
        save_record(
            r,
            {"source": url, "page": page, "items": items},
            f"ok: {n} records appended to lumenhome_lighting.jsonl (total {total})",
            dur=0.04,
        )
        if page in (1, 6, 11):
            r.turn(f"Page {page} done, {total} of 139 saved. Continuing with page {page + 1}.")
    r.turn("Page 12 had 7 items and no next link; 139 of 139 products saved.")
    return r


# ---------------------------------------------------------------- loop-free 2


BOOKS = [
    (
        "the-restless-tide",
        "The Restless Tide: Oceans in a Warming World",
        "Marisol Achebe",
        "978-1-913412-07-3",
        312,
        "2019-04-02",
        "$18.95",
        14,
    ),
    (
        "small-wonders",
        "Small Wonders: A Field Guide to Microbes",
        "Teodor Lind",
        "978-1-913412-11-0",
        248,
        "2020-09-15",
        "$16.50",
        3,
    ),
    (
        "counting-stars",
        "Counting Stars: Astronomy Before the Telescope",
        "Ines Farouk",
        "978-1-913412-15-8",
        401,
        "2018-02-20",
        "$24.00",
        0,
    ),
    (
        "deep-time",
        "Deep Time and the Making of Mountains",
        "Callum Reyes",
        "978-1-913412-19-6",
        356,
        "2021-06-01",
        "$21.95",
        22,
    ),
    (
        "the-quiet-forest",
        "The Quiet Forest: Fungal Networks Explained",
        "Aiko Brennan",
        "978-1-913412-22-6",
        288,
        "2022-03-08",
        "$19.99",
        9,
    ),
    (
        "weather-makers",
        "Weather Makers: A Short History of Forecasting",
        "Priya Osei",
        "978-1-913412-26-4",
        264,
        "2017-11-11",
        "$15.00",
        5,
    ),
    (
        "bright-matter",
        "Bright Matter: The Physics of Light",
        "Jonah Whitcombe",
        "978-1-913412-30-1",
        332,
        "2023-01-17",
        "$26.50",
        31,
    ),
    (
        "salt-and-stone",
        "Salt and Stone: Chemistry of the Earth",
        "Lena Vasquez",
        "978-1-913412-34-9",
        296,
        "2020-05-26",
        "$17.25",
        12,
    ),
]


def scrape_detail_links():
    """Category page -> 8 different detail links, each fetched, parsed and saved once."""
    rng = random.Random(2102)
    r = Run("scrape_detail_links", SHAPE, "loop-free", None)
    site = Site(r, rng, "books.tidewaterpress.com", cloudflare=False)
    h = {"User-Agent": UA_CHROME, "Accept": "text/html"}
    links = "".join(
        f'<li><a class="book-link" href="/catalog/book/{slug}">{title}</a></li>'
        for slug, title, *_ in BOOKS[:4]
    )
    http_get(
        r,
        "https://books.tidewaterpress.com/catalog/science",
        h,
        site.response(
            200,
            "OK",
            f'<!doctype html><html><head><title>Science &amp; Nature — Tidewater Press</title><meta name="csrf-token" content="{tok(rng)}"></head>'
            f'<body><main><h1>Science &amp; Nature</h1><p>8 titles</p><ul class="catalog">{links}…',
            total_bytes=23817,
            extra=[
                ("Set-Cookie", f"tp_sess={hexid(rng, 32)}; Path=/; HttpOnly; Secure"),
                ("ETag", f'W/"{hexid(rng, 10)}"'),
            ],
        ),
        dur=0.62,
    )
    parse_html(
        r,
        "a.book-link@href",
        "8 elements matched:\n" + "\n".join(f"/catalog/book/{b[0]}" for b in BOOKS),
        dur=0.03,
    )
    r.turn("8 titles. Fetch each detail page and pull the metadata block.")
    for i, (slug, title, author, isbn, pages, pub, price, stock) in enumerate(BOOKS):
        url = f"https://books.tidewaterpress.com/catalog/book/{slug}"
        body = (
            f'<!doctype html><html><head><title>{title} — Tidewater Press</title><meta name="csrf-token" content="{tok(rng)}">'
            f'<link rel="canonical" href="{url}"></head><body><article class="book"><h1>{title}</h1><p class="author">by {author}</p>'
            f'<dl class="book-meta"><dt>ISBN</dt><dd>{isbn}</dd><dt>Pages</dt><dd>{pages}</dd><dt>Published</dt><dd>{pub}</dd>'
            f'<dt>Price</dt><dd>{price}</dd></dl><p class="stock">{"Out of stock" if stock == 0 else f"{stock} in stock"}</p>'
            f'<form method="post" action="/cart"><input type="hidden" name="_token" value="{tok(rng, 40)}">…'
        )
        http_get(
            r,
            url,
            h,
            site.response(
                200,
                "OK",
                body,
                total_bytes=rng.randint(14000, 19000),
                extra=[("ETag", f'W/"{hexid(rng, 10)}"')],
            ),
            dur=rng.uniform(0.3, 0.9),
        )
        parse_html(
            r,
            "article.book h1, p.author, dl.book-meta dd, p.stock",
            f"{title}\nby {author}\n{isbn}\n{pages}\n{pub}\n{price}\n{'Out of stock' if stock == 0 else f'{stock} in stock'}",
            dur=0.03,
        )
        save_record(
            r,
            {
                "url": url,
                "title": title,
                "author": author,
                "isbn": isbn,
                "pages": pages,
                "published": pub,
                "price": price,
                "stock": stock,
            },
            f"ok: record {isbn} written (tidewater_science.jsonl, {i + 1} rows)",
            dur=0.03,
        )
        if i == 3:
            r.turn("Half done; the Counting Stars page showed 'Out of stock', saved stock=0.")
    return r


# ---------------------------------------------------------------- loop-free 3


JOB_TITLES = [
    "Senior Data Engineer",
    "Data Engineer II",
    "Analytics Engineer",
    "Staff Data Engineer, Platform",
    "Data Engineer (Streaming)",
    "Lead Data Engineer",
    "Junior Data Engineer",
    "Data Platform Engineer",
    "Machine Learning Data Engineer",
    "Data Engineer, Growth",
]
COMPANIES = [
    "Ferncliff Bank",
    "Orbitly",
    "Haversham Health",
    "Quanta Freight",
    "Nimbus Retail",
    "Polder Energy",
    "Kestrel Games",
    "Marlowe Insurance",
    "Tessaract Labs",
    "Brightline Transit",
]
CITIES = [
    "Leeds",
    "Manchester",
    "London (hybrid)",
    "Remote (UK)",
    "Bristol",
    "Edinburgh",
    "Glasgow",
    "Cambridge",
]


def job_rows(rng, page):
    rows = []
    for i in range(10):
        rows.append(
            {
                "id": f"J{rng.randint(410000, 499999)}",
                "title": rng.choice(JOB_TITLES),
                "company": rng.choice(COMPANIES),
                "location": rng.choice(CITIES),
                "salary": f"£{rng.randint(45, 95)},000 - £{rng.randint(96, 130)},000",
                "posted": f"{rng.randint(1, 29)} days ago",
            }
        )
    return rows


def scrape_429_backoff():
    """Job board pages 1..6; two 429s, each honoured with the Retry-After wait and then a success."""
    rng = random.Random(2103)
    r = Run("scrape_429_backoff", SHAPE, "loop-free", None)
    site = Site(r, rng, "jobs.northwind-careers.com", colo="MAN")
    h = {"User-Agent": UA_CHROME, "Accept": "text/html,application/xhtml+xml"}
    saved = 0

    def ok_page(page):
        nonlocal saved
        rows = job_rows(rng, page)
        url = f"https://jobs.northwind-careers.com/search?q=data+engineer&page={page}"
        cards = "".join(
            f'<div class="job" data-id="{j["id"]}"><h2>{j["title"]}</h2><span class="co">{j["company"]}</span></div>'
            for j in rows[:2]
        )
        body = f'<html><head><title>Data engineer jobs – page {page} | Northwind Careers</title><meta name="csrf" content="{tok(rng)}"></head><body><p>58 jobs</p>{cards}…'
        return url, rows, body

    for page in range(1, 7):
        url, rows, body = ok_page(page)
        if page in (3, 5):
            wait = 20 if page == 3 else 30
            http_get(
                r,
                url,
                h,
                site.response(
                    429,
                    "Too Many Requests",
                    '{"error":"rate_limited","message":"Too many requests. Please slow down."}',
                    ctype="application/json",
                    extra=[
                        ("Retry-After", str(wait)),
                        ("X-RateLimit-Limit", "30"),
                        ("X-RateLimit-Remaining", "0"),
                        ("X-RateLimit-Reset", str(int(r.clock) + wait + 2)),
                    ],
                ),
                error=True,
                dur=0.21,
            )
            r.turn(
                f"429 with Retry-After: {wait}. Waiting {wait + 1}s, then retrying page {page} once."
            )
            r.clock += wait + 1.0
        http_get(
            r,
            url,
            h,
            site.response(
                200,
                "OK",
                body,
                total_bytes=rng.randint(38000, 52000),
                extra=[
                    ("X-RateLimit-Limit", "30"),
                    ("X-RateLimit-Remaining", str(rng.randint(20, 29))),
                ],
            ),
            dur=rng.uniform(0.4, 1.2),
        )
        parse_html(
            r,
            "div.job",
            f"{len(rows) if page < 6 else 8} elements matched:\n"
            + "\n".join(
                f"{j['id']} | {j['title']} | {j['company']} | {j['location']} | {j['salary']} | {j['posted']}"
                for j in rows[: (10 if page < 6 else 8)]
            ),
            dur=0.04,
        )
        n = 10 if page < 6 else 8
        saved += n
        save_record(
            r,
            {"query": "data engineer", "page": page, "jobs": rows[:n]},
            f"ok: {n} rows inserted into jobs (total {saved})",
            dur=0.05,
        )
        if page == 3:
            r.turn("Retry worked. Adding a 2s delay between pages to stay under the limit.")
    r.turn("All 58 jobs saved across 6 pages.")
    return r


# ---------------------------------------------------------------- loop-free 4


def scrape_login_account():
    """Get CSRF token, log in, keep the rotated session cookie, fetch account + invoices."""
    rng = random.Random(2104)
    r = Run("scrape_login_account", SHAPE, "loop-free", None)
    site = Site(r, rng, "portal.brightwave-energy.com", colo="DUB")
    csrf = tok(rng, 40)
    anon = hexid(rng, 32)
    http_get(
        r,
        "https://portal.brightwave-energy.com/login",
        {"User-Agent": UA_CHROME},
        site.response(
            200,
            "OK",
            f'<!DOCTYPE html><html><head><title>Sign in | Brightwave Energy</title></head><body><form id="login" method="post" action="/api/v2/auth/login">'
            f'<input type="hidden" name="csrf_token" value="{csrf}"><input name="email" type="email"><input name="password" type="password">…',
            total_bytes=9312,
            extra=[
                ("Set-Cookie", f"bw_sid={anon}; Path=/; HttpOnly; Secure; SameSite=Lax"),
                ("Set-Cookie", f"bw_csrf={csrf}; Path=/; Secure; SameSite=Strict"),
            ],
        ),
        dur=0.55,
    )
    parse_html(r, "input[name=csrf_token]@value", f"1 element matched:\n{csrf}", dur=0.02)
    basic = base64.b64encode(b"dana.kowalski@example.net:********").decode()
    sid = hexid(rng, 32)
    http_get(
        r,
        "https://portal.brightwave-energy.com/api/v2/auth/login",
        {
            "User-Agent": UA_CHROME,
            "Authorization": f"Basic {basic}",
            "X-CSRF-Token": csrf,
            "Cookie": f"bw_sid={anon}; bw_csrf={csrf}",
        },
        site.response(
            200,
            "OK",
            json.dumps(
                {
                    "ok": True,
                    "user": {"id": "cus_5Q2ZK81", "name": "Dana Kowalski"},
                    "mfa_required": False,
                    "expires_in": 3600,
                }
            ),
            ctype="application/json",
            extra=[
                (
                    "Set-Cookie",
                    f"bw_sid={sid}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=3600",
                )
            ],
        ),
        dur=0.83,
    )
    r.turn(
        "Logged in; the server issued a fresh bw_sid. Sending that cookie on every request from now on."
    )
    cookie = f"bw_sid={sid}; bw_csrf={csrf}"
    sid2 = hexid(rng, 32)
    http_get(
        r,
        "https://portal.brightwave-energy.com/account",
        {"User-Agent": UA_CHROME, "Cookie": cookie},
        site.response(
            200,
            "OK",
            f'<html><head><title>My account | Brightwave Energy</title><meta name="csrf-token" content="{tok(rng, 40)}"></head><body><h1>Welcome back, Dana</h1>'
            '<section class="account-summary"><p>Account no. <b>BW-0048213</b></p><p>Tariff: <b>Flex Green 12M</b></p><p>Balance: <b>£-42.17 (in credit)</b></p>'
            "<p>Next direct debit: <b>£96.00 on 28 Mar 2024</b></p></section>…",
            total_bytes=27455,
            extra=[
                (
                    "Set-Cookie",
                    f"bw_sid={sid2}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=3600",
                )
            ],
        ),
        dur=0.71,
    )
    parse_html(
        r,
        "section.account-summary p",
        "4 elements matched:\nAccount no. BW-0048213\nTariff: Flex Green 12M\nBalance: £-42.17 (in credit)\nNext direct debit: £96.00 on 28 Mar 2024",
        dur=0.02,
    )
    save_record(
        r,
        {
            "kind": "account",
            "account_no": "BW-0048213",
            "tariff": "Flex Green 12M",
            "balance_gbp": -42.17,
            "next_dd": {"amount": 96.0, "date": "2024-03-28"},
        },
        "ok: saved account BW-0048213",
        dur=0.03,
    )
    cookie = f"bw_sid={sid2}; bw_csrf={csrf}"
    months = [
        "Feb 2024",
        "Jan 2024",
        "Dec 2023",
        "Nov 2023",
        "Oct 2023",
        "Sep 2023",
        "Aug 2023",
        "Jul 2023",
        "Jun 2023",
        "May 2023",
        "Apr 2023",
        "Mar 2023",
    ]
    all_inv = []
    for page in (1, 2):
        inv = []
        for m in months[(page - 1) * 6 : page * 6]:
            kwh = rng.randint(180, 460)
            inv.append(
                {
                    "id": f"INV-{rng.randint(7000000, 7999999)}",
                    "period": m,
                    "kwh": kwh,
                    "amount": f"£{kwh * 0.2475 + 16.2:.2f}",
                }
            )
        all_inv += inv
        new_sid = hexid(rng, 32)
        rows = "".join(
            f"<tr><td>{i['id']}</td><td>{i['period']}</td><td>{i['kwh']} kWh</td><td>{i['amount']}</td></tr>"
            for i in inv[:2]
        )
        http_get(
            r,
            f"https://portal.brightwave-energy.com/account/invoices?page={page}",
            {"User-Agent": UA_CHROME, "Cookie": cookie},
            site.response(
                200,
                "OK",
                f'<html><head><title>Invoices | Brightwave Energy</title></head><body><table class="invoices"><thead><tr><th>Invoice</th><th>Period</th><th>Usage</th><th>Amount</th></tr></thead><tbody>{rows}…',
                total_bytes=rng.randint(18000, 21000),
                extra=[
                    (
                        "Set-Cookie",
                        f"bw_sid={new_sid}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=3600",
                    )
                ],
            ),
            dur=rng.uniform(0.5, 0.9),
        )
        cookie = f"bw_sid={new_sid}; bw_csrf={csrf}"
        parse_html(
            r,
            "table.invoices tbody tr",
            "6 elements matched:\n"
            + "\n".join(f"{i['id']} | {i['period']} | {i['kwh']} kWh | {i['amount']}" for i in inv),
            dur=0.02,
        )
    save_record(
        r,
        {"kind": "invoices", "account_no": "BW-0048213", "invoices": all_inv},
        "ok: saved 12 invoices for BW-0048213",
        dur=0.04,
    )
    first = all_inv[0]
    http_get(
        r,
        f"https://portal.brightwave-energy.com/account/invoices/{first['id']}",
        {"User-Agent": UA_CHROME, "Cookie": cookie},
        site.response(
            200,
            "OK",
            f'<html><head><title>{first["id"]} | Brightwave Energy</title></head><body><div class="invoice-detail"><p>Standing charge: 29 days × £0.5589</p>'
            f'<p>Unit rate: {first["kwh"]} kWh × £0.2475</p><p>VAT (5%) included</p><p>Total: {first["amount"]}</p><a href="/account/invoices/{first["id"]}.pdf">Download PDF</a></div>…',
            total_bytes=12604,
        ),
        dur=0.66,
    )
    parse_html(
        r,
        "div.invoice-detail p",
        f"4 elements matched:\nStanding charge: 29 days × £0.5589\nUnit rate: {first['kwh']} kWh × £0.2475\nVAT (5%) included\nTotal: {first['amount']}",
        dur=0.02,
    )
    save_record(
        r,
        {
            "kind": "invoice_detail",
            "id": first["id"],
            "standing_days": 29,
            "standing_rate": 0.5589,
            "unit_rate": 0.2475,
            "kwh": first["kwh"],
            "total": first["amount"],
        },
        f"ok: saved invoice detail {first['id']}",
        dur=0.03,
    )
    return r


# ---------------------------------------------------------------- loop 1


GEAR = [
    ("trailrunner-gtx-mens", "TrailRunner GTX Men's Shoe", "$139.95", "In stock"),
    ("summit-40l-pack", "Summit 40L Technical Pack", "$189.00", "Only 3 left"),
    ("aerolite-down-hoodie", "AeroLite Down Hoodie", "$229.50", "In stock"),
]
UAS = [
    UA_CHROME,
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:123.0) Gecko/20100101 Firefox/123.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.3 Safari/605.1.15",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36 Edg/122.0.2365.66",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.6261.90 Mobile Safari/537.36",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_3_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.3 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.0.0 Safari/537.36",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
]


def cf_challenge(site, rng, path):
    ray = hexid(rng, 16)
    body = (
        '<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title><meta http-equiv="Content-Type" content="text/html; charset=UTF-8">'
        '<meta name="robots" content="noindex,nofollow"><meta name="viewport" content="width=device-width,initial-scale=1"></head>'
        '<body><div class="main-wrapper" role="main"><div class="main-content"><h1 class="zone-name-title h1">www.gearhub-outlet.com</h1>'
        '<h2 id="challenge-running" class="h2">Checking if the site connection is secure</h2><noscript><div id="challenge-error-title">'
        '<div class="h2"><span id="challenge-error-text">Enable JavaScript and cookies to continue</span></div></div></noscript></div></div>'
        f"<script>(function(){{window._cf_chl_opt={{cvId: '3',cZone: \"www.gearhub-outlet.com\",cType: 'managed',cNounce: '{rng.randint(10000, 99999)}',"
        f"cRay: '{ray}',cHash: '{hexid(rng, 15)}',cUPMDTk: \"{path.replace('/', chr(92) + '/')}?__cf_chl_tk={tok(rng, 43)}-{int(site.r.clock)}-0-gaNycGzNDRA\","
        f"cH: '{tok(rng, 64)}',md: '{tok(rng, 120)}'"
    )
    return site.response(
        403,
        "Forbidden",
        body,
        total_bytes=rng.randint(6900, 7400),
        extra=[
            ("cf-mitigated", "challenge"),
            ("Cross-Origin-Opener-Policy", "same-origin"),
            ("Cache-Control", "private, max-age=0, no-store, no-cache, must-revalidate"),
        ],
        ray=ray,
    )


def scrape_cf_challenge_ua():
    """Three products scraped fine, then a Cloudflare managed challenge; agent only rotates User-Agent."""
    rng = random.Random(2105)
    r = Run("scrape_cf_challenge_ua", SHAPE, "loop", 10)
    site = Site(r, rng, "www.gearhub-outlet.com", colo="ORD")
    for slug, name, price, stock in GEAR:
        url = f"https://www.gearhub-outlet.com/p/{slug}"
        http_get(
            r,
            url,
            {"User-Agent": UA_BOT},
            site.response(
                200,
                "OK",
                f'<!DOCTYPE html><html><head><title>{name} | GearHub Outlet</title><meta name="csrf-token" content="{tok(rng)}"></head>'
                f'<body><div class="pdp"><h1 class="product-title">{name}</h1><span class="price">{price}</span><p class="availability">{stock}</p>…',
                total_bytes=rng.randint(88000, 112000),
                extra=[("cf-cache-status", "DYNAMIC")],
            ),
            dur=rng.uniform(0.5, 1.3),
        )
        parse_html(
            r,
            "h1.product-title, span.price, p.availability",
            f"3 elements matched:\n{name}\n{price}\n{stock}",
            dur=0.03,
        )
        save_record(
            r,
            {"url": url, "name": name, "price": price, "availability": stock},
            f"ok: saved {slug}",
            dur=0.03,
        )
    path = "/p/ridgeline-trekking-poles"
    url = "https://www.gearhub-outlet.com" + path
    http_get(r, url, {"User-Agent": UA_BOT}, cf_challenge(site, rng, path), error=True, dur=0.42)
    r.turn(
        "403 'Just a moment...' — Cloudflare is flagging the client. Probably the python-httpx User-Agent; retry with a desktop Chrome UA."
    )
    thoughts = {
        1: "Still challenged with Chrome. Try Firefox on macOS.",
        2: "Firefox blocked too. Safari?",
        3: "Safari didn't help either. Maybe Edge passes.",
        4: "Mobile UAs sometimes get a lighter check. Try Android Chrome.",
        5: "Try iPhone Safari.",
        7: "Maybe they allow search crawlers. Try the Googlebot UA.",
    }
    for i, ua in enumerate(UAS):
        if i in thoughts:
            r.turn(thoughts[i])
        http_get(
            r,
            url,
            {"User-Agent": ua},
            cf_challenge(site, rng, path),
            error=True,
            dur=rng.uniform(0.3, 0.6),
        )
        if i in (0, 4):
            parse_html(r, "h1.product-title", "no elements matched", dur=0.02)
    r.turn("Every User-Agent still gets the challenge page. I'll try another browser string.")
    return r


# ---------------------------------------------------------------- loop 2


def scrape_selector_variations():
    """Client-rendered page: the product grid is not in the HTML; agent keeps tweaking the selector."""
    rng = random.Random(2106)
    r = Run("scrape_selector_variations", SHAPE, "loop", 4)
    site = Site(r, rng, "www.trailhead-outfitters.com", colo="SEA")
    http_get(
        r,
        "https://www.trailhead-outfitters.com/robots.txt",
        {"User-Agent": UA_CHROME},
        site.response(
            200,
            "OK",
            "User-agent: *\nDisallow: /checkout/\nDisallow: /account/\nDisallow: /api/\nCrawl-delay: 5\nSitemap: https://www.trailhead-outfitters.com/sitemap.xml",
            ctype="text/plain",
        ),
        dur=0.28,
    )
    nonce = tok(rng, 22)
    http_get(
        r,
        "https://www.trailhead-outfitters.com/c/tents",
        {"User-Agent": UA_CHROME, "Accept": "text/html"},
        site.response(
            200,
            "OK",
            '<!doctype html><html lang="en"><head><meta charset="utf-8"/><title>Tents | Trailhead Outfitters</title>'
            f'<meta name="csrf-token" content="{tok(rng)}"/><link rel="preload" href="/static/js/main.8f3a2c1e.js" as="script"/>'
            f'<script nonce="{nonce}">window.__CONFIG__={{"apiBase":"/api/v3","region":"us-west","build":"2024.03.07-1142"}}</script></head>'
            '<body><noscript>You need to enable JavaScript to run this app.</noscript><header class="site-header"><nav><a href="/c/tents">Tents</a>'
            '<a href="/c/sleeping-bags">Sleeping bags</a><a href="/c/packs">Packs</a></nav></header><div id="root"></div>'
            f'<script nonce="{nonce}" src="/static/js/main.8f3a2c1e.js"></script></body></html>',
            total_bytes=4126,
            extra=[("Cache-Control", "public, max-age=60"), ("Vary", "Accept-Encoding")],
        ),
        dur=0.47,
    )
    parse_html(r, "title", "1 element matched:\nTents | Trailhead Outfitters", dur=0.02)
    parse_html(r, "div.product-card", "no elements matched", dur=0.02)
    r.turn("No product cards. Maybe the class is on another element; try without the tag.")
    selectors = [
        ".product-card",
        "div[class*=product]",
        "li.product-tile .price",
        "[data-testid='product-card']",
        "#root .card",
        "div.product-card span.price",
        "article.product",
        ".productCard",
        "#root > div > div",
    ]
    thoughts = {
        2: "Maybe it's a tile list rather than cards.",
        3: "Modern React sites often use data-testid attributes.",
        5: "Let me go back to the first idea but more specific.",
        7: "Perhaps camelCase class names (CSS modules).",
    }
    for i, sel in enumerate(selectors):
        if i in thoughts:
            r.turn(thoughts[i])
        parse_html(r, sel, "no elements matched", dur=0.02)
    r.turn(
        "Still nothing matched. The markup must use some other class; I'll keep trying selectors."
    )
    return r


# ---------------------------------------------------------------- loop 3


FASTENERS = [
    "Hex Bolt",
    "Carriage Bolt",
    "Lag Screw",
    "Wood Screw",
    "Machine Screw",
    "Flange Nut",
    "Wing Nut",
    "Lock Washer",
    "Fender Washer",
    "Threaded Rod",
    "Anchor Sleeve",
    "Eye Bolt",
]
FINISH = [
    "Zinc Plated",
    "Stainless 304",
    "Stainless 316",
    "Hot-Dip Galvanized",
    "Black Oxide",
    "Brass",
    "Yellow Zinc",
]
SIZES = [
    '1/4"-20 x 1"',
    '5/16"-18 x 1-1/2"',
    '3/8"-16 x 2"',
    "M6 x 20",
    "M8 x 30",
    "M10 x 40",
    '#8 x 3/4"',
    '#10 x 1-1/4"',
    '1/2"-13 x 3"',
]


def fastener_items(rng, page):
    return [
        {
            "sku": f"HS-{page:02d}{i:02d}-{rng.randint(100, 999)}",
            "name": f"{rng.choice(FASTENERS)}, {rng.choice(FINISH)}, {rng.choice(SIZES)}",
            "pack": rng.choice([10, 25, 50, 100, 250]),
            "price": f"${rng.uniform(3.5, 48):.2f}",
        }
        for i in range(16)
    ]


def scrape_broken_cursor():
    """Pages 1..4 are new; from page 5 on the site keeps serving page 4's items; agent keeps paginating."""
    rng = random.Random(2107)
    r = Run("scrape_broken_cursor", SHAPE, "loop", 15)
    site = Site(r, rng, "www.hollis-supply.com", colo="IAD")
    h = {"User-Agent": UA_CHROME, "Accept": "text/html"}
    pages = {p: fastener_items(rng, p) for p in range(1, 5)}
    total = 0
    for page in range(1, 10):
        items = pages[min(page, 4)]
        url = f"https://www.hollis-supply.com/c/fasteners?sort=popular&page={page}"
        cards = "".join(
            f'<div class="sku-tile" data-sku="{it["sku"]}"><a>{it["name"]}</a><b>{it["price"]}</b></div>'
            for it in items[:2]
        )
        body = (
            f'<html><head><title>Fasteners | Hollis Supply — Page {page}</title><meta name="csrf-token" content="{tok(rng)}">'
            f'<script nonce="{tok(rng, 22)}">dataLayer.push({{"pageType":"category","page":{page},"sid":"{hexid(rng, 16)}"}})</script></head>'
            f'<body><p class="results">Showing {(page - 1) * 16 + 1}–{page * 16} of 213</p><div class="grid">{cards}…</div>'
            f'<a class="next" href="/c/fasteners?sort=popular&page={page + 1}">Next ›</a>'
        )
        http_get(
            r,
            url,
            h,
            site.response(
                200,
                "OK",
                body,
                total_bytes=rng.randint(54000, 61000),
                extra=[
                    ("cf-cache-status", rng.choice(["HIT", "MISS", "EXPIRED"])),
                    ("Age", str(rng.randint(0, 600))),
                ],
            ),
            dur=rng.uniform(0.4, 1.0),
        )
        parse_html(
            r,
            "div.sku-tile",
            "16 elements matched:\n"
            + "\n".join(
                f"{it['sku']} | {it['name']} | pack of {it['pack']} | {it['price']}" for it in items
            ),
            dur=0.04,
        )
        if page <= 4:
            total += 16
            res = f"ok: 16 new records (hollis_fasteners.jsonl, total {total})"
        else:
            res = f"ok: 0 new records, 16 duplicates skipped (key=sku) (hollis_fasteners.jsonl, total {total})"
        save_record(r, {"category": "fasteners", "page": page, "items": items}, res, dur=0.04)
        if page == 5:
            r.turn(
                "Page 5 came back as duplicates; maybe the popular sort shifted between requests. The header says 213 results, so keep going to page 6."
            )
        elif page == 7:
            r.turn("Still 0 new on page 7, but there should be 213 items in total; continuing.")
        elif page == 8:
            r.turn("Page 8 also duplicates. Next page.")
    return r


# ---------------------------------------------------------------- loop 4


def scrape_relogin_loop():
    """Login succeeds every time, but the session cookie is never sent, so /dashboard keeps redirecting to /login."""
    rng = random.Random(2108)
    r = Run("scrape_relogin_loop", SHAPE, "loop", 3)
    site = Site(r, rng, "app.ledgerly.io", colo="FRA")
    basic = base64.b64encode(b"ops-bot@northcove.io:********").decode()

    def login_page():
        csrf = tok(rng, 40)
        http_get(
            r,
            "https://app.ledgerly.io/login",
            {"User-Agent": UA_CHROME},
            site.response(
                200,
                "OK",
                f'<!DOCTYPE html><html><head><title>Log in · Ledgerly</title><meta name="csrf-token" content="{csrf}"></head><body><form action="/api/auth/login">…',
                total_bytes=7288,
                extra=[("Set-Cookie", f"lg_csrf={csrf}; Path=/; Secure; SameSite=Strict")],
            ),
            dur=0.38,
        )
        return csrf

    def login(csrf):
        sid = tok(rng, 48)
        http_get(
            r,
            "https://app.ledgerly.io/api/auth/login",
            {
                "User-Agent": UA_CHROME,
                "Authorization": f"Basic {basic}",
                "X-CSRF-Token": csrf,
            },
            site.response(
                200,
                "OK",
                json.dumps(
                    {
                        "ok": True,
                        "user_id": "u_48213",
                        "org": "northcove",
                        "expires_in": 3600,
                        "login_id": f"lgn_{hexid(rng, 12)}",
                    }
                ),
                ctype="application/json",
                extra=[
                    (
                        "Set-Cookie",
                        f"ledgerly_sid={sid}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=3600",
                    )
                ],
            ),
            dur=rng.uniform(0.6, 0.95),
        )

    def dashboard(headers):
        http_get(
            r,
            "https://app.ledgerly.io/dashboard",
            headers,
            site.response(
                302,
                "Found",
                '<html><body>Redirecting to <a href="/login?next=%2Fdashboard">/login?next=%2Fdashboard</a>.</body></html>',
                extra=[("Location", "/login?next=%2Fdashboard"), ("Cache-Control", "no-store")],
            ),
            error=True,
            dur=rng.uniform(0.15, 0.3),
        )

    csrf = login_page()
    login(csrf)
    dashboard({"User-Agent": UA_CHROME})
    r.turn(
        "Redirected to /login right after a successful login. Maybe the login didn't stick; log in again."
    )
    login(csrf)
    dashboard({"User-Agent": UA_CHROME})
    parse_html(r, ".account-summary, #balance", "no elements matched", dur=0.02)
    r.turn("Still the redirect page. Perhaps the session expired instantly; re-authenticate.")
    login(csrf)
    dashboard({"User-Agent": UA_CHROME, "Accept": "text/html"})
    r.turn("Maybe the CSRF token is stale. Fetch a fresh one and log in again.")
    csrf = login_page()
    login(csrf)
    dashboard({"User-Agent": UA_CHROME})
    r.turn(
        "Login returns ok:true every time but the dashboard still redirects. Logging in once more."
    )
    login(csrf)
    dashboard({"User-Agent": UA_CHROME})
    return r


RUNS = [
    scrape_paginate_listing,
    scrape_detail_links,
    scrape_429_backoff,
    scrape_login_account,
    scrape_cf_challenge_ua,
    scrape_selector_variations,
    scrape_broken_cursor,
    scrape_relogin_loop,
]
