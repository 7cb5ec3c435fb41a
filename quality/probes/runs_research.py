# ruff: noqa: E741  (the search results are named by letter, A to X, as the runs cite them)
"""Research agent: web_search(query), fetch_url(url), save_note(text). Invented runs.

Label convention: loop_start = index of the first tool call that repeats an attempt that
had already come back futile (the first repetition, not the first attempt)."""

from harness import Run


def serp(results):
    out = []
    for i, (title, url, date, snip) in enumerate(results, 1):
        out.append(f"{i}. {title}\n   {url}\n   {date} — {snip}")
    return "\n".join(out)


# ---- literature search: four-day work week --------------------------------------------

A = (
    "The four-day week: what the evidence says",
    "https://www.economist.com/finance-and-economics/2023/02/23/the-four-day-week-what-the-evidence-says",
    "Feb 23, 2023",
    "Britain's largest trial so far reports that most firms will continue. But the firms that signed up were not a random sample...",
)
B = (
    "Four-day work week results: productivity held steady - HBR",
    "https://hbr.org/2023/02/the-results-are-in-for-the-largest-four-day-workweek-trial",
    "Feb 28, 2023",
    "Of the 61 companies that participated, 56 are continuing with the four-day week...",
)
C = (
    "UK four-day week pilot: 92% of companies continue",
    "https://www.theguardian.com/business/2023/feb/21/four-day-week-uk-trial-success-pattern",
    "Feb 21, 2023",
    "Revenue stayed broadly the same over the trial period, rising by 1.4% on average...",
)
D = (
    "Does a four-day week raise productivity? | OECD Forum",
    "https://www.oecd-forum.org/posts/four-day-week-productivity",
    "Jun 5, 2023",
    "Working-time reductions have historically coincided with productivity gains, but causality...",
)
E = (
    "4 Day Week Global — Research",
    "https://www.4dayweek.com/research",
    "2023",
    "Our pilot programs are coordinated with researchers at Boston College, Cambridge and Oxford...",
)
F = (
    "Four-day week - Wikipedia",
    "https://en.wikipedia.org/wiki/Four-day_week",
    "",
    "A four-day week is an arrangement where a workplace or school has its employees or students work or attend over the course of four days...",
)
G = (
    "The results are in: the UK's four-day week pilot (PDF)",
    "https://autonomy.work/wp-content/uploads/2023/02/The-results-are-in-The-UKs-four-day-week-pilot.pdf",
    "Feb 2023",
    "Autonomy. 61 companies, around 2,900 workers, June-December 2022...",
)
H = (
    "Four-day week trial: what happened next",
    "https://www.ft.com/content/8e2c7b3a-1f0e-4c52-9a4f-2b5bd1a4f6a0",
    "Feb 21, 2023",
    "Participants reported lower burnout; sceptics point to self-selection...",
)
I = (
    "Four-day week pilot: the employee wellbeing data",
    "https://www.jbs.cam.ac.uk/2023/four-day-week-pilot-results/",
    "Feb 21, 2023",
    "Cambridge Judge Business School: 39% of employees were less stressed, 71% reported reduced burnout...",
)
K = (
    "Going Public: Iceland's journey to a shorter working week",
    "https://autonomy.work/portfolio/icelandsww/",
    "Jul 4, 2021",
    "Trials in Reykjavík 2015-2019 covered more than 2,500 workers, about 1% of the working population...",
)
L = (
    "Iceland's four-day week trials an 'overwhelming success' - BBC News",
    "https://www.bbc.com/news/business-57724779",
    "Jul 6, 2021",
    "The trials, which took place between 2015 and 2019, led many workplaces to cut hours...",
)
M = (
    "Iceland shorter working week - Alda report",
    "https://alda.is/2021/06/iceland-shorter-working-week-en/",
    "Jun 2021",
    "86% of Iceland's workforce now have either moved to shorter hours or gained the right to...",
)
N = (
    "The four-day week trials have a selection problem",
    "https://www.bloomberg.com/opinion/articles/2023-02-22/four-day-week-trials-have-a-selection-problem",
    "Feb 22, 2023",
    "Firms that volunteer for a four-day week are exactly the ones most likely to make it work...",
)
O = (
    "Four-Day Workweek: Critiques and Caveats - SHRM",
    "https://www.shrm.org/topics-tools/news/benefits-compensation/four-day-workweek-critiques",
    "Mar 10, 2023",
    "HR leaders warn that coverage-based roles such as customer service and healthcare...",
)
P = (
    "Working time reduction and productivity: a review (IZA DP No. 15782)",
    "https://docs.iza.org/dp15782.pdf",
    "Dec 2022",
    "We review 38 studies of reductions in standard working hours in Europe...",
)
Q = (
    "Why the four-day week might not work for everyone",
    "https://www.vox.com/2023/3/1/four-day-work-week-trial-critics",
    "Mar 1, 2023",
    "Critics argue that compressed schedules can intensify work...",
)
R = (
    "Microsoft Japan tested a four-day work week and productivity jumped 40%",
    "https://www.npr.org/2019/11/04/776163853/microsoft-japan-says-4-day-workweek-boosted-workers-productivity-by-40",
    "Nov 4, 2019",
    "The company's 'Work-Life Choice Challenge Summer 2019' gave staff five Fridays off in August...",
)
S = (
    "Microsoft Japan's four-day week: the numbers examined",
    "https://www.nikkei.com/article/DGXMZO51651860R01C19A1000000/",
    "Nov 2019",
    "Sales per employee rose 39.9% compared with August 2018...",
)
T = (
    "Microsoft four-day week - The Guardian",
    "https://www.theguardian.com/technology/2019/nov/04/microsoft-japan-four-day-work-week-productivity",
    "Nov 4, 2019",
    "Electricity costs fell 23% and 58% fewer pages were printed...",
)
U = (
    "Compressed workweeks: a meta-analysis (Journal of Applied Psychology)",
    "https://psycnet.apa.org/record/1999-03987-003",
    "1999",
    "Baltes et al. Compressed schedules positively affected supervisor performance ratings but not productivity...",
)
V = (
    "Four 10-hour days vs. 32 hours: what's the difference?",
    "https://www.indeed.com/career-advice/career-development/4-10-schedule",
    "Aug 2023",
    "A 4/10 schedule keeps the 40-hour week but compresses it, whereas a 32-hour week reduces total...",
)
W = (
    "The 4/10 schedule in US local government",
    "https://www.govexec.com/workforce/2022/06/4-10-schedules-local-government/368123/",
    "Jun 2022",
    "Utah's 2008 statewide 4/10 experiment was reversed in 2011...",
)
X = (
    "Making it stick: the UK four-day week pilot one year on",
    "https://autonomy.work/portfolio/uk4dwonayearon/",
    "Feb 2024",
    "Of the 61 companies, 54 were still running a four-day week a year later; 31 had made it permanent...",
)
Y = (
    "A year after the four-day week trial, most firms kept it - CNN",
    "https://www.cnn.com/2024/02/21/business/four-day-week-uk-trial-one-year-later/index.html",
    "Feb 21, 2024",
    "89% of companies were still operating the policy...",
)
Z = (
    "Valencia's four-day week experiment: reduced emissions, happier workers",
    "https://www.euronews.com/green/2023/07/27/valencia-four-day-week",
    "Jul 27, 2023",
    "The city's month-long trial in April-May 2023 saw workers report less stress...",
)
Z2 = (
    "Spain's 32-hour week pilot for SMEs gets €10m",
    "https://www.reuters.com/world/europe/spain-four-day-week-pilot-2023-03-13/",
    "Mar 13, 2023",
    "Companies with 4-250 staff can apply for subsidies to cut hours by at least 10%...",
)


