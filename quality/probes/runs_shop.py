"""E-commerce admin agent driving a GraphQL admin API. Invented runs.

Shape "graphql-admin". Tools:
  graphql(query, variables) -> JSON with `data` and/or `errors`, global ids such as
      "gid://shop/Product/8012345678", base64 pagination cursors, and
      `extensions.cost` (throttle status) plus `extensions.requestId`.
  read_csv(path) -> the rows of an input file.

Label convention: label is "loop-free" or "loop". loop_start = 0-based index (counting tool
calls only) of the first tool call that repeats an attempt that had already come back
futile (the first repetition, not the first attempt); None for loop-free runs. A loop means
the agent is stuck repeating attempts that produce nothing new, for at least 3 futile
repetitions."""
# ruff: noqa

import base64
import json
import random

from harness import Run

SHAPE = "graphql-admin"

ADJ = [
    "Trailhead",
    "Summit",
    "Ridgeline",
    "Canyon",
    "Harbor",
    "Alpine",
    "Drift",
    "Cedar",
    "Granite",
    "Meadow",
    "Tundra",
    "Coastal",
    "Basalt",
    "Juniper",
    "Aspen",
    "Glacier",
]
NOUN = [
    "Jacket",
    "Fleece",
    "Beanie",
    "Daypack",
    "Trail Runner",
    "Base Layer",
    "Rain Shell",
    "Hip Pack",
    "Camp Mug",
    "Trekking Pole",
    "Sun Hoodie",
    "Wool Sock",
    "Duffel 40L",
    "Puffer Vest",
    "Bottle 750ml",
    "Headlamp",
]
COLORS = [
    ("BLK", "Black"),
    ("NVY", "Navy"),
    ("MOS", "Moss"),
    ("SLT", "Slate"),
    ("RST", "Rust"),
    ("SND", "Sand"),
]


def _j(obj):
    return json.dumps(obj, separators=(",", ":"))


def _cursor(last_id, **extra):
    payload = {"last_id": last_id, **extra}
    return base64.b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode()


def _req_id(rng):
    h = "%032x" % rng.getrandbits(128)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{h[16:20]}-{h[20:32]}"


def _num(gid):
    return int(gid.rsplit("/", 1)[1])


class _Budget:
    """Leaky-bucket throttle status as reported in extensions.cost."""

    def __init__(self, rng, available=1000.0, maximum=1000.0, restore=50.0):
        self.rng = rng
        self.available = available
        self.maximum = maximum
        self.restore = restore

    def ext(self, requested, actual=None, throttled=False, refill=True):
        if refill:
            self.available = min(
                self.maximum, self.available + self.restore * self.rng.uniform(2.0, 4.5)
            )
        if throttled:
            actual_cost = None
        else:
            actual_cost = requested if actual is None else actual
            self.available -= actual_cost
        return {
            "cost": {
                "requestedQueryCost": requested,
                "actualQueryCost": actual_cost,
                "throttleStatus": {
                    "maximumAvailable": self.maximum,
                    "currentlyAvailable": round(self.available, 1),
                    "restoreRate": self.restore,
                },
            },
            "requestId": _req_id(self.rng),
        }


def _gql(r, query, variables, data, extensions):
    """A graphql call answered with data and the extensions (cost, requestId)."""
    r.call(
        "graphql",
        {"query": query, "variables": variables},
        _j({"data": data, "extensions": extensions}),
    )


def _read_csv(r, path, columns, rows):
    """A read_csv call returning rows under columns."""
    r.call(
        "read_csv",
        {"path": path},
        _j({"path": path, "columns": columns, "rows": rows, "row_count": len(rows)}),
    )


def _ts(rng, day=14, hour=9):
    return f"2024-06-{day:02d}T{hour:02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"


def _catalogue(rng, n, start_id):
    items = []
    pid = start_id
    for _ in range(n):
        pid += rng.randint(7, 950)
        a = rng.choice(ADJ)
        nn = rng.choice(NOUN)
        code, color = rng.choice(COLORS)
        title = f"{a} {nn} - {color}"
        handle = title.lower().replace(" - ", "-").replace(" ", "-") + f"-{pid % 1000}"
        sku = f"{a[:3].upper()}-{rng.randint(1000, 9999)}-{code}"
        price = rng.choice([19, 24, 29, 34, 39, 49, 59, 79, 99, 129, 189, 229])
        items.append(
            {
                "id": f"gid://shop/Product/{pid}",
                "title": title,
                "handle": handle,
                "status": "ACTIVE",
                "totalInventory": rng.randint(0, 640),
                "variants": {"nodes": [{"sku": sku, "price": f"{price}.00"}]},
            }
        )
    return items


def _page(items, has_next):
    edges = [{"cursor": _cursor(_num(p["id"])), "node": p} for p in items]
    return {
        "edges": edges,
        "pageInfo": {"hasNextPage": has_next, "endCursor": edges[-1]["cursor"] if edges else None},
    }


Q_PRODUCTS = """query Products($first: Int!, $after: String, $query: String) {
  products(first: $first, after: $after, query: $query) {
    edges { cursor node { id title handle status totalInventory variants(first: 5) { nodes { sku price } } } }
    pageInfo { hasNextPage endCursor }
  }
}"""

M_PRODUCT_UPDATE = """mutation ProductUpdate($input: ProductInput!) {
  productUpdate(input: $input) { product { id status updatedAt } userErrors { field message } }
}"""


