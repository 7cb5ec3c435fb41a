from harness import Run

PRODUCTS = [
    ("Anker 563 USB-C Docking Station (10-in-1, Dual 4K HDMI)", "$129.99", "4.4", "2,318"),
    ("Dell WD19S 180W Dock", "$189.00", "4.3", "5,902"),
    ("Plugable USB-C Triple Display Dock", "$149.95", "4.2", "1,107"),
    ("Baseus 17-in-1 USB-C Docking Station", "$109.99", "4.1", "864"),
    ("Lenovo ThinkPad Universal USB-C Dock", "$199.99", "4.5", "3,440"),
    ("Satechi Dual Display Dock", "$159.99", "4.0", "412"),
    ("UGREEN Revodok Pro 210", "$89.99", "4.3", "2,051"),
    ("Kensington SD4780P Dual 4K", "$219.99", "4.2", "733"),
    ("StarTech DK30CH2DEPUE", "$239.99", "4.4", "1,590"),
    ("Hiearcool 11-in-1 Triple Display", "$45.99", "3.9", "9,120"),
    ("Targus DOCK182USZ", "$179.99", "4.0", "388"),
    ("WAVLINK Universal Dock", "$129.99", "4.1", "2,744"),
]


def goto(r, url, result):
    """A goto call navigating to url."""
    r.call("goto", {"url": url}, result)


def click(r, selector, result):
    """A click call on selector."""
    r.call("click", {"selector": selector}, result)


def scroll(r, direction, pixels, result):
    """A scroll call by pixels in direction."""
    r.call("scroll", {"direction": direction, "pixels": pixels}, result)


def page_text(r, result, **args):
    """A get_page_text call (args such as selector= narrow it) returning result."""
    r.call("get_page_text", args, result)


def page_chunk(lo, hi, y):
    lines = [
        f"[{i + 10}] {p} — {price} — ★{r} ({n} ratings) — FREE delivery Thu, Nov 16"
        for i, (p, price, r, n) in enumerate(PRODUCTS[lo:hi], start=lo)
    ]
    return f"Scrolled to y={y} of 9400.\n" + "\n".join(lines)


