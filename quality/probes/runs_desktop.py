"""Computer-use / desktop agent: screenshot(), left_click(x, y), double_click(x, y),
type_text(text), key(combo), scroll(x, y, direction, amount). Invented runs.

screenshot() returns a textual description of the screen (window title, visible widgets,
cursor position, taskbar clock); actions return short confirmations or errors.

Label convention: Run(name, shape, label, loop_start). label is "loop-free" or "loop";
loop_start = index (0-based, counting tool calls only, not model turns) of the first tool
call that repeats an attempt that had already come back futile (the first repetition, not
the first attempt); None for loop-free runs."""

# ruff: noqa

import time

from harness import Run

SHAPE = "computer-use"


def _clock(r, offset_h=-8):
    """Taskbar clock derived from the run's simulated clock (so it advances naturally)."""
    return time.strftime("%H:%M", time.gmtime(r.clock + offset_h * 3600))


def _taskbar(r, extra="Wi-Fi connected, battery 78%"):
    return f"Taskbar: clock {_clock(r)}, {extra}."


def _shot(r, body, cursor, taskbar_extra="Wi-Fi connected, battery 78%"):
    r.call(
        "screenshot",
        {},
        f"{body} Mouse cursor at ({cursor[0]}, {cursor[1]}). {_taskbar(r, taskbar_extra)}",
        dur=0.6,
    )


def _click(r, x, y, result=None, error=False):
    r.call("left_click", {"x": x, "y": y}, result or f"clicked at ({x}, {y})", error=error, dur=0.2)


def _dclick(r, x, y):
    r.call("double_click", {"x": x, "y": y}, f"double-clicked at ({x}, {y})", dur=0.25)


def _type(r, text):
    r.call("type_text", {"text": text}, f"typed {len(text)} characters", dur=0.1 + 0.01 * len(text))


def _fill(r, x, y, text):
    """Click into the field at (x, y), then type text into it."""
    _click(r, x, y)
    _type(r, text)


def _key(r, combo):
    r.call("key", {"combo": combo}, f"pressed {combo}", dur=0.1)


def _scroll(r, x, y, direction, amount):
    r.call(
        "scroll",
        {"x": x, "y": y, "direction": direction, "amount": amount},
        f"scrolled {direction} {amount} at ({x}, {y})",
        dur=0.3,
    )


# ---------------------------------------------------------------------------------------
# loop-free
# ---------------------------------------------------------------------------------------