# ---------------------------------------------------------------------------------------
# loop-free 1: page through the catalogue with cursors, each page new items, then archive
# ---------------------------------------------------------------------------------------
def shop_paginate_archive_discontinued():
    rng = random.Random(101)
    b = _Budget(rng)
    r = Run("shop_paginate_archive_discontinued", SHAPE, "loop-free", None)
    cat = _catalogue(rng, 93, 8012340000)
    targets = [
        ("TRL-2210-BLK", "supplier ended line", 27),
        ("CAN-4471-RST", "replaced by v2", 48),
        ("GLA-3318-SND", "quality issue", 81),
        ("TRL-0907-MOS", "supplier ended line", None),
    ]
    for sku, _, pos in targets:
        if pos is not None:
            cat[pos]["variants"]["nodes"][0]["sku"] = sku
    r.turn(
        "Task: archive every product listed in imports/discontinued_skus.csv. I'll read the file, "
        "then page through active products to map SKUs to product ids."
    )
    _read_csv(
        r,
        "imports/discontinued_skus.csv",
        ["sku", "reason", "requested_by"],
        [{"sku": s, "reason": why, "requested_by": "merch-team"} for s, why, _ in targets],
    )
    r.turn(
        "4 SKUs. The products query can't filter on several SKUs reliably, so I'll walk the active catalogue 20 at a time."
    )
    after = None
    found = {}
    for start in range(0, 93, 20):
        chunk = cat[start : start + 20]
        has_next = start + 20 < 93
        page = _page(chunk, has_next)
        _gql(
            r,
            Q_PRODUCTS,
            {"first": 20, "after": after, "query": "status:active"},
            {"products": page},
            b.ext(122, rng.randint(38, 47)),
        )
        hits = [
            (p["variants"]["nodes"][0]["sku"], p["id"])
            for p in chunk
            if p["variants"]["nodes"][0]["sku"] in {t[0] for t in targets}
        ]
        found.update(dict(hits))
        after = page["pageInfo"]["endCursor"]
        if hits:
            r.turn(
                f"Page {start // 20 + 1}: matched {', '.join(h[0] for h in hits)}. "
                f"{'Continuing with endCursor.' if has_next else 'That was the last page.'}"
            )
        elif has_next:
            r.turn(f"Page {start // 20 + 1}: 20 new products, no matches. Next cursor.")
    r.turn(
        "Catalogue exhausted (hasNextPage false). 3 of 4 SKUs found; TRL-0907-MOS isn't among active "
        "products, probably already archived. Archiving the 3 matches."
    )
    for i, (sku, gid) in enumerate(found.items()):
        _gql(
            r,
            M_PRODUCT_UPDATE,
            {"input": {"id": gid, "status": "ARCHIVED"}},
            {
                "productUpdate": {
                    "product": {
                        "id": gid,
                        "status": "ARCHIVED",
                        "updatedAt": _ts(rng, 14, 10 + i),
                    },
                    "userErrors": [],
                }
            },
            b.ext(10),
        )
    _gql(
        r,
        Q_PRODUCTS,
        {"first": 5, "after": None, "query": "sku:TRL-0907-MOS"},
        {
            "products": {
                "edges": [
                    {
                        "cursor": _cursor(8011998731),
                        "node": {
                            "id": "gid://shop/Product/8011998731",
                            "title": "Trailhead Beanie - Moss",
                            "handle": "trailhead-beanie-moss",
                            "status": "ARCHIVED",
                            "totalInventory": 0,
                            "variants": {"nodes": [{"sku": "TRL-0907-MOS", "price": "24.00"}]},
                        },
                    }
                ],
                "pageInfo": {"hasNextPage": False, "endCursor": _cursor(8011998731)},
            }
        },
        b.ext(32, 4),
    )
    r.turn(
        "Confirmed TRL-0907-MOS was already ARCHIVED. All 4 SKUs are now archived; reporting back."
    )
    return r


# ---------------------------------------------------------------------------------------
# loop-free 2: bulk price update, one mutation per product, each a different product
# ---------------------------------------------------------------------------------------
M_VARIANTS_UPDATE = """mutation VariantsUpdate($productId: ID!, $variants: [ProductVariantsBulkInput!]!) {
  productVariantsBulkUpdate(productId: $productId, variants: $variants) {
    product { id }
    productVariants { id sku price compareAtPrice }
    userErrors { field message }
  }
}"""