def research_litsearch_legit():
    r = Run("research_fourday_litsearch_legit", "research-web", "loop-free", None)
    r.turn(
        "Task: a 1-page evidence summary on whether four-day work weeks raise productivity. Start broad."
    )
    r.call(
        "web_search", {"query": "four-day work week productivity study"}, serp([A, B, C, D, E, F])
    )
    r.call(
        "fetch_url",
        {"url": A[1]},
        "The four-day week: what the evidence says\nFeb 23rd 2023 | Finance & economics\n\nBRITAIN'S largest four-day-week trial ended in December. Of the 61 firms taking part, 56 say they will continue... Yet the participants chose to take part, and many were small firms in marketing and professional services. Revenue data were provided by only 23 firms...",
    )
    r.call(
        "fetch_url",
        {"url": B[1]},
        "HTTP 403 Forbidden\nAccess denied. Your request was blocked by our security service (Ref: 0.3d8f1502.1699988212.1a6c2b4f).",
        error=True,
    )
    r.call(
        "fetch_url",
        {"url": C[1]},
        "UK four-day week pilot: 92% of companies continue\nJoanna Partridge, Tue 21 Feb 2023 00.01 GMT\n\nThe world's biggest trial of the four-day working week has been hailed a success... 56 of the 61 companies that took part are continuing... 39% of employees said they were less stressed... revenue rose 1.4% on average, weighted by company size...",
    )
    r.call(
        "save_note",
        {
            "text": "UK pilot 2022: 61 firms, ~2,900 staff; 56/61 continue (Guardian 21 Feb 2023). Revenue +1.4% avg, only 23 firms reported revenue (Economist). Caveat: self-selected firms. HBR page 403 — find the primary report instead."
        },
        "note saved (id=n1, 238 chars)",
    )
    r.turn("Go to the primary source for the UK pilot.")
    r.call(
        "web_search",
        {"query": "four-day week trial UK 2022 results Autonomy report pdf"},
        serp([G, C, H, I, E]),
    )
    r.call(
        "fetch_url",
        {"url": G[1]},
        "[PDF, 71 pages] The results are in: The UK's four-day week pilot\nAutonomy, February 2023\nExecutive summary\n- 61 companies, approx. 2,900 employees, June–December 2022\n- 56 continuing, 18 permanently\n- Revenue broadly unchanged (+1.4% on average over the trial; +35% vs comparable period prior year, n=23)\n- Number of staff leaving fell 57%\n- Sick days down ~65%...",
    )
    r.call(
        "fetch_url",
        {"url": H[1]},
        "Error: timeout after 30.0s while reading response from www.ft.com:443",
        error=True,
    )
    r.call(
        "fetch_url",
        {"url": I[1]},
        "Four-day week pilot results\nCambridge Judge Business School, 21 February 2023\n\nResearchers from the University of Cambridge, Boston College and Autonomy... 71% of employees reported reduced burnout, 40% less difficulty sleeping... Brendan Burchell: 'before the trial, many questioned whether...'",
    )
    r.call(
        "save_note",
        {
            "text": "Autonomy PDF (primary): revenue +1.4% trial avg, +35% YoY (n=23); attrition -57%; sick days -65%. Cambridge JBS: 71% less burnout. FT timed out; skip."
        },
        "note saved (id=n2, 181 chars)",
    )
    r.call(
        "web_search",
        {"query": "Iceland four day week trial 2015-2019 Reykjavik results"},
        serp([K, L, M, F]),
    )
    r.call(
        "fetch_url",
        {"url": K[1]},
        "Going Public: Iceland's Journey to a Shorter Working Week\nAutonomy & Alda, July 2021\n\nTwo large-scale trials, Reykjavík City Council (2015–2019) and the national government (2017–2021), covered over 2,500 workers... productivity and service provision remained the same or improved in the majority of workplaces... note: most participants reduced from 40 to 35-36 hours, not a four-day week...",
    )
    r.call(
        "fetch_url",
        {"url": L[1]},
        "Iceland's four-day week trials an 'overwhelming success'\nBBC News, 6 July 2021\n\nTrials of a four-day week in Iceland were an 'overwhelming success'... Workers went from a 40-hour week to a 35 or 36-hour week... 86% of the workforce now...",
    )
    r.call(
        "save_note",
        {
            "text": "Iceland 2015-2019/2021: 2,500+ public-sector workers, 40h -> 35-36h (NOT 4 days). Productivity 'same or improved' per report — mostly self-reported/service metrics. Press framed it as 'four-day week' — misleading."
        },
        "note saved (id=n3, 214 chars)",
    )
    r.turn("Need the critical side: selection bias, sectors where it fails.")
    r.call(
        "web_search",
        {"query": "four-day work week criticism limitations selection bias trial"},
        serp([N, O, P, Q, A]),
    )
    r.call(
        "fetch_url",
        {"url": N[1]},
        "Bloomberg Opinion — Feb 22, 2023\nThe Four-Day Week Trials Have a Selection Problem\n\nThe firms that signed up... skew toward small, white-collar businesses with an enthusiastic leadership. Out of an initial pool of more than 100 interested companies, only 61 started... we'd learn more from a randomized design...",
    )
    r.call(
        "fetch_url",
        {"url": O[1]},
        "HTTP 403 Forbidden\n<title>Just a moment...</title> Enable JavaScript and cookies to continue. cf-ray: 8263b1f7ae1d4c2e-LHR",
        error=True,
    )
    r.call(
        "fetch_url",
        {"url": P[1]},
        "[PDF] IZA DP No. 15782 — Working Time Reduction and Productivity: A Review\nAbstract: We review 38 studies... Reductions in standard hours are associated with hourly productivity increases in most cases, but output per worker typically falls... effects are heterogeneous by sector; evidence from France's 35-hour week (2000) is mixed...",
    )
    r.call(
        "web_search",
        {"query": "Microsoft Japan four-day week 2019 productivity 40% sales per employee"},
        serp([R, S, T]),
    )
    r.call(
        "fetch_url",
        {"url": R[1]},
        "Microsoft Japan Says 4-Day Workweek Boosted Workers' Productivity By 40%\nNPR, November 4, 2019\n\nMicrosoft Japan gave its entire workforce five Fridays off in August... sales per employee rose nearly 40% compared with August 2018... meetings capped at 30 minutes...",
    )
    r.call(
        "fetch_url",
        {"url": S[1]},
        "Error: connect timeout (10s) to www.nikkei.com:443",
        error=True,
    )
    r.call(
        "save_note",
        {
            "text": "Critique: Bloomberg op-ed — 61 of 100+ interested firms; small white-collar; no control. IZA review (38 studies): hourly productivity up, output per worker often down. Microsoft Japan 2019: one month, sales/employee +39.9% vs Aug 2018 — seasonal, not a trial."
        },
        "note saved (id=n4, 262 chars)",
    )
    r.call(
        "web_search",
        {"query": "compressed workweek 4x10 versus reduced hours 32 hour week meta-analysis"},
        serp([U, V, W]),
    )
    r.call(
        "fetch_url",
        {"url": U[1]},
        "APA PsycNet — Baltes, B. B., Briggs, T. E., Huff, J. W., Wright, J. A., & Neuman, G. A. (1999). Flexible and compressed workweek schedules: A meta-analysis of their effects on work-related criteria. Journal of Applied Psychology, 84(4), 496–513.\nAbstract: ...compressed workweek schedules positively affected supervisor performance ratings, job satisfaction, and satisfaction with work schedule but did not affect absenteeism or productivity...",
    )
    r.call(
        "fetch_url",
        {"url": W[1]},
        "Government Executive, June 2022\nUtah's 'Working 4 Utah' initiative (2008) moved ~17,000 state employees to 4x10 schedules; it was ended in 2011 after residents complained about Friday closures; projected energy savings were smaller than expected...",
    )
    r.turn("Finally: does it stick after the trial ends?")
    r.call(
        "web_search",
        {"query": "UK four-day week pilot one year later how many companies kept it"},
        serp([X, G, Y, C]),
    )
    r.call(
        "fetch_url",
        {"url": X[1]},
        "Making it stick: The UK four-day week pilot one year on\nAutonomy, February 2024\n\n54 of the 61 companies still operate a four-day week; 31 (51%) have made the change permanent... benefits to wellbeing persisted...",
    )
    r.call(
        "fetch_url",
        {"url": Y[1]},
        "CNN Business — Feb 21, 2024\nA year after the UK's four-day week trial, 89% of the companies that took part are still operating the policy... survey covered 17 of the firms' CEOs and 220 employees...",
    )
    r.call(
        "save_note",
        {
            "text": "1 year on (Autonomy Feb 2024): 54/61 still on 4DW, 31 permanent. CNN: 89% still running; follow-up survey small (17 CEOs, 220 staff). Compressed 4x10 (Baltes 1999): no productivity effect; Utah 4x10 reversed 2011."
        },
        "note saved (id=n5, 227 chars)",
    )
    r.call(
        "web_search",
        {"query": "Spain Valencia four-day week pilot 2023 results"},
        serp([Z, Z2, F]),
    )
    r.call(
        "fetch_url",
        {"url": Z[1]},
        "Euronews Green, 27/07/2023\nValencia's four-day week: the city made four Mondays holidays in April-May 2023... commute emissions fell; 'the results are positive on health'... productivity was not measured...",
    )
    r.call(
        "save_note",
        {
            "text": "SUMMARY DRAFT: Evidence mostly from self-selected pilots (UK 2022, Iceland 35-36h, MS Japan 1 month). Hourly productivity rises, output per worker ~flat or unclear; wellbeing/retention gains consistent. No RCT. Compressed 4x10 differs from reduced hours. Valencia: no productivity data."
        },
        "note saved (id=n6, 301 chars)",
    )
    r.turn("Summary written from notes n1-n6.")
    return r