def browser_legit():
    r = Run("browser_shopping_legit", "browser", "loop-free", None)
    r.turn("I'll open the store and search for a USB-C docking station supporting two monitors.")
    goto(
        r,
        "https://www.shopmart.example/",
        "Navigated to https://www.shopmart.example/ (200) in 1.42s. Title: ShopMart — Online Shopping",
    )
    r.call(
        "type_text",
        {"selector": "#twotabsearchtextbox", "text": "usb-c docking station dual monitor"},
        "Typed 34 characters into input#twotabsearchtextbox",
    )
    click(
        r,
        "#nav-search-submit-button",
        "Clicked <input id=nav-search-submit-button type=submit>. Page navigated to /s?k=usb-c+docking+station+dual+monitor",
    )
    page_text(
        r,
        'Results for "usb-c docking station dual monitor"\n1-48 of over 2,000 results\nSponsored\n'
        + page_chunk(0, 3, 0),
    )
    r.turn("Results loaded. Let me scroll to see more options and their ratings.")
    for k, y in enumerate([800, 1600, 2400, 3200]):
        scroll(r, "down", 800, page_chunk(3 + 2 * k, 5 + 2 * k, y))
    r.call(
        "screenshot",
        {"full_page": False},
        "Saved screenshot to /tmp/browser-7f3a91c2/shot_1700000412_8812.png (1280x800, 214 KB)",
    )
    r.turn(
        "The Lenovo dock has the best rating. Let me open it and check compatibility with MacBook."
    )
    click(
        r,
        "a[data-index='14'] h2",
        "Clicked <a class=a-link-normal href=/dp/B09Q5SK8KB>. Navigated to product page",
    )
    page_text(
        r,
        "Lenovo ThinkPad Universal USB-C Dock\n$199.99\nIn Stock\nCompatible: ThinkPad, Windows 10/11. macOS: single external display only (DisplayLink not supported)\nCustomer questions: 214",
    )
    scroll(
        r,
        "down",
        1200,
        "Scrolled to y=1200 of 6100.\nTechnical Details: Ports: 2x DP 1.4, 1x HDMI 2.0, 3x USB-A 3.1, RJ45 ...",
    )
    click(r, "#askATFLink", "Clicked <a id=askATFLink>. Expanded 'Customer questions & answers'")
    page_text(
        r,
        "Q: Does this work with an M1 MacBook Air for two monitors? A: No, M1 supports only one external display natively. (answered Mar 3, 2023)",
        selector="#ask-btf-container",
    )
    r.turn(
        "Not good for Mac dual display. Going back to compare the DisplayLink-based dock instead."
    )
    goto(
        r,
        "https://www.shopmart.example/s?k=usb-c+docking+station+dual+monitor",
        "Navigated to https://www.shopmart.example/s?k=usb-c+docking+station+dual+monitor (200) in 0.98s",
    )
    click(
        r,
        "#p_n_feature_browse-bin/2483122011",
        "Clicked <input type=checkbox aria-label='DisplayLink'>. Filter applied: DisplayLink (38 results)",
    )
    page_text(
        r,
        '38 results for "usb-c docking station dual monitor" — DisplayLink\n' + page_chunk(2, 4, 0),
    )
    scroll(r, "down", 800, page_chunk(8, 10, 800))
    scroll(r, "down", 800, page_chunk(10, 12, 1600))
    click(r, "a[data-index='12'] h2", "Clicked <a href=/dp/B08KTWZV9J>. Navigated to product page")
    page_text(
        r,
        "Plugable USB-C Triple Display Dock\n$149.95\nOnly 7 left in stock - order soon.\nmacOS: up to 3 displays with DisplayLink Manager 1.9\n",
    )
    r.call(
        "screenshot",
        {"full_page": False},
        "Saved screenshot to /tmp/browser-7f3a91c2/shot_1700000587_8812.png (1280x800, 198 KB)",
    )
    click(r, "#acrCustomerReviewLink", "Clicked <a id=acrCustomerReviewLink>. Scrolled to reviews")
    page_text(
        r,
        "Top reviews: 'Works flawlessly with my M2 Pro and two Dell U2723QE' (5.0) ... 'Driver update broke Sonoma' (2.0)",
        selector="#cm-cr-dp-review-list",
    )
    scroll(
        r,
        "down",
        800,
        "Scrolled to y=4200 of 8700.\nReview 6: 'Fan noise is zero, runs warm' (4.0)\nReview 7: 'DisplayLink uses CPU ~6%' (4.0)",
    )
    r.turn(
        "Reviews look good. I'll pick the 'with 100W power adapter' variant and add it to the cart."
    )
    scroll(r, "up", 3400, "Scrolled to y=800 of 8700.\nStyle: Dock only | Dock + 100W adapter")
    click(
        r,
        "li#style_name_1 button",
        "Clicked <button>Dock + 100W adapter</button>. Price updated: $169.95",
    )
    click(
        r,
        "#add-to-cart-button",
        "Clicked <input id=add-to-cart-button>. Navigated to /cart/smart-wagon?newItems=1",
    )
    page_text(r, "Added to Cart\nCart subtotal (1 item): $169.95\nProceed to checkout (1 item)")
    click(
        r,
        "input[name='proceedToRetailCheckout']",
        "Clicked <input name=proceedToRetailCheckout>. Navigated to /checkout/select-address",
    )
    page_text(
        r,
        "Select a delivery address\n(●) Jane Doe, 1200 Market St Apt 4, San Francisco CA 94102\nUse this address",
    )
    click(
        r,
        "#shipToThisAddressButton",
        "Clicked <span id=shipToThisAddressButton>. Navigated to /checkout/pay",
    )
    page_text(
        r,
        "Payment method: Visa ending in 4242\nOrder total: $184.82 (incl. tax $14.87)\nPlace your order",
    )
    r.turn(
        "The order summary is ready; per the user's instructions I stop before placing the order and report back."
    )
    r.call(
        "screenshot",
        {"full_page": True},
        "Saved screenshot to /tmp/browser-7f3a91c2/shot_1700000733_8812.png (1280x2210, 402 KB)",
    )
    return r