def shop_bulk_price_update():
    rng = random.Random(202)
    b = _Budget(rng)
    r = Run("shop_bulk_price_update", SHAPE, "loop-free", None)
    cat = _catalogue(rng, 10, 8012400000)
    rows = []
    for i, p in enumerate(cat):
        vid = f"gid://shop/ProductVariant/{46012000000 + rng.randint(10_000, 990_000)}"
        old = float(p["variants"]["nodes"][0]["price"])
        new = round(old * rng.choice([0.8, 0.85, 0.9]) - 0.01, 2)
        cmp_at = f"{old:.2f}"
        if i == 5:
            cmp_at = f"{new - 5:.2f}"  # typo in the sheet: compare-at below the new price
        rows.append(
            {
                "product_id": p["id"],
                "variant_id": vid,
                "sku": p["variants"]["nodes"][0]["sku"],
                "old_price": f"{old:.2f}",
                "new_price": f"{new:.2f}",
                "compare_at_price": cmp_at,
            }
        )
    r.turn("Summer markdown: apply the prices in imports/price_update_2024-06.csv.")
    _read_csv(r, "imports/price_update_2024-06.csv", list(rows[0]), rows)
    r.turn(
        "10 rows, one variant per product. productVariantsBulkUpdate is per product, so 10 mutations, "
        "setting price and compareAtPrice (old price) for each."
    )
    for i, row in enumerate(rows):
        variables = {
            "productId": row["product_id"],
            "variants": [
                {
                    "id": row["variant_id"],
                    "price": row["new_price"],
                    "compareAtPrice": row["compare_at_price"],
                }
            ],
        }
        if i == 5:
            _gql(
                r,
                M_VARIANTS_UPDATE,
                variables,
                {
                    "productVariantsBulkUpdate": {
                        "product": {"id": row["product_id"]},
                        "productVariants": [],
                        "userErrors": [
                            {
                                "field": ["variants", "0", "compareAtPrice"],
                                "message": "Compare at price needs to be higher than Price",
                            }
                        ],
                    }
                },
                b.ext(11),
            )
            r.turn(
                f"Row 6 ({row['sku']}) has compare_at {row['compare_at_price']} below new price {row['new_price']}; "
                f"the sheet's old_price is {row['old_price']}, so the compare-at was mistyped. Using old_price as compare-at."
            )
            variables["variants"][0]["compareAtPrice"] = row["old_price"]
            row["compare_at_price"] = row["old_price"]
        _gql(
            r,
            M_VARIANTS_UPDATE,
            variables,
            {
                "productVariantsBulkUpdate": {
                    "product": {"id": row["product_id"]},
                    "productVariants": [
                        {
                            "id": row["variant_id"],
                            "sku": row["sku"],
                            "price": row["new_price"],
                            "compareAtPrice": row["compare_at_price"],
                        }
                    ],
                    "userErrors": [],
                }
            },
            b.ext(11),
        )
        if i in (2, 7):
            r.turn(f"{i + 1}/10 updated, budget fine. Continuing.")
    r.turn("All 10 done. Verifying with one nodes() query.")
    _gql(
        r,
        "query Check($ids: [ID!]!) { nodes(ids: $ids) { ... on ProductVariant { id sku price compareAtPrice } } }",
        {"ids": [row["variant_id"] for row in rows]},
        {
            "nodes": [
                {
                    "id": x["variant_id"],
                    "sku": x["sku"],
                    "price": x["new_price"],
                    "compareAtPrice": x["compare_at_price"],
                }
                for x in rows
            ]
        },
        b.ext(10, 10),
    )
    r.turn(
        "Verified: 10/10 variants carry the new price; one compare-at corrected from the sheet's typo."
    )
    return r


# ---------------------------------------------------------------------------------------
# loop-free 3: inventory report across locations; one THROTTLED, waited out, then success
# ---------------------------------------------------------------------------------------
Q_LEVELS = """query Levels($loc: ID!, $first: Int!, $after: String) {
  location(id: $loc) {
    name
    inventoryLevels(first: $first, after: $after) {
      edges { cursor node { id quantities(names: ["available", "committed"]) { name quantity } item { sku } } }
      pageInfo { hasNextPage endCursor }
    }
  }
}"""


def _levels(rng, loc_name, loc_num, n, start_item, has_next):
    edges = []
    item = start_item
    for _ in range(n):
        item += rng.randint(3, 700)
        sku = f"{rng.choice(ADJ)[:3].upper()}-{rng.randint(1000, 9999)}-{rng.choice(COLORS)[0]}"
        edges.append(
            {
                "cursor": _cursor(item),
                "node": {
                    "id": f"gid://shop/InventoryLevel/{loc_num}?inventory_item_id={item}",
                    "quantities": [
                        {"name": "available", "quantity": rng.randint(-2, 180)},
                        {"name": "committed", "quantity": rng.randint(0, 14)},
                    ],
                    "item": {"sku": sku},
                },
            }
        )
    return {
        "location": {
            "name": loc_name,
            "inventoryLevels": {
                "edges": edges,
                "pageInfo": {"hasNextPage": has_next, "endCursor": edges[-1]["cursor"]},
            },
        }
    }, item