def desktop_expense_form_fill():
    """Long web form filled field by field: many click/type alternations, each a new field."""
    r = Run("desktop_expense_form_fill", SHAPE, "loop-free", None)
    r.turn(
        "Task: file an expense claim for the Düsseldorf hotel stay. I'll take a screenshot to see the portal."
    )
    _shot(
        r,
        "Window: 'New expense claim - Contoso Finance Portal - Microsoft Edge'. Form 'Expense claim' (section 1 of 2): "
        "Employee ID [empty] at (430, 212); Full name [empty] at (430, 262); Department [Select...] dropdown at (430, 312); "
        "Cost centre [empty] at (430, 362); Expense date [dd/mm/yyyy] at (430, 412); Merchant [empty] at (430, 462); "
        "Category [Select...] dropdown at (430, 512); Amount [0.00] at (430, 562); Currency [GBP] dropdown at (610, 562). "
        "Vertical scrollbar visible on the right; more fields below.",
        (960, 540),
    )
    r.turn("Empty form. I'll fill each field in order, starting with Employee ID.")
    _fill(r, 430, 212, "E-204871")
    _fill(r, 430, 262, "Priya Raman")
    _click(r, 430, 312)
    r.turn("Department dropdown should now be open; 'Finance' is usually the fourth option.")
    _click(r, 452, 398)
    _fill(r, 430, 362, "CC-4410")
    _fill(r, 430, 412, "18/03/2024")
    _fill(r, 430, 462, "Hotel Nikko Düsseldorf")
    _click(r, 430, 512)
    _click(r, 448, 566)
    _fill(r, 430, 562, "214.60")
    _click(r, 610, 562)
    _click(r, 618, 630)
    r.turn("Section 1 filled. Scrolling down to reach section 2.")
    _scroll(r, 640, 500, "down", 5)
    _shot(
        r,
        "Window: 'New expense claim - Contoso Finance Portal - Microsoft Edge'. Form section 1 collapsed summary: "
        "'E-204871 · Priya Raman · Finance · CC-4410 · 18/03/2024 · Hotel Nikko Düsseldorf · Lodging · 214.60 EUR'. "
        "Section 2 of 2: Project code [empty] at (430, 240); Business purpose [multi-line, empty] at (430, 300); "
        "Receipt: button 'Attach file' at (430, 390), 'No file chosen'; Approver [empty, autocomplete] at (430, 450); "
        "Checkbox 'I certify this expense is accurate and business-related' [unchecked] at (312, 520); "
        "Button 'Submit claim' at (430, 580).",
        (640, 500),
    )
    _fill(r, 430, 240, "PRJ-7781")
    _fill(
        r,
        430,
        300,
        "Client workshop with Rheinmetall Finance team, Düsseldorf, 18-19 March; one night lodging.",
    )
    r.turn("Now attach the receipt PDF from Downloads.")
    _click(r, 430, 390)
    _shot(
        r,
        "Window: 'Open' file dialog over Edge. Left pane: Quick access > Downloads (selected). Files: "
        "'Nikko_Duesseldorf_folio_18032024.pdf' (212 KB, 19/03/2024 08:14), 'boarding_pass_LH2401.pdf' (88 KB), "
        "'agenda_workshop_v3.docx' (41 KB). 'File name:' box at (520, 640) [empty]; buttons 'Open' (880, 680), 'Cancel' (970, 680).",
        (430, 390),
    )
    _type(r, "Nikko_Duesseldorf_folio_18032024.pdf")
    _key(r, "enter")
    _shot(
        r,
        "Window: 'New expense claim - Contoso Finance Portal - Microsoft Edge'. Section 2: Project code 'PRJ-7781'; "
        "Business purpose 'Client workshop with Rheinmetall Finance team, Düsseldorf, 18-19 March; one night lodging.'; "
        "Receipt: 'Nikko_Duesseldorf_folio_18032024.pdf (212 KB) ✓ uploaded'; Approver [empty] at (430, 450); "
        "Checkbox 'I certify...' [unchecked] at (312, 520); Button 'Submit claim' at (430, 580).",
        (880, 680),
    )
    _fill(r, 430, 450, "m.keller")
    _click(r, 312, 520)
    _click(r, 430, 580)
    _shot(
        r,
        "Window: 'Claim submitted - Contoso Finance Portal - Microsoft Edge'. Green banner: 'Expense claim EXP-2024-031877 "
        "submitted for approval to Markus Keller. Expected reimbursement: 214.60 EUR (≈ 183.41 GBP at 0.8547).' "
        "Links: 'View claim' (420, 300), 'Create another claim' (600, 300).",
        (430, 580),
    )
    r.turn("Claim EXP-2024-031877 submitted and routed to Markus Keller. Done.")
    return r