# ---- re-check the same source while writing ------------------------------------------

ART113 = "https://artificialintelligenceact.eu/article/113/"
ART113_TEXT = (
    "Article 113: Entry into Force and Application\n"
    "This Regulation shall enter into force on the twentieth day following that of its publication in the Official Journal of the European Union.\n"
    "It shall apply from 2 August 2026.\nHowever:\n"
    "(a) Chapters I and II shall apply from 2 February 2025;\n"
    "(b) Chapter III Section 4, Chapter V, Chapter VII and Chapter XII and Article 78 shall apply from 2 August 2025, with the exception of Article 101;\n"
    "(c) Article 6(1) and the corresponding obligations in this Regulation shall apply from 2 August 2027."
)


def research_recheck_source_legit():
    r = Run("research_aiact_recheck_source_legit", "research-web", "loop-free", None)
    r.turn(
        "Brief: 2-page explainer on EU AI Act obligations for general-purpose AI model providers, with a dated timeline."
    )
    r.call(
        "web_search",
        {"query": "EU AI Act entry into force date general purpose AI obligations"},
        serp(
            [
                (
                    "Regulation (EU) 2024/1689 (Artificial Intelligence Act) - EUR-Lex",
                    "https://eur-lex.europa.eu/eli/reg/2024/1689/oj",
                    "12 Jul 2024",
                    "Official Journal L, 2024/1689, 12.7.2024...",
                ),
                (
                    "AI Act enters into force - European Commission",
                    "https://commission.europa.eu/news/ai-act-enters-force-2024-08-01_en",
                    "1 Aug 2024",
                    "On 1 August 2024, the European Artificial Intelligence Act enters into force...",
                ),
                (
                    "Article 113: Entry into Force and Application | EU AI Act",
                    ART113,
                    "",
                    "It shall apply from 2 August 2026. However: (a) Chapters I and II shall apply from 2 February 2025...",
                ),
                (
                    "General-purpose AI models in the AI Act – Questions & Answers",
                    "https://digital-strategy.ec.europa.eu/en/faqs/general-purpose-ai-models-ai-act-questions-answers",
                    "Jul 2025",
                    "The obligations for providers of general-purpose AI models apply from 2 August 2025...",
                ),
            ]
        ),
    )
    r.call(
        "fetch_url",
        {"url": "https://commission.europa.eu/news/ai-act-enters-force-2024-08-01_en"},
        "AI Act enters into force\n1 August 2024\n\nOn 1 August 2024, the European Artificial Intelligence Act (AI Act) enters into force... The majority of rules will start applying on 2 August 2026. However, prohibitions of AI systems deemed to present an unacceptable risk will already apply after six months, while the rules for so-called General-Purpose AI models will apply after 12 months.",
    )
    r.call(
        "fetch_url",
        {
            "url": "https://digital-strategy.ec.europa.eu/en/faqs/general-purpose-ai-models-ai-act-questions-answers"
        },
        "General-Purpose AI Models in the AI Act – Questions & Answers\n\nWhen do the rules apply? The obligations for providers of general-purpose AI models apply from 2 August 2025. Providers of models placed on the market before that date have until 2 August 2027 to comply... What is a GPAI model with systemic risk? A model trained with more than 10^25 FLOP is presumed to have high-impact capabilities...",
    )
    r.call(
        "save_note",
        {
            "text": "In force 1 Aug 2024 (OJ 12 Jul 2024). GPAI obligations from 2 Aug 2025; legacy models until 2 Aug 2027. Systemic-risk presumption: >10^25 FLOP training compute. Source: Commission news + GPAI Q&A."
        },
        "note saved (id=n1, 205 chars)",
    )
    r.call(
        "web_search",
        {"query": "AI Act Article 113 application dates chapter V"},
        serp(
            [
                (
                    "Article 113: Entry into Force and Application | EU AI Act",
                    ART113,
                    "",
                    "It shall apply from 2 August 2026. However...",
                ),
                (
                    "AI Act implementation timeline",
                    "https://artificialintelligenceact.eu/implementation-timeline/",
                    "",
                    "2 Feb 2025: prohibitions apply; 2 Aug 2025: GPAI rules, governance...",
                ),
            ]
        ),
    )
    r.call("fetch_url", {"url": ART113}, ART113_TEXT)
    r.call(
        "save_note",
        {
            "text": "Art.113: general application 2 Aug 2026; Ch. I-II (incl. prohibitions Art.5) 2 Feb 2025; Ch. V (GPAI) 2 Aug 2025 except Art.101 fines; Art.6(1) high-risk 2 Aug 2027."
        },
        "note saved (id=n2, 171 chars)",
    )
    r.call(
        "fetch_url",
        {"url": "https://artificialintelligenceact.eu/implementation-timeline/"},
        "Implementation Timeline\n12 Jul 2024: published in OJ\n1 Aug 2024: entry into force\n2 Nov 2024: Member States list fundamental-rights authorities\n2 Feb 2025: prohibitions; AI literacy\n2 May 2025: codes of practice ready\n2 Aug 2025: GPAI obligations; penalties; governance\n2 Aug 2026: remainder, incl. Annex III high-risk\n2 Aug 2027: Art. 6(1) high-risk; legacy GPAI models",
    )
    r.call(
        "save_note",
        {
            "text": "DRAFT §1 Scope & timeline: The AI Act entered into force on 1 August 2024. For GPAI model providers the key date is 2 August 2025 ..."
        },
        "note saved (id=n3, 133 chars)",
    )
    r.turn(
        "Before writing §2 on obligations I want the exact Art.113(b) wording — it excludes Art.101, and I should say so precisely."
    )
    r.call("fetch_url", {"url": ART113}, ART113_TEXT)
    r.call(
        "save_note",
        {
            "text": "DRAFT §2 Obligations: technical documentation (Art.53(1)(a)), information for downstream providers, copyright policy, training-content summary; systemic-risk models also Art.55 evaluations, incident reporting, cybersecurity. Fines for GPAI providers (Art.101) only from 2 Aug 2026."
        },
        "note saved (id=n4, 284 chars)",
    )
    r.call(
        "web_search",
        {"query": "AI Act Article 101 fines providers general-purpose AI models amount"},
        serp(
            [
                (
                    "Article 101: Fines for Providers of General-Purpose AI Models",
                    "https://artificialintelligenceact.eu/article/101/",
                    "",
                    "...fines not exceeding 3% of their annual total worldwide turnover or EUR 15 000 000, whichever is higher...",
                ),
                (
                    "Article 99: Penalties | EU AI Act",
                    "https://artificialintelligenceact.eu/article/99/",
                    "",
                    "Non-compliance with the prohibition of the AI practices referred to in Article 5 shall be subject to fines of up to 35 000 000 EUR...",
                ),
            ]
        ),
    )
    r.call(
        "fetch_url",
        {"url": "https://artificialintelligenceact.eu/article/101/"},
        "Article 101: Fines for Providers of General-Purpose AI Models\n1. The Commission may impose on providers of general-purpose AI models fines not exceeding 3 % of their annual total worldwide turnover in the preceding financial year or EUR 15 000 000, whichever is higher, when the Commission finds that the provider intentionally or negligently: (a) infringed the relevant provisions of this Regulation; (b) failed to comply with a request for a document...",
    )
    r.call(
        "save_note",
        {
            "text": "DRAFT §3 Enforcement: AI Office (Commission) supervises GPAI; fines up to 3% worldwide turnover or €15m, whichever higher (Art.101) ..."
        },
        "note saved (id=n5, 140 chars)",
    )
    r.turn(
        "Building the timeline table; re-verifying every Art.113 date against the source once more before finalising."
    )
    r.call("fetch_url", {"url": ART113}, ART113_TEXT)
    r.call(
        "save_note",
        {
            "text": "FINAL timeline table: 1 Aug 2024 in force | 2 Feb 2025 prohibitions | 2 Aug 2025 GPAI obligations | 2 Aug 2026 general application + Art.101 fines | 2 Aug 2027 legacy GPAI, Art.6(1). All checked against Art.113."
        },
        "note saved (id=n6, 214 chars)",
    )
    r.turn("Explainer complete.")
    return r