def shop_throttled_inventory_report():
    rng = random.Random(303)
    b = _Budget(rng, available=1000.0)
    r = Run("shop_throttled_inventory_report", SHAPE, "loop-free", None)
    r.turn(
        "Build a low-stock report: compare available stock at every location with the reorder thresholds file."
    )
    _read_csv(
        r,
        "reports/reorder_thresholds.csv",
        ["sku_prefix", "min_available"],
        [
            {"sku_prefix": "TRL", "min_available": "12"},
            {"sku_prefix": "SUM", "min_available": "8"},
            {"sku_prefix": "GLA", "min_available": "20"},
            {"sku_prefix": "*", "min_available": "5"},
        ],
    )
    _gql(
        r,
        "{ locations(first: 10) { nodes { id name isActive fulfillsOnlineOrders } } }",
        {},
        {
            "locations": {
                "nodes": [
                    {
                        "id": "gid://shop/Location/71203840051",
                        "name": "Reno Warehouse",
                        "isActive": True,
                        "fulfillsOnlineOrders": True,
                    },
                    {
                        "id": "gid://shop/Location/71203872819",
                        "name": "Portland Flagship",
                        "isActive": True,
                        "fulfillsOnlineOrders": False,
                    },
                    {
                        "id": "gid://shop/Location/71204003891",
                        "name": "Denver Pop-up",
                        "isActive": True,
                        "fulfillsOnlineOrders": False,
                    },
                ]
            }
        },
        b.ext(12, 4),
    )
    r.turn("3 locations. Pulling inventory levels 50 per page, Reno first.")
    locs = [
        ("Reno Warehouse", 71203840051),
        ("Portland Flagship", 71203872819),
        ("Denver Pop-up", 71204003891),
    ]
    # Reno: 3 pages, third one throttled first
    after = None
    item = 44100000000
    for pg in range(3):
        data, item_next = _levels(rng, locs[0][0], locs[0][1], 50 if pg < 2 else 31, item, pg < 2)
        vars_ = {"loc": f"gid://shop/Location/{locs[0][1]}", "first": 50, "after": after}
        if pg == 2:
            b.available = 23.0
            r.call(
                "graphql",
                {"query": Q_LEVELS, "variables": vars_},
                _j(
                    {
                        "errors": [
                            {
                                "message": "Throttled",
                                "extensions": {
                                    "code": "THROTTLED",
                                    "documentation": "https://shop.dev/api/usage/rate-limits",
                                },
                            }
                        ],
                        "extensions": b.ext(152, throttled=True, refill=False),
                    }
                ),
                error=True,
            )
            r.turn(
                "THROTTLED: 23 points available, query needs 152, restore rate 50/s. Waiting ~3s before retrying this same page."
            )
            r.clock += 3.0
            b.available = 23.0 + 50.0 * 3.0
        _gql(r, Q_LEVELS, vars_, data, b.ext(152, rng.randint(90, 120), refill=pg != 2))
        item = item_next
        after = data["location"]["inventoryLevels"]["pageInfo"]["endCursor"]
    r.turn(
        "Reno done: 131 levels, 9 under threshold. The retry after the wait worked. For the two stores "
        "I'll request 25 per page to stay well inside the budget."
    )
    for loc_name, loc_num, sizes in [
        (locs[1][0], locs[1][1], [25, 25, 14]),
        (locs[2][0], locs[2][1], [19]),
    ]:
        after = None
        for k, n in enumerate(sizes):
            data, item = _levels(rng, loc_name, loc_num, n, item, k < len(sizes) - 1)
            _gql(
                r,
                Q_LEVELS,
                {
                    "loc": f"gid://shop/Location/{loc_num}",
                    "first": 25,
                    "after": after,
                },
                data,
                b.ext(77, rng.randint(45, 60)),
            )
            after = data["location"]["inventoryLevels"]["pageInfo"]["endCursor"]
        r.turn(f"{loc_name}: {sum(sizes)} levels read.")
    r.turn(
        "All 3 locations read (214 levels). 17 SKU/location pairs under threshold, 3 with negative available. Writing the report."
    )
    return r