DOC_PAGES = [
    (
        3,
        "1. Definitions. 'Services' means the managed logistics services in Schedule A; 'Service Credits' means the credits in Schedule C ...",
    ),
    (
        5,
        "2. Term. This Agreement commences on the Effective Date (1 April 2024) and continues for an Initial Term of 36 months ...",
    ),
    (
        7,
        "2.3 Renewal. Upon expiry of the Initial Term this Agreement renews automatically for successive 12-month periods unless either party gives not less than 90 days' written notice ...",
    ),
    (
        9,
        "3. Fees and Payment. 3.1 Customer shall pay the Fees in Schedule B. 3.2 Invoices are issued monthly in arrears and payable within 45 days of receipt ...",
    ),
    (
        11,
        "3.5 Late payment accrues interest at 2% above the Bank of England base rate. 3.6 Fees may be indexed annually by CPI, capped at 4% ...",
    ),
    (
        13,
        "4. Service Levels. Supplier shall meet the on-time delivery KPI of 98.5% measured monthly; failure triggers Service Credits per Schedule C ...",
    ),
    (
        16,
        "7. Confidentiality. Each party shall keep confidential the other's Confidential Information for the Term and 5 years thereafter ...",
    ),
    (
        19,
        "9. Limitation of Liability. 9.2 Each party's aggregate liability in any Contract Year shall not exceed 125% of the Fees paid in the preceding 12 months ...",
    ),
    (
        21,
        "9.3 The cap in 9.2 does not apply to death or personal injury caused by negligence, fraud, or breach of clause 7 (Confidentiality) ...",
    ),
    (
        24,
        "12. Termination. 12.1 Either party may terminate for convenience on 180 days' written notice, not effective before month 18. 12.2 Termination for material breach on 30 days' notice if unremedied ...",
    ),
    (
        27,
        "15. Governing Law. This Agreement is governed by the laws of England and Wales; the courts of London have exclusive jurisdiction ...",
    ),
]


def desktop_scroll_read_contract():
    """Scrolls a long PDF with identical scroll args; every screenshot shows new pages."""
    r = Run("desktop_scroll_read_contract", SHAPE, "loop-free", None)
    r.turn(
        "Task: extract renewal, payment terms, liability cap and termination notice from the Northwind MSA. Looking at the screen first."
    )
    _shot(
        r,
        "Window: 'MSA_Northwind_Logistics_v7_signed.pdf - Adobe Acrobat Reader (64-bit)'. Page 1 of 31 at 100%. "
        "Visible text: 'MASTER SERVICES AGREEMENT between Fernbrook Retail Ltd and Northwind Logistics plc, dated 14 March 2024'. "
        "Table of contents partially visible: '1 Definitions ... 3; 2 Term ... 5; 3 Fees ... 9; 4 Service Levels ... 13'.",
        (760, 540),
    )
    r.turn("I'll read through page by page, scrolling the document pane.")
    for i, (page, text) in enumerate(DOC_PAGES):
        _scroll(r, 760, 540, "down", 10)
        _shot(
            r,
            f"Window: 'MSA_Northwind_Logistics_v7_signed.pdf - Adobe Acrobat Reader (64-bit)'. Page {page} of 31 "
            f"(page indicator at top shows '{page} / 31'). Visible text: \"{text}\" Footer: 'Confidential — Execution version — page {page}'.",
            (760, 540),
        )
        if page == 7:
            r.turn("Auto-renewal: 12-month periods, 90 days' notice. Noted. Continuing.")
        elif page == 9:
            r.turn(
                "Payment terms: monthly in arrears, 45 days. Continuing to the liability section."
            )
        elif page == 21:
            r.turn(
                "Liability cap 125% of trailing 12-month fees, carve-outs in 9.3. Termination should be next."
            )
        elif page == 24:
            r.turn(
                "Termination for convenience: 180 days, not before month 18. I have everything; I'll check the governing law page too, then write notes."
            )
    _key(r, "alt+tab")
    _shot(
        r,
        "Window: 'contract_notes.txt - Notepad'. Empty document, caret at line 1, column 1. Status bar: 'Ln 1, Col 1 | 100% | Windows (CRLF) | UTF-8'.",
        (612, 388),
    )
    _type(
        r,
        "Northwind MSA v7 (14 Mar 2024): Initial term 36m from 1 Apr 2024; auto-renews 12m unless 90 days' notice (2.3). "
        "Invoices monthly in arrears, net 45 (3.2); late interest BoE+2% (3.5); CPI indexation capped 4% (3.6). "
        "Liability cap 125% of trailing-12m fees (9.2), carve-outs death/PI, fraud, confidentiality (9.3). "
        "Termination for convenience 180 days, not before month 18 (12.1); breach 30 days (12.2). English law (15).",
    )
    _key(r, "ctrl+s")
    _shot(
        r,
        "Window: 'contract_notes.txt - Notepad' (no unsaved-changes asterisk). Document shows the 4-line summary. Status bar: 'Ln 1, Col 427 | 100% | Windows (CRLF) | UTF-8'.",
        (612, 388),
    )
    r.turn("Notes saved to contract_notes.txt. Done.")
    return r


