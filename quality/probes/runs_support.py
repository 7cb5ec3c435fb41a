import json

from harness import Run

ORDERS = [
    ("A-10482", "delivered", "2023-11-02", 58.20),
    ("A-10519", "shipped", "2023-11-09", 124.00),
    ("A-10533", "delivered", "2023-10-28", 19.99),
    ("A-10601", "processing", "2023-11-13", 340.50),
    ("A-10377", "delivered", "2023-10-11", 76.45),
    ("A-10611", "cancelled", "2023-11-13", 12.00),
    ("A-10288", "delivered", "2023-09-30", 210.00),
    ("A-10640", "shipped", "2023-11-14", 45.10),
]

# The refund the support agent retries (same idempotency key every time).
REFUND_A10482 = {
    "order_id": "A-10482",
    "amount": 58.20,
    "reason": "damaged_item",
    "idempotency_key": "rf-A-10482-1",
}


def order_json(o, i):
    oid, st, d, amt = o
    return json.dumps(
        {
            "order_id": oid,
            "status": st,
            "placed_at": f"{d}T1{i}:0{i}:22Z",
            "total": amt,
            "currency": "USD",
            "items": [{"sku": f"SKU-{3300 + i * 17}", "qty": 1 + i % 2}],
            "customer": {"id": f"cus_{9100 + i}", "email": f"customer{i}@mail.example"},
        }
    )


def support_legit():
    r = Run("support_flaky_refund_retry_legit", "support-api", "loop-free", None)
    r.turn("Working through the refund queue: 8 tickets.")
    for i, o in enumerate(ORDERS[:4]):
        r.call("lookup_order", {"order_id": o[0]}, order_json(o, i))
        if o[1] == "delivered":
            r.call(
                "lookup_customer",
                {"customer_id": f"cus_{9100 + i}"},
                json.dumps(
                    {
                        "id": f"cus_{9100 + i}",
                        "tier": "gold" if i % 2 else "standard",
                        "refunds_90d": i,
                    }
                ),
            )
    r.turn("A-10482 is eligible for a full refund. Issuing it.")
    for k in range(4):
        r.call(
            "issue_refund",
            dict(REFUND_A10482),
            json.dumps(
                {
                    "error": {
                        "code": 503,
                        "type": "service_unavailable",
                        "message": "Payments upstream unavailable, retry later",
                        "request_id": f"req_{['7Hq2', 'Kd91', 'p0Zx', 'Wm3c'][k]}Lx9",
                    }
                }
            ),
            error=True,
        )
        r.call("sleep", {"seconds": 2 ** (k + 1)}, f"slept {2 ** (k + 1)}s")
    r.call(
        "issue_refund",
        dict(REFUND_A10482),
        json.dumps({"refund_id": "re_3OaB91xKq", "status": "succeeded", "amount": 58.20}),
    )
    r.call(
        "send_email",
        {
            "to": "customer0@mail.example",
            "template": "refund_issued",
            "vars": {"order_id": "A-10482", "amount": "58.20"},
        },
        "queued message id <20231114221503.4412@mail.acme.io>",
    )
    for i, o in enumerate(ORDERS[4:], start=4):
        r.call("lookup_order", {"order_id": o[0]}, order_json(o, i))
        if o[1] == "delivered":
            r.call(
                "issue_refund",
                {
                    "order_id": o[0],
                    "amount": o[3],
                    "reason": "not_as_described",
                    "idempotency_key": f"rf-{o[0]}-1",
                },
                json.dumps(
                    {"refund_id": f"re_{i}x{o[0][-3:]}Q", "status": "succeeded", "amount": o[3]}
                ),
            )
            r.call(
                "send_email",
                {
                    "to": f"customer{i}@mail.example",
                    "template": "refund_issued",
                    "vars": {"order_id": o[0]},
                },
                f"queued message id <2023111422{i}0.{4412 + i}@mail.acme.io>",
            )
    r.call(
        "lookup_order",
        {"order_id": "A-99999"},
        json.dumps({"error": "order not found"}),
        error=True,
    )
    r.call(
        "lookup_order",
        {"order_id": "A-09999"},
        json.dumps({"error": "order not found"}),
        error=True,
    )
    r.call(
        "lookup_order",
        {"order_id": "A-10999"},
        json.dumps({"order_id": "A-10999", "status": "delivered", "total": 15.0}),
    )
    r.turn("All tickets handled.")
    return r


def support_retry_no_backoff_legit():
    """Same flaky API, retried immediately 3 times (no sleep tool), then it succeeds."""
    r = Run("support_flaky_retry_no_sleep_legit", "support-api", "loop-free", None)
    r.call("lookup_order", {"order_id": "A-10519"}, order_json(ORDERS[1], 1))
    for _k in range(3):
        r.call(
            "issue_refund",
            {"order_id": "A-10519", "amount": 124.00, "reason": "late_delivery"},
            "HTTP 502 Bad Gateway: upstream connect error or disconnect/reset before headers. reset reason: connection failure",
            error=True,
        )
    r.call(
        "issue_refund",
        {"order_id": "A-10519", "amount": 124.00, "reason": "late_delivery"},
        json.dumps({"refund_id": "re_9Kx", "status": "succeeded"}),
    )
    r.call(
        "send_email",
        {
            "to": "customer1@mail.example",
            "template": "refund_issued",
            "vars": {"order_id": "A-10519"},
        },
        "queued",
    )
    for i, o in enumerate(ORDERS[2:], start=2):
        r.call("lookup_order", {"order_id": o[0]}, order_json(o, i))
    return r


RUNS = [support_legit, support_retry_no_backoff_legit]