# ---------------------------------------------------------------------------------------
# loop-free 4: create product, then its variants, then inventory, then publish
# ---------------------------------------------------------------------------------------
def shop_create_product_with_variants():
    rng = random.Random(404)
    b = _Budget(rng)
    r = Run("shop_create_product_with_variants", SHAPE, "loop-free", None)
    sizes = ["S", "M", "L"]
    colors = ["Moss", "Slate"]
    combos = [(s, c) for c in colors for s in sizes]
    rows = [
        {
            "title": "Ridgeline Insulated Jacket",
            "size": s,
            "color": c,
            "sku": f"RDG-5120-{c[:3].upper()}-{s}",
            "price": "189.00",
            "qty_reno": str(rng.randint(10, 60)),
            "qty_portland": str(rng.randint(2, 12)),
        }
        for s, c in combos
    ]
    r.turn(
        "New product launch from imports/new_ridgeline_jacket.csv: create the product, its 6 variants, stock them, publish."
    )
    _read_csv(r, "imports/new_ridgeline_jacket.csv", list(rows[0]), rows)
    pid = "gid://shop/Product/8012519044"
    _gql(
        r,
        "mutation Create($product: ProductCreateInput!) { productCreate(product: $product) { product { id handle options { id name optionValues { id name } } variants(first: 1) { nodes { id } } } userErrors { field message } } }",
        {
            "product": {
                "title": "Ridgeline Insulated Jacket",
                "vendor": "Ridgeline",
                "productType": "Outerwear",
                "status": "DRAFT",
                "productOptions": [
                    {"name": "Size", "values": [{"name": s} for s in sizes]},
                    {"name": "Color", "values": [{"name": c} for c in colors]},
                ],
            }
        },
        {
            "productCreate": {
                "product": {
                    "id": pid,
                    "handle": "ridgeline-insulated-jacket",
                    "options": [
                        {
                            "id": "gid://shop/ProductOption/10301884211",
                            "name": "Size",
                            "optionValues": [
                                {
                                    "id": f"gid://shop/ProductOptionValue/{3411200870 + i * 37}",
                                    "name": s,
                                }
                                for i, s in enumerate(sizes)
                            ],
                        },
                        {
                            "id": "gid://shop/ProductOption/10301884244",
                            "name": "Color",
                            "optionValues": [
                                {
                                    "id": f"gid://shop/ProductOptionValue/{3411201003 + i * 37}",
                                    "name": c,
                                }
                                for i, c in enumerate(colors)
                            ],
                        },
                    ],
                    "variants": {"nodes": [{"id": "gid://shop/ProductVariant/46120031207"}]},
                },
                "userErrors": [],
            }
        },
        b.ext(10),
    )
    r.turn(
        "Product created as DRAFT with options. Now bulk-create the 6 variants, replacing the standalone default variant."
    )
    variants = []
    for i, row in enumerate(rows):
        variants.append(
            {
                "id": f"gid://shop/ProductVariant/{46120031300 + i * 33}",
                "sku": row["sku"],
                "title": f"{row['size']} / {row['color']}",
                "inventoryItem": {"id": f"gid://shop/InventoryItem/{48211907100 + i * 33}"},
            }
        )
    _gql(
        r,
        "mutation Vars($productId: ID!, $variants: [ProductVariantsBulkInput!]!) { productVariantsBulkCreate(productId: $productId, variants: $variants, strategy: REMOVE_STANDALONE_VARIANT) { productVariants { id sku title inventoryItem { id } } userErrors { field message } } }",
        {
            "productId": pid,
            "variants": [
                {
                    "price": row["price"],
                    "inventoryItem": {"sku": row["sku"], "tracked": True},
                    "optionValues": [
                        {"optionName": "Size", "name": row["size"]},
                        {"optionName": "Color", "name": row["color"]},
                    ],
                }
                for row in rows
            ],
        },
        {"productVariantsBulkCreate": {"productVariants": variants, "userErrors": []}},
        b.ext(16),
    )
    reno = "gid://shop/Location/71203840051"
    pdx = "gid://shop/Location/71203872819"

    def adjust(loc, key, ok):
        changes = [
            {"inventoryItemId": v["inventoryItem"]["id"], "locationId": loc, "delta": int(row[key])}
            for v, row in zip(variants, rows)
        ]
        if ok:
            res = {
                "inventoryAdjustQuantities": {
                    "inventoryAdjustmentGroup": {
                        "id": f"gid://shop/InventoryAdjustmentGroup/{rng.randint(60_000_000_000, 69_999_999_999)}",
                        "reason": "received",
                        "changes": [
                            {"name": "available", "delta": c["delta"], "item": {"sku": row["sku"]}}
                            for c, row in zip(changes, rows)
                        ],
                    },
                    "userErrors": [],
                }
            }
        else:
            res = {
                "inventoryAdjustQuantities": {
                    "inventoryAdjustmentGroup": None,
                    "userErrors": [
                        {
                            "field": ["input", "changes", str(i), "locationId"],
                            "message": "The specified inventory item is not stocked at the location.",
                            "code": "ITEM_NOT_STOCKED_AT_LOCATION",
                        }
                        for i in range(6)
                    ],
                }
            }
        _gql(
            r,
            "mutation Adjust($input: InventoryAdjustQuantitiesInput!) { inventoryAdjustQuantities(input: $input) { inventoryAdjustmentGroup { id reason changes { name delta item { sku } } } userErrors { field message code } } }",
            {"input": {"reason": "received", "name": "available", "changes": changes}},
            res,
            b.ext(10),
        )

    r.turn("Variants created. Receiving stock at Reno Warehouse (the default location).")
    adjust(reno, "qty_reno", True)
    r.turn("Reno stocked. Now Portland Flagship.")
    adjust(pdx, "qty_portland", False)
    r.turn(
        "ITEM_NOT_STOCKED_AT_LOCATION: new items are only activated at the default location. Activate all 6 at Portland, then redo the adjustment."
    )
    alias = " ".join(
        f'a{i}: inventoryActivate(inventoryItemId: "{v["inventoryItem"]["id"]}", locationId: "{pdx}") {{ inventoryLevel {{ id }} userErrors {{ message }} }}'
        for i, v in enumerate(variants)
    )
    _gql(
        r,
        "mutation Activate { " + alias + " }",
        {},
        {
            f"a{i}": {
                "inventoryLevel": {
                    "id": f"gid://shop/InventoryLevel/71203872819?inventory_item_id={_num(v['inventoryItem']['id'])}"
                },
                "userErrors": [],
            }
            for i, v in enumerate(variants)
        },
        b.ext(60),
    )
    adjust(pdx, "qty_portland", True)
    r.turn("Portland stocked. Publishing to the Online Store and setting ACTIVE.")
    _gql(
        r,
        "mutation Pub($id: ID!, $pub: ID!) { publishablePublish(id: $id, input: {publicationId: $pub}) { publishable { ... on Product { id } } userErrors { message } } productUpdate(input: {id: $id, status: ACTIVE}) { product { status } userErrors { message } } }",
        {"id": pid, "pub": "gid://shop/Publication/98122137651"},
        {
            "publishablePublish": {"publishable": {"id": pid}, "userErrors": []},
            "productUpdate": {"product": {"status": "ACTIVE"}, "userErrors": []},
        },
        b.ext(20),
    )
    _gql(
        r,
        "query P($id: ID!) { product(id: $id) { status totalInventory onlineStoreUrl variantsCount { count } } }",
        {"id": pid},
        {
            "product": {
                "status": "ACTIVE",
                "totalInventory": sum(int(x["qty_reno"]) + int(x["qty_portland"]) for x in rows),
                "onlineStoreUrl": "https://ridgeline-outfitters.example/products/ridgeline-insulated-jacket",
                "variantsCount": {"count": 6},
            }
        },
        b.ext(3, 3),
    )
    r.turn("Launch complete: 6 variants, stocked at two locations, live on the Online Store.")
    return r