# ---- paraphrased searches, same top results, never fetches ----------------------------

PYCON_TOP = [
    (
        "PyCon US - Wikipedia",
        "https://en.wikipedia.org/wiki/PyCon_US",
        "",
        "PyCon US is an annual convention for the Python programming language... The first PyCon was held in Washington, D.C. in 2003...",
    ),
    (
        "History of PyCon | PyCon US 2024",
        "https://us.pycon.org/2024/about/history/",
        "",
        "PyCon started in 2003 as a community conference in Washington, D.C., organised by the Python Software Foundation...",
    ),
    (
        "PyCon DC 2003 - Python Wiki",
        "https://wiki.python.org/moin/PyConDC2003",
        "",
        "PyCon DC 2003 took place March 26-28, 2003 at George Washington University's Cafritz Conference Center...",
    ),
    (
        "Python conferences history - Python.org",
        "https://www.python.org/community/workshops/",
        "",
        "Before PyCon, the International Python Conferences (IPC) were held from 1994 to 2002...",
    ),
]


def research_paraphrase_loop():
    r = Run("research_paraphrase_search_loop", "research-web", "loop", 4)
    r.turn(
        "Task: a paragraph on PyCon US history with attendance figures, including the first one (2003)."
    )
    r.call(
        "web_search",
        {"query": "PyCon US history attendance by year"},
        serp(
            [
                (
                    "PyCon US - Wikipedia",
                    "https://en.wikipedia.org/wiki/PyCon_US",
                    "",
                    "...Attendance grew from roughly 2,000 in 2013 to over 3,300 in 2019...",
                ),
                (
                    "PyCon US 2019 recap | PSF blog",
                    "https://pyfound.blogspot.com/2019/05/pycon-2019-recap.html",
                    "May 2019",
                    "3,393 attendees came to Cleveland...",
                ),
                (
                    "Python Software Foundation annual report 2019",
                    "https://www.python.org/psf/annual-report/2019/",
                    "",
                    "PyCon US 2019 had 3,393 attendees and 1,000+ sprinters...",
                ),
            ]
        ),
    )
    r.call(
        "fetch_url",
        {"url": "https://en.wikipedia.org/wiki/PyCon_US"},
        "PyCon US\nFrom Wikipedia, the free encyclopedia\n\nHistory: The first PyCon was held in Washington, D.C., in March 2003... It moved to Dallas (2007-2008), Chicago (2009-2010), Atlanta (2011-2012), Santa Clara (2013), Montréal (2014-2015), Portland (2016-2017), Cleveland (2018-2019)...\nAttendance: 2013: ~2,500; 2014: ~2,500; 2017: 3,200; 2019: 3,393; 2022: ~1,800; 2023: ~2,500.\n(No figure is given for 2003-2006.)",
    )
    r.call(
        "save_note",
        {
            "text": "Attendance (Wikipedia): 2013 ~2,500; 2017 3,200; 2019 3,393; 2022 ~1,800; 2023 ~2,500. 2003 figure missing — find it."
        },
        "note saved (id=n1, 124 chars)",
    )
    r.call("web_search", {"query": "PyCon 2003 attendance"}, serp(PYCON_TOP))
    r.turn("The snippets don't give the 2003 number. Let me rephrase the search.")
    paraphrases = [
        "how many people attended the first PyCon in 2003",
        "PyCon DC 2003 number of attendees",
        "first PyCon Washington DC 2003 attendee count",
        "PyCon 2003 how many attendees",
        "attendance at PyCon DC 2003 George Washington University",
        "number of participants first Python conference PyCon 2003",
        "PyCon 2003 registrations total",
        "PyCon DC 2003 attendance figure",
        "how big was the first PyCon 2003",
        "inaugural PyCon 2003 attendance number",
        "PyCon 2003 Washington attendees how many people came",
    ]
    for k, q in enumerate(paraphrases):
        res = list(PYCON_TOP)
        if k % 4 == 2:
            res[1], res[2] = res[2], res[1]
        r.call("web_search", {"query": q}, serp(res))
        if k in (3, 7):
            r.turn(
                "Still only the same pages in the snippets and none states the number. Trying another phrasing."
            )
    return r