INSTALL_STEPS = [
    (3, "Extracting files...", r"C:\Program Files\GIMP 2\lib\babl-0.1\babl-cairo.dll"),
    (11, "Extracting files...", r"C:\Program Files\GIMP 2\lib\gegl-0.4\transform-core.dll"),
    (
        24,
        "Extracting files...",
        r"C:\Program Files\GIMP 2\share\gimp\2.0\brushes\Basic\hardness-075.gbr",
    ),
    (37, "Extracting files...", r"C:\Program Files\GIMP 2\share\locale\de\LC_MESSAGES\gimp20.mo"),
    (
        49,
        "Installing Python 3 support...",
        r"C:\Program Files\GIMP 2\lib\python3.10\site-packages\gi\__init__.py",
    ),
    (
        63,
        "Installing Python 3 support...",
        r"C:\Program Files\GIMP 2\lib\python3.10\encodings\cp1252.py",
    ),
    (
        78,
        "Installing translations...",
        r"C:\Program Files\GIMP 2\share\locale\pt_BR\LC_MESSAGES\gimp20-std-plug-ins.mo",
    ),
    (
        91,
        "Creating shortcuts...",
        r"C:\ProgramData\Microsoft\Windows\Start Menu\Programs\GIMP 2.10.36.lnk",
    ),
    (100, "Finishing installation...", "Registering file associations (.xcf, .xcfgz)"),
]


def desktop_installer_progress_wait():
    """Waits on an installer, screenshotting repeatedly while the progress bar advances."""
    r = Run("desktop_installer_progress_wait", SHAPE, "loop-free", None)
    r.turn("Task: install GIMP from the downloaded setup file. Screenshot first.")
    _shot(
        r,
        "Window: 'Downloads - File Explorer'. Files (details view): 'gimp-2.10.36-setup-1.exe' (312 MB, Application) at (212, 318); "
        "'invoice_4471.pdf' at (212, 348); 'IMG_20240311_1912.jpg' at (212, 378).",
        (640, 700),
    )
    _dclick(r, 212, 318)
    _shot(
        r,
        "User Account Control dialog (screen dimmed): 'Do you want to allow this app from an unknown publisher to make changes to your device? "
        "gimp-2.10.36-setup-1.exe — Verified publisher: The GIMP Team'. Buttons 'Yes' (842, 604), 'No' (962, 604).",
        (212, 318),
    )
    _click(r, 842, 604)
    _shot(
        r,
        "Window: 'Setup - GIMP 2.10.36'. 'GIMP 2.10.36 will be installed for all users. Click Install to install with default settings, "
        "or Customize to choose what will be installed.' Buttons 'Customize' (560, 540), 'Install' (720, 540).",
        (842, 604),
    )
    _click(r, 720, 540)
    r.turn(
        "Installation started. It will take a couple of minutes; I'll check the progress periodically."
    )
    for pct, phase, path in INSTALL_STEPS:
        r.clock += 14.0  # agent waits between checks
        _shot(
            r,
            f"Window: 'Setup - GIMP 2.10.36'. Heading 'Installing — Please wait while Setup installs GIMP 2.10.36 on your computer.' "
            f"Status: '{phase}' Detail: '{path}'. Progress bar {pct}%. Button 'Cancel' at (720, 540).",
            (720, 540),
        )
        if pct in (24, 63):
            r.turn(f"Progress at {pct}%, still moving. Waiting a bit more.")
    r.clock += 6.0
    _shot(
        r,
        "Window: 'Setup - GIMP 2.10.36'. 'Completing the GIMP 2.10.36 Setup Wizard. Setup has finished installing GIMP on your computer.' "
        "Checkbox 'Launch GIMP 2.10.36' [checked] at (420, 470). Button 'Finish' (736, 560).",
        (720, 540),
    )
    _click(r, 736, 560)
    r.clock += 8.0
    _shot(
        r,
        "GIMP splash screen: 'GIMP 2.10.36 — Loading fonts (this may take a while)'. No other windows in front.",
        (736, 560),
    )
    r.clock += 10.0
    _shot(
        r,
        "Window: 'GNU Image Manipulation Program'. Toolbox docked left, 'Tool Options' and 'Layers - Brushes' docks right, empty canvas. "
        "Menu bar: File Edit Select View Image Layer Colors Tools Filters Windows Help.",
        (736, 560),
    )
    r.turn("GIMP 2.10.36 is installed and launches correctly.")
    return r