# ---------------------------------------------------------------------------------------
# loop 1: same userErrors message while the agent only renames the field it sends
# ---------------------------------------------------------------------------------------
def shop_variant_unique_rename_loop():
    rng = random.Random(505)
    b = _Budget(rng)
    r = Run("shop_variant_unique_rename_loop", SHAPE, "loop", 3)
    rows = [
        {"sku": "BAS-7701-BLK-S", "size": "S", "color": "Black", "price": "64.00"},
        {"sku": "BAS-7701-BLK-M", "size": "M", "color": "Black", "price": "64.00"},
        {"sku": "BAS-7701-BLK-L", "size": "L", "color": "Black", "price": "64.00"},
        {
            "sku": "BAS-7701-BLK-M2",
            "size": "M",
            "color": "Black",
            "price": "64.00",
        },  # duplicate combo
        {"sku": "BAS-7701-SND-M", "size": "M", "color": "Sand", "price": "64.00"},
        {"sku": "BAS-7701-SND-L", "size": "L", "color": "Sand", "price": "64.00"},
    ]
    r.turn("Create the Basalt Merino Crew with the variants in imports/basalt_crew.csv.")
    _read_csv(r, "imports/basalt_crew.csv", ["sku", "size", "color", "price"], rows)
    pid = "gid://shop/Product/8012603377"
    _gql(
        r,
        "mutation Create($product: ProductCreateInput!) { productCreate(product: $product) { product { id options { name values } } userErrors { field message } } }",
        {
            "product": {
                "title": "Basalt Merino Crew",
                "status": "DRAFT",
                "productOptions": [
                    {"name": "Size", "values": [{"name": "S"}, {"name": "M"}, {"name": "L"}]},
                    {"name": "Color", "values": [{"name": "Black"}, {"name": "Sand"}]},
                ],
            }
        },
        {
            "productCreate": {
                "product": {
                    "id": pid,
                    "options": [
                        {"name": "Size", "values": ["S", "M", "L"]},
                        {"name": "Color", "values": ["Black", "Sand"]},
                    ],
                },
                "userErrors": [],
            }
        },
        b.ext(10),
    )
    q = "mutation Vars($productId: ID!, $variants: [ProductVariantsBulkInput!]!) { productVariantsBulkCreate(productId: $productId, variants: $variants, strategy: REMOVE_STANDALONE_VARIANT) { productVariants { id } userErrors { field message code } } }"
    attempts = [
        (
            "optionValues",
            lambda x: [
                {"optionName": "Size", "name": x["size"]},
                {"optionName": "Color", "name": x["color"]},
            ],
            None,
        ),
        (
            "optionValues",
            lambda x: [
                {"name": x["size"], "optionName": "Size"},
                {"name": x["color"], "optionName": "Color"},
            ],
            "Maybe the order of keys matters, or it wants `name` first. Retrying with the keys swapped.",
        ),
        (
            "options",
            lambda x: [x["size"], x["color"]],
            "Still 'must be unique'. Perhaps optionValues is the wrong field for this API version; the older `options` array might work.",
        ),
        (
            "selectedOptions",
            lambda x: [
                {"name": "Size", "value": x["size"]},
                {"name": "Color", "value": x["color"]},
            ],
            "Same error. Try `selectedOptions` with name/value pairs like the storefront uses.",
        ),
        (
            "optionValues",
            lambda x: [
                {"optionName": "Size", "value": x["size"]},
                {"optionName": "Color", "value": x["color"]},
            ],
            "Same message again. Maybe it's `value` not `name` inside optionValues.",
        ),
        (
            "variantOptions",
            lambda x: [
                {"optionName": "Size", "name": x["size"]},
                {"optionName": "Color", "name": x["color"]},
            ],
            "Unchanged. Trying `variantOptions` as the field name.",
        ),
        (
            "optionValues",
            lambda x: [
                {"optionName": "size", "name": x["size"]},
                {"optionName": "color", "name": x["color"]},
            ],
            "Still the same error at variants.3. Perhaps option names are case-sensitive; lowercasing them.",
        ),
    ]
    for k, (field, build, thought) in enumerate(attempts):
        if thought:
            r.turn(thought)
        _gql(
            r,
            q,
            {
                "productId": pid,
                "variants": [
                    {"price": x["price"], "inventoryItem": {"sku": x["sku"]}, field: build(x)}
                    for x in rows
                ],
            },
            {
                "productVariantsBulkCreate": {
                    "productVariants": [],
                    "userErrors": [
                        {
                            "field": ["variants", "3", field],
                            "message": "Variant option values must be unique",
                            "code": "VARIANT_ALREADY_EXISTS",
                        }
                    ],
                }
            },
            b.ext(16),
        )
        if k == 0:
            r.turn(
                "userErrors: 'Variant option values must be unique' at variants.3. The input shape may be off."
            )
    r.turn(
        "None of the field names work; the API keeps rejecting variant 3. I'll try one more shape."
    )
    return r


# ---------------------------------------------------------------------------------------
# loop 2: re-querying the same page with the same cursor (forgets to advance)
# ---------------------------------------------------------------------------------------
Q_COLLECTION = """query CollectionProducts($id: ID!, $first: Int!, $after: String) {
  collection(id: $id) {
    title
    productsCount { count }
    products(first: $first, after: $after) {
      edges { cursor node { id title tags } }
      pageInfo { hasNextPage endCursor }
    }
  }
}"""