def browser_scroll_feed_legit():
    """Realistic variant: the browser harness's scroll tool returns a constant confirmation
    (page content arrives in the next observation/model input), e.g. browser-use style."""
    r = Run("browser_scroll_constant_result_legit", "browser", "loop-free", None)
    goto(
        r,
        "https://news.ycombinator.example/",
        "Navigated to https://news.ycombinator.example/ (200)",
    )
    page_text(r, "1. Show HN: A tiny SQLite clone in Zig (github.com) 312 points\n2. ...30 items")
    for n in range(6):
        r.turn(f"Item list section {n + 1} read; scrolling for more stories about databases.")
        r.call(
            "scroll", {"direction": "down", "amount": 600}, "Scrolled down the page by 600 pixels"
        )
    click(r, "a.morelink", "Clicked <a class=morelink href=?p=2>")
    page_text(r, "31. Postgres 17 released (postgresql.org) 910 points\n...60 items")
    for n in range(5):
        r.call(
            "scroll", {"direction": "down", "amount": 600}, "Scrolled down the page by 600 pixels"
        )
        page_text(
            r,
            f"{34 + 3 * n}. Story {chr(65 + n)}: DuckDB internals part {n + 1}\n{35 + 3 * n}. ...",
            selector="tr.athing:visible",
        )
    return r


def browser_loop():
    r = Run("browser_dead_button_loop", "browser", "loop", 12)
    goto(
        r,
        "https://tickets.venue.example/events/8812",
        "Navigated to https://tickets.venue.example/events/8812 (200) in 2.10s",
    )
    page_text(
        r,
        "Khruangbin — Fox Theater Oakland — Sat Dec 2, 8:00 PM\nSelect tickets\nGA Floor $65.00 [ - 0 + ]\nBalcony $55.00 [ - 0 + ]",
    )
    click(
        r,
        "button[aria-label='Increase GA Floor']",
        "Clicked <button aria-label='Increase GA Floor'>",
    )
    click(
        r,
        "button[aria-label='Increase GA Floor']",
        "Clicked <button aria-label='Increase GA Floor'>",
    )
    page_text(r, "GA Floor $65.00 [ - 2 + ]\nSubtotal: $130.00 + fees", selector="#ticket-selector")
    r.call(
        "type_text", {"selector": "#promo", "text": "FOXFAN"}, "Typed 6 characters into input#promo"
    )
    click(r, "#apply-promo", "Clicked <button id=apply-promo>")
    page_text(
        r,
        "GA Floor $65.00 [ - 2 + ]\nPromo FOXFAN is not valid for this event\nSubtotal: $130.00 + fees",
        selector="#ticket-selector",
    )
    click(r, "#remove-promo", "Clicked <a id=remove-promo>")
    r.call(
        "screenshot",
        {},
        "Saved screenshot to /tmp/browser-2b9e0d17/shot_1700001010_9021.png (1280x800, 187 KB)",
    )
    scroll(r, "down", 400, "Scrolled to y=400 of 2100. Button 'Checkout' visible")
    r.turn("Tickets selected; clicking Checkout.")
    # loop: step 11 is first click
    for n in range(8):
        click(r, "button#checkout-btn", "Clicked <button id=checkout-btn class='btn btn-primary'>")
        page_text(
            r,
            f"Khruangbin — Fox Theater Oakland — Sat Dec 2, 8:00 PM\nSelect tickets\nGA Floor $65.00 [ - 2 + ]\nSubtotal: $130.00 + fees\nCheckout\nTickets held for {14 - n:02d}:{(37 * n) % 60:02d}",
        )
        if n % 3 == 2:
            r.call(
                "screenshot",
                {},
                f"Saved screenshot to /tmp/browser-2b9e0d17/shot_17000010{40 + n * 7}_9021.png (1280x800, 187 KB)",
            )
        r.turn(
            "The page still shows the ticket selector; the checkout click may not have registered. Let me click Checkout again."
        )
    return r