def desktop_mail_setup_click_retry():
    """Account setup wizard; one click fails while config lookup runs, the retry works."""
    r = Run("desktop_mail_setup_click_retry", SHAPE, "loop-free", None)
    r.turn("Task: add Dana's work mailbox to Thunderbird and set her signature.")
    _shot(
        r,
        "Window: 'Account Setup - Mozilla Thunderbird'. 'Set Up Your Existing Email Address'. Fields: Your full name [empty] at (520, 260); "
        "Email address [empty] at (520, 320); Password [empty] at (520, 380); Checkbox 'Remember password' [checked]. "
        "Buttons 'Cancel' (520, 470), 'Continue' (640, 470) [disabled until fields filled].",
        (960, 540),
    )
    _fill(r, 520, 260, "Dana Whitfield")
    _fill(r, 520, 320, "dana.whitfield@fernbrook-legal.co.uk")
    _fill(r, 520, 380, "Tr1llium!Harbour-42")
    _click(r, 640, 470)
    _shot(
        r,
        "Window: 'Account Setup - Mozilla Thunderbird'. Spinner: 'Looking up configuration: Trying common server names…'. "
        "Buttons 'Configure manually' (520, 610), 'Done' (760, 610) [greyed].",
        (640, 470),
    )
    r.turn("Lookup is running; I'll try Done.")
    _click(r, 760, 610, result="element not interactable: button 'Done' is disabled", error=True)
    _shot(
        r,
        "Window: 'Account Setup - Mozilla Thunderbird'. 'Configuration found at email provider'. Incoming: IMAP imap.fernbrook-legal.co.uk:993 SSL/TLS; "
        "Outgoing: SMTP smtp.fernbrook-legal.co.uk:465 SSL/TLS; Username dana.whitfield@fernbrook-legal.co.uk. Button 'Done' (760, 610) [enabled].",
        (760, 610),
    )
    r.turn("The lookup finished and Done is enabled now. Clicking it again.")
    _click(r, 760, 610)
    _shot(
        r,
        "Window: 'Account Setup - Mozilla Thunderbird'. 'Account successfully created'. Options: 'Connect your address books' (640, 420), "
        "'Connect your calendars' (640, 470). Button 'Finish' (640, 560).",
        (760, 610),
    )
    _click(r, 640, 560)
    r.clock += 5.0
    _shot(
        r,
        "Window: 'Inbox - dana.whitfield@fernbrook-legal.co.uk - Mozilla Thunderbird'. Status bar: 'Downloading message 112 of 1,384 in Inbox'. "
        "Message list shows 'Re: Harbour Lane lease — draft 4' (J. Okafor, 09:41) at top.",
        (640, 560),
    )
    r.turn("Mailbox is syncing. Now the signature: app menu > Account Settings.")
    _click(r, 1880, 60)
    _click(r, 1700, 300)
    _shot(
        r,
        "Tab: 'Account Settings'. Left tree: 'dana.whitfield@fernbrook-legal.co.uk' selected. Right: Account Name, Your Name 'Dana Whitfield', "
        "Email Address, Reply-to Address [empty], Organization [empty] at (900, 380), Signature text [empty multi-line] at (900, 520), "
        "checkbox 'Use HTML' at (760, 470). Status bar: 'Downloading message 640 of 1,384 in Inbox'.",
        (1700, 300),
    )
    _fill(r, 900, 380, "Fernbrook Legal LLP")
    _fill(
        r,
        900,
        520,
        "Dana Whitfield\nSenior Associate, Property\nFernbrook Legal LLP · 020 7946 0312",
    )
    _shot(
        r,
        "Tab: 'Account Settings'. Organization 'Fernbrook Legal LLP'; Signature text: 'Dana Whitfield / Senior Associate, Property / "
        "Fernbrook Legal LLP · 020 7946 0312'. Changes saved automatically. Status bar: 'Downloading message 1,021 of 1,384 in Inbox'.",
        (900, 520),
    )
    r.turn("Account added, signature and organization set. Done.")
    return r