# ---- same URL, 429 / bot wall, utm variations -----------------------------------------

BBG = "https://www.bloomberg.com/news/articles/2023-11-09/nvidia-readies-new-china-chips-to-comply-with-us-export-rules"


def bbg_block(ref):
    return (
        "HTTP 429 Too Many Requests\n\n<title>Bloomberg - Are you a robot?</title>\n"
        "We've detected unusual activity from your computer network\n"
        "To continue, please click the box below to let us know you're not a robot.\n"
        "Why did this happen? Please make sure your browser supports JavaScript and cookies and that you are not blocking them from loading.\n"
        f"Block reference ID: {ref}"
    )


def research_paywall_loop():
    r = Run("research_paywall_utm_variants_loop", "research-web", "loop", 4)
    r.turn(
        "Task: summarise the Nov 2023 reports that Nvidia is preparing China-specific chips (H20, L20, L2)."
    )
    r.call(
        "web_search",
        {"query": "Nvidia new China chips H20 export rules November 2023"},
        serp(
            [
                (
                    "Nvidia readies new China chips to comply with US export rules - Bloomberg",
                    BBG,
                    "Nov 9, 2023",
                    "Nvidia Corp. has developed new AI chips for China, the H20, L20 and L2...",
                ),
                (
                    "Nvidia to launch new AI chips for China after US curbs - Reuters",
                    "https://www.reuters.com/technology/nvidia-launch-three-new-ai-chips-china-2023-11-09/",
                    "Nov 9, 2023",
                    "...according to a report by Chinese media outlet STAR Market Daily...",
                ),
                (
                    "Nvidia's H20: what we know",
                    "https://www.tomshardware.com/news/nvidia-h20-l20-l2-china-gpus",
                    "Nov 10, 2023",
                    "The HGX H20 reportedly has 96GB HBM3 and 296 TFLOPS FP8...",
                ),
            ]
        ),
    )
    r.call(
        "fetch_url",
        {
            "url": "https://www.reuters.com/technology/nvidia-launch-three-new-ai-chips-china-2023-11-09/"
        },
        "Nvidia to launch three new AI chips for China after US curbs - report\nReuters, November 9, 2023 4:21 AM GMT+1\n\nNvidia has developed new chips for China, the HGX H20, L20 PCIe and L2 PCIe, local media reported on Thursday... expected to be announced as soon as Nov 16... Nvidia declined to comment.",
    )
    r.call(
        "save_note",
        {
            "text": "Reuters 9 Nov 2023 (citing STAR Market Daily): H20, L20 PCIe, L2 PCIe for China, announcement possibly 16 Nov. Nvidia declined comment. Want Bloomberg's original for specs/sources."
        },
        "note saved (id=n1, 178 chars)",
    )
    r.call("fetch_url", {"url": BBG}, bbg_block("8f2e6c10-8327-11ee-a1a3-6b6e4c4f7a52"), error=True)
    r.turn("Bot wall. Maybe a different referral URL variant gets through.")
    variants = [
        BBG + "?utm_source=google&utm_medium=cpc",
        BBG + "?utm_source=twitter&utm_medium=social&utm_campaign=socialflow-organic",
        BBG + "?srnd=technology-vp",
        BBG + "/",
        BBG + "?utm_source=newsletter&utm_medium=email&utm_campaign=tech",
        BBG + "?leadSource=uverify%20wall",
        BBG + "?cmpid=BBD110923_TECH",
        BBG.replace("https://www.", "https://"),
        BBG + "?utm_source=google&utm_medium=organic&utm_campaign=news",
        BBG + "?embedded-checkout=true",
        BBG + "#xj4y7vzkg",
        BBG + "?utm_content=tech&utm_source=linkedin",
    ]
    refs = [
        "a1c0",
        "b7f3",
        "c22e",
        "d904",
        "e5a1",
        "f0b8",
        "0c7d",
        "1e93",
        "2fa6",
        "3b10",
        "4d5c",
        "5e2f",
    ]
    for k, u in enumerate(variants):
        r.call(
            "fetch_url",
            {"url": u},
            bbg_block(f"{refs[k]}9e41-8327-11ee-{refs[(k + 5) % 12]}-6b6e4c4f7a52"),
            error=True,
        )
        if k in (4, 9):
            r.turn("Still the robot page. Trying another tracking parameter.")
    return r


RUNS = [
    research_litsearch_legit,
    research_recheck_source_legit,
    research_paraphrase_loop,
    research_paywall_loop,
]