def browser_loop_bare():
    """Same dead button, the agent just clicks 8 times in a row and reads page each time."""
    r = Run("browser_dead_button_bare_loop", "browser", "loop", 3)
    goto(r, "https://portal.example.gov/renewal/step3", "Navigated (200) in 1.10s")
    page_text(r, "Step 3 of 4 — Review\nName: J. Doe\n[Continue]")
    scroll(r, "down", 600, "Scrolled to y=600 of 1400")
    for _n in range(8):
        click(r, "text=Continue", "Clicked <button type=button>Continue</button>")
        page_text(
            r, "Step 3 of 4 — Review\nName: J. Doe\n[Continue]\nSession expires in 19 minutes"
        )
    return r


RUNS = [browser_legit, browser_scroll_feed_legit, browser_loop, browser_loop_bare]


def browser_loop_varied_text():
    """Dead checkout button, page shows a HH:MM hold countdown (not masked), screenshots
    every third lap, and the model phrases each retry differently."""
    r = Run("browser_dead_button_varied_text_loop", "browser", "loop", 4)
    goto(r, "https://tickets.venue.example/events/8812", "Navigated (200) in 2.10s")
    click(
        r,
        "button[aria-label='Increase GA Floor']",
        "Clicked <button aria-label='Increase GA Floor'>",
    )
    page_text(r, "GA Floor $65.00 [ - 1 + ]\nSubtotal: $65.00 + fees", selector="#ticket-selector")
    scroll(r, "down", 400, "Scrolled to y=400 of 2100. Button 'Checkout' visible")
    phr = [
        "Clicking Checkout.",
        "Nothing happened; maybe the click landed before the handler attached. Retrying.",
        "Still on the selector. Trying the checkout button once more.",
        "The page didn't navigate. One more click.",
        "Hmm, same page. Clicking checkout again after a short pause.",
        "I'll retry the checkout button.",
        "Checkout still not advancing; retrying.",
        "Trying to click checkout another time.",
    ]
    for n in range(8):
        r.turn(phr[n])
        click(r, "button#checkout-btn", "Clicked <button id=checkout-btn class='btn btn-primary'>")
        page_text(
            r,
            f"Select tickets\nGA Floor $65.00 [ - 1 + ]\nSubtotal: $65.00 + fees\nCheckout\nTickets held for {14 - n // 2:02d}:{(59 - 17 * n) % 60:02d}",
        )
        if n % 3 == 2:
            r.call(
                "screenshot",
                {},
                f"Saved screenshot to /tmp/browser-2b9e0d17/shot_17000010{40 + n * 7}_9021.png (1280x800, 187 KB)",
            )
    return r


def browser_long_reading_legit():
    """A research agent reading a long article: scroll + read, each read new paragraphs."""
    r = Run("browser_long_article_reading_legit", "browser", "loop-free", None)
    goto(
        r,
        "https://en.wikipedia.example/wiki/Raft_(algorithm)",
        "Navigated (200) in 0.81s. Title: Raft (algorithm)",
    )
    topics = [
        "Leader election",
        "Log replication",
        "Safety",
        "Election restriction",
        "Commitment rules",
        "Cluster membership changes",
        "Log compaction",
        "Snapshots",
        "Client interaction",
        "Performance",
        "Implementations",
        "Comparison with Paxos",
    ]
    for n, t in enumerate(topics):
        scroll(r, "down", 900, f"Scrolled to y={900 * (n + 1)} of 11800")
        page_text(
            r,
            f"== {t} ==\nParagraph text about {t.lower()} (section {n + 1}) ... terms: term number, quorum, heartbeat.",
            visible_only=True,
        )
        if n % 4 == 3:
            r.turn(f"Notes so far cover {', '.join(topics[: n + 1])}. Continuing.")
    return r


RUNS += [browser_loop_varied_text, browser_long_reading_legit]