# ---------------------------------------------------------------------------------------
# loops
# ---------------------------------------------------------------------------------------


def desktop_disabled_button_jitter():
    """Clicks a disabled 'Place order' button over and over at jittered coordinates."""
    r = Run("desktop_disabled_button_jitter", SHAPE, "loop", 8)
    r.turn("Task: complete checkout for the standing desk order. Screenshot first.")
    body = (
        "Window: 'Checkout - Oakfield Furniture - Google Chrome'. Left: Delivery address form: Address line 1 [{a1}] at (180, 190); "
        "Postcode [{pc}] at (180, 250); Delivery slot 'Thu 21 Mar, 8am–12pm' selected. Right panel 'Order summary': "
        "'Ergo Lift Pro standing desk 160x80, oak — £549.00; Delivery £0.00; Total £549.00'. Button 'Place order' at (412, 230) "
        "(rendered in light grey). Page is scrolled to top; scrollbar indicates more content below."
    )
    _shot(r, body.format(a1="empty", pc="empty"), (960, 540))
    _fill(r, 180, 190, "14 Marlowe Court, Hythe Road")
    _fill(r, 180, 250, "CT21 5DN")
    _shot(r, body.format(a1="14 Marlowe Court, Hythe Road", pc="CT21 5DN"), (180, 250))
    full = body.format(a1="14 Marlowe Court, Hythe Road", pc="CT21 5DN")
    r.turn("Address filled. Clicking Place order.")
    _click(r, 412, 230)  # 6: first attempt
    _shot(r, full, (412, 230))  # 7: nothing happened
    r.turn("Nothing changed. Maybe the click landed on the edge; trying a little to the right.")
    _click(r, 414, 231)  # 8: loop_start
    _shot(r, full, (414, 231))
    r.turn("Still on the checkout page. Trying slightly up-left.")
    _click(r, 410, 229)
    _shot(r, full, (410, 229))
    r.turn("The button may need a double-click.")
    _dclick(r, 412, 230)
    _shot(r, full, (412, 230))
    r.turn("No navigation. Trying Enter in case focus is on the button.")
    _key(r, "enter")
    _shot(r, full, (412, 230))
    r.turn("Same screen. Clicking the centre of the button again.")
    _click(r, 413, 232)
    _shot(r, full, (413, 232))
    _click(r, 411, 228)
    _shot(r, full, (411, 228))
    r.turn("Perhaps the page was still loading. One more click.")
    _click(r, 412, 231)
    _shot(r, full, (412, 231))
    return r


