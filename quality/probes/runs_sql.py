from harness import Run

TABLES = "public.customers\npublic.orders\npublic.order_items\npublic.products\npublic.refunds\npublic.web_sessions\nanalytics.daily_revenue"


def sql_legit():
    r = Run("sql_schema_learning_legit", "sql", "loop-free", None)
    r.turn("I need monthly revenue by customer segment for 2023. Let me look at the schema first.")
    r.call("list_tables", {"schema": "public"}, TABLES)
    r.call(
        "run_query",
        {"sql": "SELECT customer_id, segment, SUM(total) FROM orders GROUP BY 1,2 LIMIT 10"},
        'ERROR:  column "segment" does not exist\nLINE 1: SELECT customer_id, segment, SUM(total) FROM orders GROUP B...\n                            ^',
        True,
    )
    r.call(
        "run_query",
        {
            "sql": "SELECT c.segment, SUM(o.total) FROM orders o JOIN customer c ON c.id = o.customer_id GROUP BY 1"
        },
        'ERROR:  relation "customer" does not exist\nLINE 1: ...SUM(o.total) FROM orders o JOIN customer c ON c.id = o.cus...\n                                              ^\nHINT:  Perhaps you meant to reference the table "customers".',
        True,
    )
    r.call(
        "run_query",
        {
            "sql": "SELECT c.segment, SUM(o.total) FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY 1"
        },
        'ERROR:  column c.segment does not exist\nLINE 1: SELECT c.segment, SUM(o.total) FROM orders o JOIN customers c...\n               ^\nHINT:  Perhaps you meant to reference the column "c.segment_code".',
        True,
    )
    r.call(
        "run_query",
        {
            "sql": "SELECT c.segment_code, date_trunc('month', o.created_at) m, SUM(o.total) FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY 1"
        },
        "ERROR:  column \"o.created_at\" must appear in the GROUP BY clause or be used in an aggregate function\nLINE 1: SELECT c.segment_code, date_trunc('month', o.created_at) m, ...\n                                                  ^",
        True,
    )
    r.call(
        "run_query",
        {
            "sql": "SELECT c.segment_code, date_trunc('month', o.created_at) m, SUM(o.total) FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.created_at >= '2023-01-01' AND o.status = 1 GROUP BY 1,2"
        },
        "ERROR:  operator does not exist: order_status = integer\nLINE 1: ...o.customer_id WHERE o.created_at >= '2023-01-01' AND o.status = 1 GROUP...\n                                                              ^\nHINT:  No operator matches the given name and argument types. You might need to add explicit type casts.",
        True,
    )
    r.turn("status is an enum; let me describe the orders table.")
    r.call(
        "describe_table",
        {"table": "orders"},
        "column        | type           | nullable\nid            | bigint         | no\ncustomer_id   | bigint         | no\ncreated_at    | timestamptz    | no\nstatus        | order_status   | no  (enum: pending, paid, shipped, refunded, cancelled)\ntotal         | numeric(12,2)  | no\ncurrency      | char(3)        | no",
    )
    r.call(
        "run_query",
        {
            "sql": "SELECT c.segment_code, date_trunc('month', o.created_at) m, SUM(o.total) FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.created_at >= '2023-01-01' AND o.status IN ('paid','shipped') GROUP BY 1,2 ORDER BY 2,1"
        },
        'ERROR:  canceling statement due to statement timeout\nCONTEXT:  while scanning relation "orders"',
        True,
    )
    r.call(
        "run_query",
        {"sql": "EXPLAIN SELECT 1 FROM orders o WHERE o.created_at >= '2023-01-01'"},
        "Seq Scan on orders o  (cost=0.00..412873.20 rows=8812311 width=4)\n  Filter: (created_at >= '2023-01-01 00:00:00+00'::timestamp with time zone)",
    )
    r.call(
        "describe_table",
        {"table": "analytics.daily_revenue"},
        "column        | type\nday           | date\nsegment_code  | text\ncurrency      | char(3)\nrevenue       | numeric(14,2)\norders        | integer",
    )
    r.call(
        "run_query",
        {
            "sql": "SELECT segment_code, date_trunc('month', day)::date AS month, SUM(revenue) FROM analytics.daily_revenue WHERE day >= '2023-01-01' AND day < '2024-01-01' GROUP BY 1,2 ORDER BY 2,1"
        },
        " segment_code |   month    |     sum\n--------------+------------+-------------\n ENT          | 2023-01-01 |  1832911.20\n SMB          | 2023-01-01 |   611204.87\n CONS         | 2023-01-01 |   288190.02\n ENT          | 2023-02-01 |  1790402.55\n...(36 rows)\nTime: 84.211 ms",
    )
    r.turn("Mixed currencies need converting. Let me check the currency distribution.")
    r.call(
        "run_query",
        {
            "sql": "SELECT currency, COUNT(*), SUM(revenue) FROM analytics.daily_revenue WHERE day >= '2023-01-01' GROUP BY 1"
        },
        " currency | count |    sum\n----------+-------+-------------\n USD      |  1095 | 21044021.11\n EUR      |  1095 |  3410022.80\n GBP      |   730 |  1120873.44\n(3 rows)\nTime: 12.004 ms",
    )
    r.call(
        "list_tables",
        {"schema": "analytics"},
        "analytics.daily_revenue\nanalytics.fx_rates\nanalytics.cohorts",
    )
    r.call(
        "describe_table",
        {"table": "analytics.fx_rates"},
        "column | type\nday | date\nbase | char(3)\nquote | char(3)\nrate | numeric(12,6)",
    )
    r.call(
        "run_query",
        {
            "sql": "SELECT d.segment_code, date_trunc('month', d.day)::date month, SUM(d.revenue * COALESCE(f.rate,1)) usd FROM analytics.daily_revenue d LEFT JOIN analytics.fx_rates f ON f.day = d.day AND f.base = d.currency AND f.quote = 'USD' WHERE d.day >= '2023-01-01' AND d.day < '2024-01-01' GROUP BY 1,2 ORDER BY 2,1"
        },
        " segment_code |   month    |     usd\n--------------+------------+-------------\n ENT          | 2023-01-01 |  2012774.91\n SMB          | 2023-01-01 |   680233.10\n...(36 rows)\nTime: 140.551 ms",
    )
    r.call(
        "run_query",
        {
            "sql": "SELECT COUNT(*) FROM analytics.daily_revenue d LEFT JOIN analytics.fx_rates f ON f.day = d.day AND f.base = d.currency AND f.quote = 'USD' WHERE d.currency <> 'USD' AND f.rate IS NULL"
        },
        " count\n-------\n    14\n(1 row)\nTime: 9.870 ms",
    )
    r.call(
        "run_query",
        {
            "sql": "SELECT d.day, d.currency FROM analytics.daily_revenue d LEFT JOIN analytics.fx_rates f ON f.day = d.day AND f.base = d.currency AND f.quote='USD' WHERE d.currency <> 'USD' AND f.rate IS NULL ORDER BY 1"
        },
        "    day     | currency\n------------+----------\n 2023-01-01 | EUR\n 2023-01-01 | GBP\n 2023-04-07 | EUR\n...(14 rows, all bank holidays)\nTime: 10.120 ms",
    )
    r.call(
        "run_query",
        {
            "sql": "WITH fx AS (SELECT day, base, rate, LAST_VALUE(rate) IGNORE NULLS OVER (PARTITION BY base ORDER BY day) r FROM analytics.fx_rates) SELECT 1"
        },
        'ERROR:  syntax error at or near "IGNORE"\nLINE 1: ...base, rate, LAST_VALUE(rate) IGNORE NULLS OVER (PARTITION...\n                                     ^',
        True,
    )
    r.call(
        "run_query",
        {
            "sql": "SELECT d.segment_code, date_trunc('month', d.day)::date month, SUM(d.revenue * COALESCE(f.rate, (SELECT rate FROM analytics.fx_rates f2 WHERE f2.base=d.currency AND f2.quote='USD' AND f2.day < d.day ORDER BY f2.day DESC LIMIT 1), 1)) usd FROM analytics.daily_revenue d LEFT JOIN analytics.fx_rates f ON f.day=d.day AND f.base=d.currency AND f.quote='USD' WHERE d.day >= '2023-01-01' AND d.day < '2024-01-01' GROUP BY 1,2 ORDER BY 2,1"
        },
        " segment_code |   month    |     usd\n--------------+------------+-------------\n ENT          | 2023-01-01 |  2013902.45\n SMB          | 2023-01-01 |   680910.77\n CONS         | 2023-01-01 |   301288.16\n...(36 rows)\nTime: 211.904 ms",
    )
    r.turn("Final result computed with forward-filled FX rates. Summarising for the user.")
    return r