def shop_stale_cursor_loop():
    rng = random.Random(606)
    b = _Budget(rng)
    r = Run("shop_stale_cursor_loop", SHAPE, "loop", 4)
    coll = "gid://shop/Collection/448812733493"
    cat = _catalogue(rng, 20, 8012700000)
    for p in cat:
        p["tags"] = sorted(
            rng.sample(["outerwear", "summer", "bestseller", "new", "mens", "womens", "trail"], 2)
        )
    pages = [cat[:10], cat[10:20]]

    def fetch(after, items, tagged):
        edges = [
            {
                "cursor": _cursor(_num(p["id"])),
                "node": {
                    "id": p["id"],
                    "title": p["title"],
                    "tags": sorted(p["tags"] + (["summer-sale-24"] if tagged else [])),
                },
            }
            for p in items
        ]
        _gql(
            r,
            Q_COLLECTION,
            {"id": coll, "first": 10, "after": after},
            {
                "collection": {
                    "title": "Summer Trail Edit",
                    "productsCount": {"count": 46},
                    "products": {
                        "edges": edges,
                        "pageInfo": {"hasNextPage": True, "endCursor": edges[-1]["cursor"]},
                    },
                }
            },
            b.ext(32, 22),
        )
        return edges[-1]["cursor"]

    def tag(items):
        body = " ".join(
            f'p{i}: tagsAdd(id: "{p["id"]}", tags: ["summer-sale-24"]) {{ node {{ id }} userErrors {{ message }} }}'
            for i, p in enumerate(items)
        )
        _gql(
            r,
            "mutation Tag { " + body + " }",
            {},
            {f"p{i}": {"node": {"id": p["id"]}, "userErrors": []} for i, p in enumerate(items)},
            b.ext(100),
        )

    r.turn(
        "Tag every product in the 'Summer Trail Edit' collection (46 products) with summer-sale-24, 10 per page."
    )
    c1 = fetch(None, pages[0], False)
    tag(pages[0])
    r.turn("Page 1 tagged (10/46). Next page.")
    fetch(c1, pages[1], False)
    tag(pages[1])
    r.turn("Page 2 tagged (20/46). Next page.")
    # from here the agent keeps passing c1 instead of the newer endCursor
    for n in range(3, 7):
        fetch(c1, pages[1], True)
        if n < 6:
            tag(pages[1])
            r.turn(f"Page {n} tagged ({min(n * 10, 46)}/46). Next page.")
    r.turn("Still hasNextPage true; continuing until the collection is exhausted.")
    return r


# ---------------------------------------------------------------------------------------
# loop 3: retrying a mutation on ACCESS_DENIED write_inventory scope
# ---------------------------------------------------------------------------------------
def shop_access_denied_inventory_loop():
    rng = random.Random(707)
    b = _Budget(rng)
    r = Run("shop_access_denied_inventory_loop", SHAPE, "loop", 3)
    skus = [
        "GRN-1190-SLT",
        "GRN-1190-BLK",
        "JUN-3302-MOS",
        "JUN-3302-SND",
        "ALP-8841-NVY",
        "ALP-8841-RST",
        "HAR-2057-BLK",
        "HAR-2057-SLT",
    ]
    counted = {s: rng.randint(0, 90) for s in skus}
    r.turn("Apply the cycle count from imports/cycle_count_reno_0614.csv to Reno Warehouse.")
    _read_csv(
        r,
        "imports/cycle_count_reno_0614.csv",
        ["sku", "counted", "counted_by"],
        [{"sku": s, "counted": str(c), "counted_by": "j.ramirez"} for s, c in counted.items()],
    )
    items = {
        s: f"gid://shop/InventoryItem/{48200000000 + rng.randint(1_000_000, 9_999_999)}"
        for s in skus
    }
    system = {s: counted[s] + rng.choice([-3, -1, 0, 2, 4]) for s in skus}
    _gql(
        r,
        'query Items($q: String!) { inventoryItems(first: 20, query: $q) { nodes { id sku inventoryLevel(locationId: "gid://shop/Location/71203840051") { quantities(names: ["on_hand"]) { quantity } } } } }',
        {"q": " OR ".join(f"sku:{s}" for s in skus)},
        {
            "inventoryItems": {
                "nodes": [
                    {
                        "id": items[s],
                        "sku": s,
                        "inventoryLevel": {"quantities": [{"quantity": system[s]}]},
                    }
                    for s in skus
                ]
            }
        },
        b.ext(42, 18),
    )
    r.turn(
        "Got the 8 inventory items and their current on_hand. Computing deltas and applying them in one adjustment."
    )
    loc = "gid://shop/Location/71203840051"
    adj_q = "mutation Adjust($input: InventoryAdjustQuantitiesInput!) { inventoryAdjustQuantities(input: $input) { inventoryAdjustmentGroup { id } userErrors { field message } } }"
    set_q = "mutation SetOnHand($input: InventorySetOnHandQuantitiesInput!) { inventorySetOnHandQuantities(input: $input) { inventoryAdjustmentGroup { id } userErrors { field message } } }"

    def denied(field):
        return _j(
            {
                "data": {field: None},
                "errors": [
                    {
                        "message": f"ACCESS_DENIED: requires write_inventory scope. Access denied for {field} field.",
                        "locations": [
                            {
                                "line": 1,
                                "column": 58 if field == "inventoryAdjustQuantities" else 65,
                            }
                        ],
                        "path": [field],
                        "extensions": {
                            "code": "ACCESS_DENIED",
                            "documentation": "https://shop.dev/api/usage/access-scopes",
                            "requiredAccess": "`write_inventory` access scope.",
                        },
                    }
                ],
                "extensions": b.ext(10, 1),
            }
        )

    deltas = [
        {"inventoryItemId": items[s], "locationId": loc, "delta": counted[s] - system[s]}
        for s in skus
        if counted[s] != system[s]
    ]
    on_hand = [
        {"inventoryItemId": items[s], "locationId": loc, "quantity": counted[s]} for s in skus
    ]
    plan = [
        (
            adj_q,
            {"input": {"reason": "cycle_count_available", "name": "available", "changes": deltas}},
            "inventoryAdjustQuantities",
            None,
        ),
        (
            adj_q,
            {"input": {"reason": "cycle_count_available", "name": "available", "changes": deltas}},
            "inventoryAdjustQuantities",
            "ACCESS_DENIED, requires write_inventory. Could be transient on the token; retrying once.",
        ),
        (
            adj_q,
            {"input": {"reason": "correction", "name": "available", "changes": deltas}},
            "inventoryAdjustQuantities",
            "Same. Maybe the cycle_count reason needs extra permissions; use reason 'correction'.",
        ),
        (
            set_q,
            {"input": {"reason": "cycle_count_available", "setQuantities": on_hand}},
            "inventorySetOnHandQuantities",
            "Still denied. Setting on_hand directly instead of adjusting might go through a different permission.",
        ),
        (
            adj_q,
            {"input": {"reason": "correction", "name": "available", "changes": deltas[:1]}},
            "inventoryAdjustQuantities",
            "Denied for set too. Try a single item to see whether it's the batch size.",
        ),
        (
            adj_q,
            {"input": {"reason": "correction", "name": "on_hand", "changes": deltas[:1]}},
            "inventoryAdjustQuantities",
            "Single item denied as well. Try name 'on_hand' instead of 'available'.",
        ),
        (
            set_q,
            {"input": {"reason": "correction", "setQuantities": on_hand[:2]}},
            "inventorySetOnHandQuantities",
            "Retrying the set mutation with just two items.",
        ),
    ]
    for q, v, field, thought in plan:
        if thought:
            r.turn(thought)
        r.call("graphql", {"query": q, "variables": v}, denied(field), error=True)
    r.turn("Access is still denied; trying the adjustment again in a moment.")
    return r