def desktop_modal_reappears():
    """A licence modal keeps coming back after Esc / X / 'Not now'; the agent keeps dismissing it."""
    r = Run("desktop_modal_reappears", SHAPE, "loop", 5)
    r.turn("Task: sort the Q3 forecast sheet by region and save. Opening the file.")
    _shot(
        r,
        "Window: 'Finance > Forecasts - File Explorer'. Files: 'Q3_forecast_v2.xlsx' (1.4 MB, modified 11/03/2024 17:02) at (240, 260); "
        "'Q2_actuals.xlsx' at (240, 290).",
        (960, 540),
    )
    _dclick(r, 240, 260)
    modal = (
        "Window: 'Q3_forecast_v2.xlsx - Excel'. A modal dialog covers the sheet: 'Microsoft 365 — We couldn't verify your subscription. "
        "Sign in to keep using Excel. (Error code: 0xCAA70004)'. Buttons 'Sign in' (900, 540), 'Not now' (1040, 540), close 'X' (1158, 312). "
        "Behind it the sheet 'Forecast' with columns Region, Product, Jul, Aug, Sep is visible but dimmed.{extra}"
    )
    _shot(r, modal.format(extra=""), (240, 260))
    r.turn("A licence modal is blocking the sheet. Pressing Escape to dismiss it.")
    _key(r, "Escape")  # 3: first attempt
    _shot(r, modal.format(extra=" The dialog flickered and was redrawn."), (240, 260))
    r.turn("Still there. Escape again.")
    _key(r, "Escape")  # 5: loop_start
    _shot(r, modal.format(extra=""), (240, 260))
    r.turn("Trying the close button.")
    _click(r, 1158, 312)
    _shot(r, modal.format(extra=" (dialog reappeared about one second after closing)"), (1158, 312))
    r.turn("It came back. Clicking 'Not now'.")
    _click(r, 1040, 540)
    _shot(r, modal.format(extra=""), (1040, 540))
    r.turn("Back again. Escape once more, then check quickly.")
    _key(r, "Escape")
    _shot(r, modal.format(extra=" The dialog flickered and was redrawn."), (1040, 540))
    _click(r, 1159, 313)
    _shot(r, modal.format(extra=""), (1159, 313))
    r.turn("Maybe clicking 'Not now' and then immediately Escape will keep it closed.")
    _click(r, 1041, 539)
    _key(r, "Escape")
    _shot(r, modal.format(extra=" (dialog reappeared about one second after closing)"), (1041, 539))
    _key(r, "Escape")
    _shot(r, modal.format(extra=""), (1041, 539))
    r.turn("The modal is persistent. Trying the X once more.")
    _click(r, 1157, 311)
    _shot(r, modal.format(extra=" (dialog reappeared about one second after closing)"), (1157, 311))
    return r


IBAN_TRIES = [
    "GB29 NWBK 6016 1331 9268 19",
    "GB29NWBK60161331926819",
    "gb29nwbk60161331926819",
    "GB29-NWBK-6016-1331-9268-19",
    "GB 29 NWBK 60161331926819",
    " GB29NWBK60161331926819 ",
]


def desktop_iban_validation_reject():
    """Same validation error every time while the agent varies the IBAN formatting."""
    r = Run("desktop_iban_validation_reject", SHAPE, "loop", 8)
    r.turn("Task: update Oliver Brandt's bank details in the payroll portal. Screenshot first.")
    form = (
        "Window: 'Bank details - PeoplePay Payroll - Firefox'. Form 'Employee: Oliver Brandt (EMP-33190)'. Account holder [{holder}] at (500, 240); "
        "Country of bank [Germany ▾] at (500, 300); IBAN [{iban}] at (500, 360){err}; BIC / SWIFT [empty] at (500, 420); Button 'Save' (500, 500)."
    )
    _shot(r, form.format(holder="empty", iban="empty", err=""), (960, 540))
    _fill(r, 500, 240, "Oliver Brandt")
    jit = [(500, 360), (502, 361), (498, 359), (501, 362), (499, 360), (503, 358)]
    for i, iban in enumerate(IBAN_TRIES):
        x, y = jit[i]
        _click(r, x, y)  # i == 1 -> index 8: loop_start
        if i % 2 == 0:
            _key(r, "ctrl+a")
        else:
            _dclick(r, x, y)
        _type(r, iban)
        _key(r, "tab")
        _shot(
            r,
            form.format(
                holder="Oliver Brandt",
                iban=iban,
                err=" — field outlined red, message below: 'Enter a valid IBAN.'",
            ),
            (x, y),
        )
        if i == 0:
            r.turn(
                "It says 'Enter a valid IBAN.' Maybe the spaces are the problem; trying without spaces."
            )
        elif i == 1:
            r.turn("Still invalid. Perhaps it wants lowercase.")
        elif i == 2:
            r.turn("Same message. Trying hyphen-separated groups.")
        elif i == 3:
            r.turn("No luck. Maybe a different grouping.")
        elif i == 4:
            r.turn(
                "Same error again. I'll retype it carefully with padding in case the field trims input."
            )
    return r