def sql_loop():
    r = Run("sql_same_error_tweaks_loop", "sql", "loop", 3)
    r.call("list_tables", {}, TABLES)
    r.call(
        "describe_table",
        {"table": "web_sessions"},
        "column | type\nid | uuid\nuser_id | bigint\nstarted_ts | timestamptz\nduration_ms | integer\nutm_source | text",
    )
    r.call(
        "run_query",
        {"sql": "SELECT COUNT(*) FROM web_sessions"},
        " count\n---------\n 4412093\n(1 row)\nTime: 310.2 ms",
    )
    variants = [
        "SELECT utm_source, AVG(duration) FROM web_sessions WHERE started_at > now() - interval '30 days' GROUP BY utm_source",
        "SELECT utm_source, AVG(duration) AS avg_dur FROM web_sessions WHERE started_at > now() - interval '30 days' GROUP BY utm_source",
        "SELECT s.utm_source, AVG(s.duration) FROM web_sessions s WHERE s.started_at > now() - interval '30 days' GROUP BY s.utm_source",
        "SELECT utm_source, AVG(duration)::numeric(10,2) FROM web_sessions WHERE started_at > NOW() - INTERVAL '30 days' GROUP BY 1",
        "SELECT utm_source, AVG(duration) FROM web_sessions WHERE started_at > now() - interval '30 days' GROUP BY 1 ORDER BY 2 DESC",
        "select utm_source, avg(duration) from web_sessions where started_at > now() - interval '30 days' group by utm_source limit 50",
        "SELECT utm_source, AVG(duration) FROM public.web_sessions WHERE started_at > now() - interval '30 day' GROUP BY utm_source",
        "SELECT utm_source, AVG(duration) FROM web_sessions WHERE started_at > current_date - 30 GROUP BY utm_source",
        "SELECT COALESCE(utm_source,'(none)'), AVG(duration) FROM web_sessions WHERE started_at > now() - interval '30 days' GROUP BY 1",
    ]
    texts = [
        "Let me compute average session duration by source.",
        "Let me add an alias and retry.",
        "Perhaps qualifying with a table alias helps.",
        "Try casting the average.",
        "Maybe ordering changes things.",
        "Lowercase keywords and a limit.",
        "Schema-qualify the table.",
        "Use current_date arithmetic.",
        "Handle null sources.",
    ]
    for n, q in enumerate(variants):
        r.turn(texts[n])
        col = q.find("duration") + 1
        r.call(
            "run_query",
            {"sql": q},
            f'ERROR:  column "duration" does not exist\nLINE 1: {q[:60]}...\n{" " * (8 + col)}^\nHINT:  Perhaps you meant to reference the column "web_sessions.duration_ms".',
            True,
        )
    return r


def sql_loop_driver_error():
    """Same wall, error text from a driver that echoes the query (psycopg style) and query id."""
    r = Run("sql_same_error_with_echo_loop", "sql", "loop", 1)
    r.call("list_tables", {}, TABLES)
    for n in range(9):
        q = f"SELECT id, email FROM customers WHERE created_at > '2023-0{n % 9 + 1}-01' AND deleted = false"
        r.call(
            "run_query",
            {"sql": q, "timeout_s": 30},
            f'{{"error": "UndefinedColumn", "message": "column \\"deleted\\" does not exist", "query_id": "01b2c{n}f7-0000-4a1e-9000-{n}3b1", "elapsed_ms": {12 + n}}}',
            True,
        )
    return r


RUNS = [sql_legit, sql_loop, sql_loop_driver_error]