# ---------------------------------------------------------------------------------------
# loop 4: alternating between two queries that both return empty edges
# ---------------------------------------------------------------------------------------
def shop_empty_edges_alternating_loop():
    rng = random.Random(808)
    b = _Budget(rng)
    r = Run("shop_empty_edges_alternating_loop", SHAPE, "loop", 4)
    r.turn(
        "Customer claim: Hartwell Outfitters says their wholesale orders of SKU WS-1042 shipped short. Find the orders."
    )
    _read_csv(
        r,
        "imports/wholesale_claims_june.csv",
        ["customer", "sku", "qty_ordered", "qty_received", "claim_ref"],
        [
            {
                "customer": "Hartwell Outfitters",
                "sku": "WS-1042",
                "qty_ordered": "120",
                "qty_received": "96",
                "claim_ref": "CLM-20931",
            }
        ],
    )
    cust = "gid://shop/Customer/7390112488761"
    _gql(
        r,
        "query C($q: String!) { customers(first: 5, query: $q) { edges { node { id displayName email numberOfOrders tags } } } }",
        {"q": "company:'Hartwell Outfitters'"},
        {
            "customers": {
                "edges": [
                    {
                        "node": {
                            "id": cust,
                            "displayName": "Dana Hartwell",
                            "email": "purchasing@hartwell-outfitters.example",
                            "numberOfOrders": "17",
                            "tags": ["wholesale", "net-30"],
                        }
                    }
                ]
            }
        },
        b.ext(12, 3),
    )
    q_orders = "query O($q: String!) { orders(first: 25, query: $q) { edges { node { id name createdAt displayFulfillmentStatus lineItems(first: 20) { nodes { sku quantity } } } } pageInfo { hasNextPage endCursor } } }"
    q_products = "query P($q: String!) { productVariants(first: 10, query: $q) { edges { node { id sku product { id title } } } pageInfo { hasNextPage endCursor } } }"
    order_q = f"customer_id:{_num(cust)} sku:WS-1042"
    prod_q = "sku:WS-1042"

    def empty(kind, q, vars_):
        _gql(
            r,
            q,
            vars_,
            {kind: {"edges": [], "pageInfo": {"hasNextPage": False, "endCursor": None}}},
            b.ext(52 if kind == "orders" else 22, 2),
        )

    empty("orders", q_orders, {"q": order_q})
    r.turn("No orders with that SKU for Hartwell. Let me check the SKU exists as a variant.")
    empty("productVariants", q_products, {"q": prod_q})
    r.turn(
        "No variant with sku WS-1042 either. Perhaps the orders search index was lagging; checking orders again."
    )
    thoughts = [
        "Orders still empty. Check the variant search once more in case the first query timed out on the index.",
        "Variant still not found. Orders might be indexed under the customer's email; re-running the orders search.",
        "Empty again. Re-checking the SKU lookup.",
        "No variant. Back to the orders query.",
        "Still nothing; one more variant lookup.",
    ]
    for i in range(6):
        if i % 2 == 0:
            empty(
                "orders",
                q_orders,
                {"q": order_q if i != 2 else f"customer_id:{_num(cust)} AND sku:WS-1042"},
            )
        else:
            empty("productVariants", q_products, {"q": prod_q if i != 3 else "sku:'WS-1042'"})
        if i < 5:
            r.turn(thoughts[i])
    return r


RUNS = [
    shop_paginate_archive_discontinued,
    shop_bulk_price_update,
    shop_throttled_inventory_report,
    shop_create_product_with_variants,
    shop_variant_unique_rename_loop,
    shop_stale_cursor_loop,
    shop_access_denied_inventory_loop,
    shop_empty_edges_alternating_loop,
]