def desktop_tab_oscillation():
    """Flips between a returns form and an email tab without ever copying the order number."""
    r = Run("desktop_tab_oscillation", SHAPE, "loop", 7)
    r.turn(
        "Task: submit a return for the damaged kettle. I need the order number from the confirmation email."
    )
    form = (
        "Window: 'Start a return - Brightwell Home - Google Chrome'. Tabs: 'Start a return - Brightwell' (120, 18) [active], "
        "'Your Brightwell order is confirmed - Gmail' (340, 18). Form: Order number [empty] at (420, 260); Email [priya.r@example.com]; "
        "Reason [{reason}] at (420, 330); Button 'Continue' (420, 420)."
    )
    mail = (
        "Window: 'Your Brightwell order is confirmed - priya.r@example.com - Gmail - Google Chrome'. Tabs: 'Start a return - Brightwell' (120, 18), "
        "'Your Brightwell order is confirmed - Gmail' (340, 18) [active]. Email from orders@brightwell.co.uk, 2 Mar 2024: 'Thanks for your order, Priya! "
        "We'll let you know when it ships.' Image banner 'Spring Homeware Sale'. Below the fold (not visible): order details. Scrollbar at top."
    )
    _shot(r, form.format(reason="Select..."), (960, 540))
    _click(r, 420, 330)
    _click(r, 436, 402)
    r.turn("Reason set to 'Arrived damaged'. Switching to the email tab to get the order number.")
    _click(r, 340, 18)  # 3: first attempt to get the number
    _shot(r, mail, (340, 18))
    r.turn("The email is open. Going back to the form to enter the order number.")
    _click(r, 120, 18)
    _shot(r, form.format(reason="Arrived damaged"), (120, 18))
    r.turn("I need the order number; let me look at the email again.")
    _click(r, 341, 19)  # 7: loop_start
    _shot(r, mail, (341, 19))
    r.turn("This is the confirmation email. Back to the form.")
    _click(r, 121, 17)
    _shot(r, form.format(reason="Arrived damaged"), (121, 17))
    r.turn("Order number field is empty. Checking the email tab.")
    _key(r, "ctrl+tab")
    _shot(r, mail, (121, 17))
    _key(r, "ctrl+shift+tab")
    _shot(r, form.format(reason="Arrived damaged"), (121, 17))
    r.turn("The number should be in the Brightwell email. Switching tabs.")
    _click(r, 339, 18)
    _shot(r, mail, (339, 18))
    _click(r, 119, 18)
    _shot(r, form.format(reason="Arrived damaged"), (119, 18))
    r.turn("Let me double-check the email for the number.")
    _click(r, 342, 18)
    _shot(r, mail, (342, 18))
    _click(r, 120, 19)
    _shot(r, form.format(reason="Arrived damaged"), (120, 19))
    return r


RUNS = [
    desktop_expense_form_fill,
    desktop_scroll_read_contract,
    desktop_installer_progress_wait,
    desktop_mail_setup_click_retry,
    desktop_disabled_button_jitter,
    desktop_modal_reappears,
    desktop_iban_validation_reject,
    desktop_tab_oscillation,
]
