"""Data-science agent, shape "data-science". Invented runs.

Tools: run_python(code) (printed output, dataframe heads, metric lines, tracebacks),
read_csv_head(path, n), save_figure(name), write_report(section, text).

Label convention: Run(name, shape, label, loop_start). label is "loop-free" or "loop";
loop_start = 0-based index (counting tool calls only, not model turns) of the first tool
call that repeats an attempt that had already come back futile (the first repetition, not
the first attempt); None for loop-free runs. A loop means the agent is stuck, repeating
attempts that produce nothing new, for at least 3 futile repetitions. Loop-free runs are
genuine, productive work even where they look repetitive on the surface."""
# ruff: noqa

from harness import Run

SHAPE = "data-science"


# --------------------------------------------------------------------------- helpers


def py(r, code, out, error=False, dur=1.2):
    r.call("run_python", {"code": code}, out, error=error, dur=dur)


def head(r, path, n, out, dur=0.1):
    r.call("read_csv_head", {"path": path, "n": n}, out, dur=dur)


def fig(r, name, out=None, dur=0.4):
    r.call(
        "save_figure",
        {"name": name},
        out or f"Saved figures/{name}.png (1600x1000, {38 + len(name) * 3} KB)",
        dur=dur,
    )


def report(r, section, text, result, dur=0.1):
    r.call("write_report", {"section": section, "text": text}, result, dur=dur)


SITE = "~/.venv/lib/python3.11/site-packages"


def tb(cell, lines, err_line, inner):
    """IPython-style traceback: `lines` is [(lineno, src)], err_line the failing lineno."""
    body = [
        "---------------------------------------------------------------------------",
        f"{inner[0]:<42}Traceback (most recent call last)",
        f"Cell In[{cell}], line {err_line}",
    ]
    for n, src in lines:
        body.append(f"{'---->' if n == err_line else '     '} {n} {src}")
    body.extend(inner[1])
    body.append(inner[2])
    return "\n".join(body)


# --------------------------------------------------------------------------- loop-free


def ds_hparam_sweep():
    r = Run("ds_hparam_sweep", SHAPE, "loop-free", None)
    r.turn(
        "Goal: churn model for the telco dataset, report validation AUC. Start by looking at the file."
    )
    head(
        r,
        "data/telco_churn.csv",
        5,
        "customer_id,tenure_months,contract,monthly_charges,total_charges,internet_service,support_calls,payment_method,churn\n"
        "C-004817,14,month-to-month,79.85,1117.90,fiber,3,electronic_check,1\n"
        "C-004818,61,two_year,24.10,1470.10,none,0,bank_transfer,0\n"
        "C-004819,2,month-to-month,70.70,141.40,fiber,1,electronic_check,1\n"
        "C-004820,38,one_year,56.15,2133.70,dsl,0,credit_card,0\n"
        "C-004821,8,month-to-month,99.65,797.20,fiber,5,mailed_check,1",
    )
    py(
        r,
        "import pandas as pd, numpy as np\nfrom sklearn.model_selection import train_test_split\n"
        "df = pd.read_csv('data/telco_churn.csv')\nX = pd.get_dummies(df.drop(columns=['customer_id','churn']), drop_first=True)\ny = df.churn\n"
        "X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)\n"
        "X_tr, X_va, y_tr, y_va = train_test_split(X_tr, y_tr, test_size=0.25, stratify=y_tr, random_state=0)\n"
        "print(df.shape, X.shape[1], 'features'); print(y.value_counts(normalize=True).round(4).to_dict())\nprint(len(X_tr), len(X_va), len(X_te))",
        "(7043, 9) 13 features\n{0: 0.7346, 1: 0.2654}\n4225 1409 1409",
        dur=1.9,
    )
    py(
        r,
        "from sklearn.linear_model import LogisticRegression\nfrom sklearn.pipeline import make_pipeline\nfrom sklearn.preprocessing import StandardScaler\nfrom sklearn.metrics import roc_auc_score, log_loss\n"
        "lr = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(X_tr, y_tr)\np = lr.predict_proba(X_va)[:,1]\nprint(f'baseline logreg val_auc={roc_auc_score(y_va,p):.4f} val_logloss={log_loss(y_va,p):.4f}')",
        "baseline logreg val_auc=0.8418 val_logloss=0.4213",
        dur=1.4,
    )
    r.turn(
        "Baseline 0.842. Now a small HistGradientBoosting sweep over learning_rate x max_depth; one config per cell so I can watch each result."
    )
    sweep = [
        (0.1, 3, 0.8461, 0.9013, 0.4102, 112, 2.8),
        (0.1, 6, 0.8397, 0.9522, 0.4188, 64, 3.1),
        (0.1, None, 0.8352, 0.9781, 0.4301, 41, 3.5),
        (0.05, 3, 0.8489, 0.8947, 0.4067, 231, 4.9),
        (0.05, 6, 0.8472, 0.9260, 0.4083, 138, 5.2),
        (0.03, 3, 0.8493, 0.8891, 0.4061, 384, 7.6),
        (0.03, 4, 0.8507, 0.9002, 0.4049, 297, 7.1),
        (0.01, 4, 0.8481, 0.8822, 0.4098, 1000, 19.8),
    ]
    for i, (lr_, depth, va, tr, ll, it, secs) in enumerate(sweep):
        code = (
            "from sklearn.ensemble import HistGradientBoostingClassifier\nimport time\nt=time.time()\n"
            f"m = HistGradientBoostingClassifier(learning_rate={lr_}, max_depth={depth}, max_iter=1000, early_stopping=True, validation_fraction=0.15, random_state=0).fit(X_tr, y_tr)\n"
            "p = m.predict_proba(X_va)[:,1]\n"
            f"print(f'lr={lr_} depth={depth} n_iter={{m.n_iter_}} train_auc={{roc_auc_score(y_tr, m.predict_proba(X_tr)[:,1]):.4f}} val_auc={{roc_auc_score(y_va,p):.4f}} val_logloss={{log_loss(y_va,p):.4f}} fit={{time.time()-t:.1f}}s')"
        )
        extra = ""
        if it == 1000:
            extra = "\n(early stopping did not trigger; hit max_iter=1000)"
        py(
            r,
            code,
            f"lr={lr_} depth={depth} n_iter={it} train_auc={tr:.4f} val_auc={va:.4f} val_logloss={ll:.4f} fit={secs:.1f}s{extra}",
            dur=secs + 0.4,
        )
        if i == 2:
            r.turn(
                "Deeper trees overfit at lr=0.1 (train 0.98, val 0.835). Try lower rates with shallow trees."
            )
        if i == 5:
            r.turn("lr=0.03/depth=3 is best so far (0.8493). Check depth 4 and an even lower rate.")
    r.turn(
        "lr=0.03, depth=4 wins (val_auc 0.8507, logloss 0.4049); lr=0.01 doesn't help and takes 3x longer. Refit on train+val, score the held-out test set."
    )
    py(
        r,
        "best = HistGradientBoostingClassifier(learning_rate=0.03, max_depth=4, max_iter=297, early_stopping=False, random_state=0)\n"
        "best.fit(pd.concat([X_tr,X_va]), pd.concat([y_tr,y_va]))\npt = best.predict_proba(X_te)[:,1]\nprint(f'test_auc={roc_auc_score(y_te,pt):.4f} test_logloss={log_loss(y_te,pt):.4f}')\n"
        "from sklearn.metrics import classification_report\nprint(classification_report(y_te, pt>0.5, digits=3))",
        "test_auc=0.8533 test_logloss=0.4011\n              precision    recall  f1-score   support\n\n           0      0.843     0.907     0.874      1035\n           1      0.668     0.535     0.594       374\n\n    accuracy                          0.808      1409\n   macro avg      0.756     0.721     0.734      1409\nweighted avg      0.797     0.808     0.800      1409",
        dur=6.3,
    )
    py(
        r,
        "from sklearn.inspection import permutation_importance\npi = permutation_importance(best, X_te, y_te, scoring='roc_auc', n_repeats=10, random_state=0)\n"
        "print(pd.Series(pi.importances_mean, index=X.columns).sort_values(ascending=False).head(6).round(4))",
        "contract_two_year              0.0612\ntenure_months                  0.0547\ninternet_service_fiber         0.0318\nmonthly_charges                0.0204\nsupport_calls                  0.0179\npayment_method_electronic_check 0.0113\ndtype: float64",
        dur=22.4,
    )
    fig(r, "hgb_sweep_val_auc")
    fig(r, "permutation_importance_test")
    report(
        r,
        "Model selection",
        "Baseline logistic regression: val AUC 0.842. HistGradientBoosting sweep over 8 configs (lr 0.01-0.1, depth 3-None): best lr=0.03, depth=4, 297 iters, val AUC 0.851 / logloss 0.405. Deeper trees overfit. Held-out test AUC 0.853.",
        "Section 'Model selection' written to reports/churn.md (1 of 2 sections, 262 chars).",
    )
    report(
        r,
        "Drivers",
        "Permutation importance (test, AUC drop): contract type two-year 0.061, tenure 0.055, fiber internet 0.032, monthly charges 0.020, support calls 0.018.",
        "Section 'Drivers' written to reports/churn.md (2 of 2 sections, 418 chars).",
    )
    return r


def ds_iterative_cleaning():
    r = Run("ds_iterative_cleaning", SHAPE, "loop-free", None)
    p = "data/plant_sensors_2024.csv"
    r.turn(
        "Need a clean 15-minute temperature/humidity series per production line from the raw sensor export."
    )
    head(
        r,
        p,
        6,
        "timestamp,line,sensor_id,temp_c,humidity_pct,status\n"
        "2024-01-01 00:00:00,L1,T-0113,21.4,38.2,OK\n"
        "2024-01-01 00:05:00,L1,T-0113,21.5,38.0,OK\n"
        '2024-01-01 00:00:00,L2,T-0207,"20,9",41.7,OK\n'
        "2024-01-01 00:05:00,L2,T-0207,ERR,41.9,SENSOR_FAULT\n"
        "2024-01-01 00:10:00,L1,T-0113,21.5,37.9,OK",
    )
    py(
        r,
        "import pandas as pd\ndf = pd.read_csv('data/plant_sensors_2024.csv')\nprint(df.shape)",
        tb(
            3,
            [(1, "import pandas as pd"), (2, "df = pd.read_csv('data/plant_sensors_2024.csv')")],
            2,
            (
                "UnicodeDecodeError",
                [
                    "",
                    f"File {SITE}/pandas/io/parsers/readers.py:1026, in read_csv(filepath_or_buffer, sep, delimiter, header, names, ...)",
                    f"File {SITE}/pandas/io/parsers/c_parser_wrapper.py:93, in CParserWrapper.__init__(self, src, **kwds)",
                    "File parsers.pyx:574, in pandas._libs.parsers.TextReader.__cinit__()",
                    "File parsers.pyx:2053, in pandas._libs.parsers.raise_parser_error()",
                    "",
                ],
                "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xb0 in position 118742: invalid start byte",
            ),
        ),
        error=True,
        dur=0.9,
    )
    r.turn(
        "0xb0 is a latin-1 degree sign, probably in a comment/status field further down. Read as latin-1."
    )
    py(
        r,
        "df = pd.read_csv('data/plant_sensors_2024.csv', encoding='latin-1')\nprint(df.shape); print(df.dtypes)\nprint(df[df.status.str.contains('°', na=False)].head(2))",
        "(421344, 6)\ntimestamp        object\nline             object\nsensor_id        object\ntemp_c           object\nhumidity_pct    float64\nstatus           object\ndtype: object\n                  timestamp line sensor_id temp_c  humidity_pct            status\n118733  2024-02-11 06:35:00   L3    T-0311   68.2          12.1  OVERTEMP >65°C\n118902  2024-02-11 06:40:00   L3    T-0311   69.0          11.8  OVERTEMP >65°C",
        dur=2.7,
    )
    py(
        r,
        "df['temp_c'] = df['temp_c'].astype(float)",
        tb(
            5,
            [(1, "df['temp_c'] = df['temp_c'].astype(float)")],
            1,
            (
                "ValueError",
                [
                    "",
                    f"File {SITE}/pandas/core/generic.py:6643, in NDFrame.astype(self, dtype, copy, errors)",
                    f"File {SITE}/pandas/core/dtypes/astype.py:133, in _astype_nansafe(arr, dtype, copy, skipna)",
                    "",
                ],
                "ValueError: could not convert string to float: '20,9'",
            ),
        ),
        error=True,
        dur=0.6,
    )
    r.turn("Line L2's logger writes decimal commas (quoted). Replace ',' with '.' first.")
    py(
        r,
        "df['temp_c'] = df['temp_c'].str.replace(',', '.', regex=False).astype(float)",
        tb(
            6,
            [(1, "df['temp_c'] = df['temp_c'].str.replace(',', '.', regex=False).astype(float)")],
            1,
            (
                "ValueError",
                [
                    "",
                    f"File {SITE}/pandas/core/generic.py:6643, in NDFrame.astype(self, dtype, copy, errors)",
                    f"File {SITE}/pandas/core/dtypes/astype.py:133, in _astype_nansafe(arr, dtype, copy, skipna)",
                    "",
                ],
                "ValueError: could not convert string to float: 'ERR'",
            ),
        ),
        error=True,
        dur=0.6,
    )
    r.turn(
        "Decimal commas fixed; now the sentinel 'ERR' from faulted sensors. Coerce to NaN and count."
    )
    py(
        r,
        "df['temp_c'] = pd.to_numeric(df['temp_c'].str.replace(',', '.', regex=False), errors='coerce')\nprint(df.temp_c.isna().sum(), (df.status=='SENSOR_FAULT').sum())\n"
        "df['timestamp'] = pd.to_datetime(df['timestamp'], format='%Y-%m-%d %H:%M:%S')",
        "1312 1312\n"
        + tb(
            7,
            [
                (
                    1,
                    "df['temp_c'] = pd.to_numeric(df['temp_c'].str.replace(',', '.', regex=False), errors='coerce')",
                ),
                (2, "print(df.temp_c.isna().sum(), (df.status=='SENSOR_FAULT').sum())"),
                (
                    3,
                    "df['timestamp'] = pd.to_datetime(df['timestamp'], format='%Y-%m-%d %H:%M:%S')",
                ),
            ],
            3,
            (
                "ValueError",
                [
                    "",
                    f"File {SITE}/pandas/core/tools/datetimes.py:1067, in to_datetime(arg, errors, dayfirst, yearfirst, utc, format, exact, unit, ...)",
                    "File strptime.pyx:534, in pandas._libs.tslibs.strptime.array_strptime()",
                    "",
                ],
                "ValueError: time data \"31/03/2024 02:15\" doesn't match format \"%Y-%m-%d %H:%M:%S\", at position 40211. You might want to try:\n    - passing `format` if your strings have a consistent format;\n    - passing `format='ISO8601'` if your strings are all ISO8601 but not necessarily in exactly the same format;\n    - passing `format='mixed'`, and the format will be inferred for each element individually. You might want to use `dayfirst` alongside this.",
            ),
        ),
        error=True,
        dur=1.8,
    )
    r.turn(
        "NaNs now exactly match SENSOR_FAULT rows, good. Some rows from a firmware change use dd/mm/yyyy. Parse mixed with dayfirst, then localise to plant time."
    )
    py(
        r,
        "df['timestamp'] = pd.to_datetime(df['timestamp'], format='mixed', dayfirst=True)\nprint(df.timestamp.min(), df.timestamp.max())\n"
        "df = df.set_index('timestamp').sort_index()\ndf.index = df.index.tz_localize('Europe/Berlin')",
        "2024-01-01 00:00:00 2024-12-31 23:55:00\n"
        + tb(
            8,
            [
                (3, "df = df.set_index('timestamp').sort_index()"),
                (4, "df.index = df.index.tz_localize('Europe/Berlin')"),
            ],
            4,
            (
                "NonExistentTimeError",
                [
                    "",
                    f"File {SITE}/pandas/core/indexes/datetimes.py:293, in DatetimeIndex.tz_localize(self, tz, ambiguous, nonexistent)",
                    "File tzconversion.pyx:180, in pandas._libs.tslibs.tzconversion.tz_localize_to_utc()",
                    "",
                ],
                "NonExistentTimeError: 2024-03-31 02:00:00",
            ),
        ),
        error=True,
        dur=3.4,
    )
    r.turn(
        "DST gap on 31 March. Shift nonexistent times forward; mark the October duplicate hour as NaT and drop it."
    )
    py(
        r,
        "df.index = df.index.tz_localize('Europe/Berlin', nonexistent='shift_forward', ambiguous='NaT')\ndf = df[df.index.notna()]\n"
        "q = df.groupby('line').resample('15min').mean()\nprint(q.head())",
        tb(
            9,
            [
                (
                    1,
                    "df.index = df.index.tz_localize('Europe/Berlin', nonexistent='shift_forward', ambiguous='NaT')",
                ),
                (2, "df = df[df.index.notna()]"),
                (3, "q = df.groupby('line').resample('15min').mean()"),
            ],
            3,
            (
                "TypeError",
                [
                    "",
                    f"File {SITE}/pandas/core/resample.py:1384, in Resampler.mean(self, numeric_only, *args, **kwargs)",
                    f"File {SITE}/pandas/core/groupby/groupby.py:1942, in GroupBy._agg_py_fallback(self, how, values, ndim, alt)",
                    "",
                ],
                "TypeError: agg function failed [how->mean,dtype->object]",
            ),
        ),
        error=True,
        dur=2.2,
    )
    r.turn(
        "Localisation worked; the resample choked on sensor_id/status strings. Select the numeric columns."
    )
    py(
        r,
        "q = df.groupby('line')[['temp_c','humidity_pct']].resample('15min').mean()\nprint(q.shape); print(q.head()); print(q.isna().groupby(level=0).sum())",
        "(105216, 2)\n                                 temp_c  humidity_pct\nline timestamp                                          \nL1   2024-01-01 00:00:00+01:00   21.467        38.033\n     2024-01-01 00:15:00+01:00   21.600        37.767\n     2024-01-01 00:30:00+01:00   21.633        37.700\n     2024-01-01 00:45:00+01:00   21.700        37.533\n     2024-01-01 01:00:00+01:00   21.733        37.467\n      temp_c  humidity_pct\nline                      \nL1       118            31\nL2       309            87\nL3       264            40",
        dur=4.1,
    )
    py(
        r,
        "before = len(df); df = df[~df.index.duplicated(keep='first') | (df.line.values != df.line.shift().values)]\nprint('dropped', before-len(df), 'duplicate rows')\n"
        "q = df.groupby('line')[['temp_c','humidity_pct']].resample('15min').mean()\nq = q.groupby(level=0).transform(lambda s: s.interpolate(limit=4, limit_area='inside'))\nprint('remaining NaN gaps >1h:', int(q.temp_c.isna().sum()))\nq.to_parquet('data/clean/sensors_15min.parquet'); print('saved', q.shape)",
        "dropped 1204 duplicate rows\nremaining NaN gaps >1h: 25\nsaved (105216, 2)",
        dur=5.7,
    )
    fig(r, "temp_coverage_by_line")
    report(
        r,
        "Data cleaning",
        "Raw export: 421,344 rows, latin-1. Fixes: decimal commas on L2 (temp_c), 1,312 'ERR' readings -> NaN (all SENSOR_FAULT), mixed date formats after firmware change (dd/mm), DST gap 31 Mar shifted forward / ambiguous Oct hour dropped, 1,204 duplicate rows removed. Resampled to 15 min per line and interpolated gaps up to 1 h; 25 longer gaps left as NaN.",
        "Section 'Data cleaning' written to reports/sensors.md (1 section, 391 chars).",
    )
    return r


def ds_exploratory_analysis():
    r = Run("ds_exploratory_analysis", SHAPE, "loop-free", None)
    r.turn(
        "Exploratory analysis of 2024 online orders: seasonality, channels, cohorts, basket, discounts."
    )
    head(
        r,
        "data/orders_2024.csv",
        5,
        "order_id,order_ts,customer_id,region,channel,category,items,gross_eur,discount_eur,margin_eur\n"
        "O-1000231,2024-01-01T08:14:22,C-88213,DE-South,web,garden,3,84.70,0.00,21.30\n"
        "O-1000232,2024-01-01T08:19:05,C-10442,DE-North,app,kitchen,1,19.99,2.00,4.10\n"
        "O-1000233,2024-01-01T08:27:51,C-77016,AT,web,electronics,2,249.00,25.00,31.75\n"
        "O-1000234,2024-01-01T08:41:10,C-88213,DE-South,app,garden,1,12.49,0.00,3.80",
    )
    py(
        r,
        "import pandas as pd\ndf = pd.read_csv('data/orders_2024.csv', parse_dates=['order_ts'])\nprint(df.shape); print(df.describe().round(2).T[['mean','50%','max']])",
        "(184522, 10)\n                mean    50%      max\nitems           2.31   2.00    41.00\ngross_eur      71.84  44.90  3499.00\ndiscount_eur    4.62   0.00   700.00\nmargin_eur     15.27  10.35   612.40",
        dur=2.3,
    )
    py(
        r,
        "m = df.set_index('order_ts').resample('ME').agg(orders=('order_id','count'), revenue=('gross_eur','sum'))\nprint((m.assign(revenue=(m.revenue/1e6).round(2))))",
        "            orders  revenue\norder_ts                   \n2024-01-31   12891     0.88\n2024-02-29   12004     0.83\n2024-03-31   14372     1.01\n2024-04-30   15110     1.07\n2024-05-31   16437     1.19\n2024-06-30   15022     1.08\n2024-07-31   14203     1.00\n2024-08-31   13876     0.97\n2024-09-30   14911     1.05\n2024-10-31   15560     1.12\n2024-11-30   19874     1.56\n2024-12-31   20262     1.50",
        dur=0.9,
    )
    fig(r, "monthly_orders_revenue")
    py(
        r,
        "print(df.pivot_table(index='region', columns='channel', values='gross_eur', aggfunc='sum').div(1e6).round(2))",
        "channel      app   web\nregion               \nAT          0.71  0.93\nCH          0.38  0.64\nDE-North    1.62  1.88\nDE-South    2.04  2.11\nDE-West     1.31  1.65",
        dur=0.7,
    )
    r.turn(
        "Nov/Dec are +30-40% over the yearly average (Black Friday, Christmas). App share is highest in DE-South. Now cohort retention."
    )
    py(
        r,
        "first = df.groupby('customer_id').order_ts.min().dt.to_period('M').rename('cohort')\nd = df.join(first, on='customer_id')\n"
        "d['age'] = (d.order_ts.dt.to_period('M') - d.cohort).apply(lambda x: x.n)\nret = d.groupby(['cohort','age']).customer_id.nunique().unstack()\nprint(ret.div(ret[0], axis=0).iloc[:6, :7].round(3))",
        "age          0      1      2      3      4      5      6\ncohort                                                 \n2024-01  1.000  0.284  0.221  0.197  0.183  0.176  0.169\n2024-02  1.000  0.271  0.214  0.192  0.178  0.171  0.163\n2024-03  1.000  0.292  0.229  0.205  0.190  0.181  0.172\n2024-04  1.000  0.263  0.207  0.186  0.174  0.165  0.158\n2024-05  1.000  0.279  0.218  0.196  0.181  0.170  0.166\n2024-06  1.000  0.255  0.201  0.183  0.169  0.161    NaN",
        dur=6.8,
    )
    fig(r, "cohort_retention_heatmap")
    py(
        r,
        "print(df['items'].describe(percentiles=[.5,.9,.99]).round(2)); print(df.groupby('channel')['items'].mean().round(2))",
        "count    184522.00\nmean          2.31\nstd           1.94\nmin           1.00\n50%           2.00\n90%           4.00\n99%           9.00\nmax          41.00\nName: items, dtype: float64\nchannel\napp    2.08\nweb    2.52\nName: items, dtype: float64",
        dur=0.5,
    )
    fig(r, "basket_size_hist")
    py(
        r,
        "c = df.groupby('category').agg(rev=('gross_eur','sum'), margin=('margin_eur','sum'))\nc['margin_pct'] = (c.margin/c.rev*100).round(1)\nprint(c.sort_values('margin', ascending=False).assign(rev=lambda x: (x.rev/1e6).round(2), margin=lambda x: (x.margin/1e6).round(2)))",
        "             rev  margin  margin_pct\ncategory                            \nkitchen     3.18    0.81        25.5\ngarden      2.96    0.74        25.0\nhome        2.41    0.58        24.1\nelectronics 3.87    0.42        10.9\ntoys        0.85    0.27        31.8",
        dur=0.6,
    )
    py(
        r,
        "h = df.assign(dow=df.order_ts.dt.day_name().str[:3], hour=df.order_ts.dt.hour).pivot_table(index='dow', columns='hour', values='order_id', aggfunc='count')\nprint(h.loc[['Mon','Wed','Sat','Sun'], [8,12,18,20,21,22]])",
        "hour    8     12    18    20    21    22\ndow                                     \nMon   1012  1544  1873  2291  2140  1402\nWed    987  1498  1810  2207  2063  1351\nSat    744  1901  1622  1788  1690  1177\nSun    802  2034  1955  2610  2488  1531",
        dur=0.8,
    )
    fig(r, "weekday_hour_orders")
    py(
        r,
        "import numpy as np\nd = df[df.gross_eur>0].assign(disc_pct=lambda x: x.discount_eur/x.gross_eur, mpct=lambda x: x.margin_eur/x.gross_eur)\n"
        "print(d[['disc_pct','mpct']].corr().round(3)); print(d.groupby(pd.cut(d.disc_pct,[-.01,0,.1,.2,.3,1])).mpct.mean().round(3))",
        "          disc_pct   mpct\ndisc_pct     1.000 -0.612\nmpct        -0.612  1.000\ndisc_pct\n(-0.01, 0.0]    0.247\n(0.0, 0.1]      0.196\n(0.1, 0.2]      0.131\n(0.2, 0.3]      0.072\n(0.3, 1.0]     -0.041",
        dur=1.1,
    )
    fig(r, "discount_vs_margin")
    report(
        r,
        "Overview",
        "184,522 orders in 2024, EUR 13.3M gross. Web 56% / app 44% of revenue; DE-South largest region.",
        "Section 'Overview' written to reports/orders_eda.md (1 of 3 sections, 104 chars).",
    )
    report(
        r,
        "Seasonality",
        "Nov/Dec +30-40% vs average month; evenings 20-21h peak, Sunday evening the busiest slot; Saturday shifts to midday.",
        "Section 'Seasonality' written to reports/orders_eda.md (2 of 3 sections, 117 chars).",
    )
    report(
        r,
        "Customers and margin",
        "Month-1 retention 26-29%, flattening to ~16-17% by month 6. Baskets larger on web (2.52 vs 2.08 items). Discounts above 30% turn margin negative (-4.1%); electronics has the thinnest margin (10.9%).",
        "Section 'Customers and margin' written to reports/orders_eda.md (3 of 3 sections, 209 chars).",
    )
    return r


def ds_training_poll():
    r = Run("ds_training_poll", SHAPE, "loop-free", None)
    r.turn("Train the ResNet-18 defect classifier for 30 epochs in the background and monitor it.")
    py(
        r,
        "import torch; print(torch.__version__, torch.cuda.is_available(), torch.cuda.get_device_name(0)); print(round(torch.cuda.mem_get_info()[0]/2**30,1), 'GiB free')",
        "2.3.1+cu121 True NVIDIA A10G\n21.8 GiB free",
        dur=3.2,
    )
    py(
        r,
        "import subprocess\nlog = open('logs/resnet18_0612.log','w')\nproc = subprocess.Popen(['python','train.py','--arch','resnet18','--epochs','30','--bs','128','--lr','0.1','--out','ckpt/resnet18_0612'], stdout=log, stderr=subprocess.STDOUT)\nprint('pid', proc.pid)",
        "pid 48213",
        dur=0.4,
    )
    poll = "import time, subprocess\ntime.sleep(180)\nprint('alive:', proc.poll() is None)\nprint(subprocess.run(['tail','-n','2','logs/resnet18_0612.log'], capture_output=True, text=True).stdout)"
    py(
        r,
        "import time, subprocess\ntime.sleep(45)\nprint('alive:', proc.poll() is None)\nprint(subprocess.run(['tail','-n','3','logs/resnet18_0612.log'], capture_output=True, text=True).stdout)",
        "alive: True\n[2024-06-12 10:02:41] train set 50,000 imgs, val 10,000 imgs, 10 classes\n[2024-06-12 10:02:58] epoch 1/30 step 120/391 loss=2.0134 lr=0.0400 (warmup)\n[2024-06-12 10:03:09] epoch 1/30 step 200/391 loss=1.8412 lr=0.0667 (warmup)",
        dur=45.6,
    )
    r.turn("Running, ~70 s/epoch. Polling every 3 minutes.")
    # epoch, loss, val_loss, val_acc, lr, timestamp
    rows = [
        (3, 1.2087, 1.1342, 0.6021, 0.0999, "10:06:12"),
        (5, 0.9114, 0.8876, 0.6934, 0.0976, "10:09:15"),
        (8, 0.6630, 0.7214, 0.7551, 0.0905, "10:12:19"),
        (10, 0.5712, 0.6538, 0.7802, 0.0835, "10:15:22"),
        (13, 0.4820, 0.5967, 0.8044, 0.0708, "10:18:26"),
        (15, 0.4306, 0.5471, 0.8213, 0.0612, "10:21:29"),
        (18, 0.3547, 0.4890, 0.8431, 0.0457, "10:24:33"),
        (20, 0.3015, 0.4410, 0.8597, 0.0357, "10:27:36"),
        (23, 0.2233, 0.3724, 0.8841, 0.0218, "10:30:40"),
        (25, 0.1781, 0.3129, 0.9036, 0.0138, "10:33:43"),
        (28, 0.1204, 0.2583, 0.9248, 0.0042, "10:36:47"),
    ]
    for i, (ep, loss, vl, va, lr, t) in enumerate(rows):
        out = (
            f"alive: True\n[2024-06-12 {t}] epoch {ep}/30 loss={loss:.4f} val_loss={vl:.4f} val_acc={va:.4f} lr={lr:.4f} epoch_time={69 + (ep * 7) % 5}.{(ep * 3) % 10}s\n"
            f"[2024-06-12 {t}] epoch {ep + 1}/30 step {40 + (ep * 37) % 300}/391 loss={loss * 0.97:.4f} lr={lr * 0.99:.4f}"
        )
        if ep in (15, 25):
            out += f"\n[2024-06-12 {t}] saved checkpoint ckpt/resnet18_0612/epoch{ep}.pt (val_acc improved)"
        py(r, poll, out, dur=180.3 + (i % 3) * 0.2)
        if i == 5:
            r.turn(
                "Halfway: val_acc 0.821 and still climbing, val_loss tracking train loss. Cosine schedule decaying as expected."
            )
    py(
        r,
        "time.sleep(150)\nprint('exit code:', proc.poll())\nprint(subprocess.run(['tail','-n','4','logs/resnet18_0612.log'], capture_output=True, text=True).stdout)",
        "exit code: 0\n[2024-06-12 10:38:59] epoch 30/30 loss=0.0967 val_loss=0.2491 val_acc=0.9301 lr=0.0000 epoch_time=70.2s\n[2024-06-12 10:39:00] best val_acc=0.9312 at epoch 29\n[2024-06-12 10:39:01] saved ckpt/resnet18_0612/best.pt\n[2024-06-12 10:39:01] done in 36m20s",
        dur=150.4,
    )
    py(
        r,
        "from eval import evaluate\nres = evaluate('ckpt/resnet18_0612/best.pt', split='test')\nprint(f\"test_acc={res['acc']:.4f} macro_f1={res['macro_f1']:.4f}\")\nprint(res['per_class'].sort_values('f1').head(3))",
        "test_acc=0.9287 macro_f1=0.9279\n             precision  recall     f1  support\nclass                                        \nhairline_crack   0.861   0.842  0.851     1000\nporosity         0.889   0.904  0.896     1000\nscratch          0.912   0.897  0.904     1000",
        dur=14.8,
    )
    fig(r, "resnet18_0612_training_curves")
    report(
        r,
        "Training",
        "ResNet-18, 30 epochs, bs 128, SGD lr 0.1 cosine with warmup, 36 min on one A10G. Best val_acc 0.931 (epoch 29), test_acc 0.929, macro F1 0.928. Weakest class: hairline_crack (F1 0.85).",
        "Section 'Training' written to reports/defects.md (1 section, 214 chars).",
    )
    return r


# --------------------------------------------------------------------------- loops


def _keyerror_tb(cell, lines, err_line, via_merge):
    if via_merge == "groupby":
        inner = [
            "",
            f"File {SITE}/pandas/core/frame.py:9183, in DataFrame.groupby(self, by, axis, level, as_index, sort, group_keys, observed, dropna)",
            f"File {SITE}/pandas/core/groupby/groupby.py:1329, in GroupBy.__init__(self, obj, keys, axis, level, grouper, exclusions, selection, as_index, sort, group_keys, observed, dropna)",
            f"File {SITE}/pandas/core/groupby/grouper.py:1043, in get_grouper(obj, key, axis, level, sort, observed, validate, dropna)",
            "   1041         in_axis, level, gpr = False, gpr, None",
            "   1042     else:",
            "-> 1043         raise KeyError(gpr)",
            "",
        ]
    elif via_merge:
        inner = [
            "",
            f"File {SITE}/pandas/core/frame.py:10832, in DataFrame.merge(self, right, how, on, left_on, right_on, left_index, right_index, sort, suffixes, copy, indicator, validate)",
            f"File {SITE}/pandas/core/reshape/merge.py:170, in merge(left, right, how, on, left_on, right_on, left_index, right_index, sort, suffixes, copy, indicator, validate)",
            f"File {SITE}/pandas/core/reshape/merge.py:794, in _MergeOperation.__init__(self, left, right, how, on, left_on, right_on, left_index, right_index, sort, suffixes, indicator, validate)",
            f"File {SITE}/pandas/core/reshape/merge.py:1297, in _MergeOperation._get_merge_keys(self)",
            f"   1295 if rk is not None:",
            f"   1296     right_keys.append(right._get_label_or_level_values(rk))",
            f"File {SITE}/pandas/core/generic.py:1911, in NDFrame._get_label_or_level_values(self, key, axis)",
            "   1909     values = self.axes[axis].get_level_values(key)._values",
            "   1910 else:",
            "-> 1911     raise KeyError(key)",
            "",
        ]
    else:
        inner = [
            "",
            f"File {SITE}/pandas/core/frame.py:4102, in DataFrame.__getitem__(self, key)",
            "   4100 if self.columns.nlevels > 1:",
            "   4101     return self._getitem_multilevel(key)",
            "-> 4102 indexer = self.columns.get_loc(key)",
            f"File {SITE}/pandas/core/indexes/base.py:3812, in Index.get_loc(self, key)",
            "   3807     if isinstance(casted_key, slice) or (",
            "   3810     ):",
            "   3811         raise InvalidIndexError(key)",
            "-> 3812     raise KeyError(key) from err",
            "",
        ]
    return tb(cell, lines, err_line, ("KeyError", inner, "KeyError: 'customer_id'"))


def ds_keyerror_loop():
    # calls: 0,1 heads, 2 load, 3 merge KeyError; 4.. same KeyError with tiny edits -> loop_start=4
    r = Run("ds_keyerror_loop", SHAPE, "loop", 4)
    r.turn("Join transactions to CRM accounts to get revenue per segment.")
    head(
        r,
        "data/crm_accounts.csv",
        5,
        "Customer_ID,account_name,region,segment,signup_date\n10023,Hofmann GmbH,DACH,enterprise,2019-04-11\n10024,Lindqvist AB,Nordics,mid-market,2020-09-02\n10031,Bertrand SARL,France,smb,2021-01-19\n10047,Kowalski Sp. z o.o.,CEE,smb,2022-06-30",
    )
    head(
        r,
        "data/transactions_2024.csv",
        5,
        "txn_id,customer_id,booked_at,amount_eur,product\nT-5530012,10023,2024-01-03,12400.00,platform\nT-5530013,10031,2024-01-03,890.00,addon-sso\nT-5530014,10024,2024-01-04,4300.00,platform\nT-5530015,10023,2024-01-05,2100.00,support-gold",
    )
    py(
        r,
        "import pandas as pd\naccts = pd.read_csv('data/crm_accounts.csv')\ntx = pd.read_csv('data/transactions_2024.csv', parse_dates=['booked_at'])\nprint(accts.shape, tx.shape)",
        "(3184, 5) (48211, 5)",
        dur=0.9,
    )
    attempts = [
        (
            [
                (1, "import pandas as pd"),
                (2, ""),
                (3, 'merged = tx.merge(accts, on="customer_id", how="left")'),
                (4, "print(merged.groupby('segment').amount_eur.sum())"),
            ],
            3,
            True,
            "KeyError on customer_id. Maybe the dtypes differ between the two frames; cast to str on both sides.",
        ),
        (
            [
                (1, 'tx["customer_id"] = tx["customer_id"].astype(str)'),
                (2, 'accts["customer_id"] = accts["customer_id"].astype(str)'),
                (3, 'merged = tx.merge(accts, on="customer_id", how="left")'),
            ],
            2,
            False,
            "Still KeyError. Possibly stray whitespace in the values; strip them before merging.",
        ),
        (
            [
                (1, 'accts["customer_id"] = accts["customer_id"].str.strip()'),
                (2, 'merged = tx.merge(accts, on="customer_id", how="left")'),
            ],
            1,
            False,
            "Try explicit left_on/right_on instead of on=.",
        ),
        (
            [
                (
                    1,
                    'merged = pd.merge(tx, accts, left_on="customer_id", right_on="customer_id", how="left", validate="m:1")',
                )
            ],
            1,
            True,
            "Same. Maybe it needs numeric conversion with .loc.",
        ),
        (
            [
                (
                    1,
                    'accts.loc[:, "customer_id"] = pd.to_numeric(accts.loc[:, "customer_id"], errors="coerce")',
                ),
                (2, 'merged = tx.merge(accts, on="customer_id", how="left")'),
            ],
            1,
            False,
            "Let me reload with an explicit dtype for customer_id and merge again.",
        ),
        (
            [
                (1, 'accts = pd.read_csv("data/crm_accounts.csv", dtype={"customer_id": "int64"})'),
                (2, 'merged = tx.merge(accts, on="customer_id", how="left")'),
            ],
            2,
            True,
            "Dedupe the accounts by customer_id first; maybe duplicates are the problem.",
        ),
        (
            [
                (1, 'accts = accts.groupby("customer_id", as_index=False).first()'),
                (2, 'merged = tx.merge(accts, on="customer_id", how="left")'),
            ],
            1,
            "groupby",
            "Try the merge with indicator=True to see what's happening.",
        ),
        (
            [
                (1, 'merged = tx.merge(accts, on="customer_id", how="outer", indicator=True)'),
                (2, "print(merged._merge.value_counts())"),
            ],
            1,
            True,
            "",
        ),
    ]
    for i, (lines, err_line, via_merge, thought) in enumerate(attempts):
        code = "\n".join(s for _, s in lines if s)
        py(
            r,
            code,
            _keyerror_tb(11 + i, lines, err_line, via_merge),
            error=True,
            dur=0.3 + (i % 4) * 0.1,
        )
        if thought:
            r.turn(thought)
    return r


def ds_seed_nonconvergence_loop():
    # calls: 0 head, 1 prep, 2 fit seed 42 (warning); 3.. refits with another seed -> loop_start=3
    r = Run("ds_seed_nonconvergence_loop", SHAPE, "loop", 3)
    r.turn(
        "Fit a logistic regression for loan default and get a converged model with calibrated probabilities."
    )
    head(
        r,
        "data/loan_applications.csv",
        5,
        "app_id,annual_income,loan_amount,term_months,credit_score,employment_years,home_ownership,purpose,defaulted\n"
        "A-77120,58400,12000,36,702,4,rent,debt_consolidation,0\n"
        "A-77121,132000,35000,60,745,11,mortgage,home_improvement,0\n"
        "A-77122,31200,8000,36,611,1,rent,credit_card,1\n"
        "A-77123,76500,20000,60,668,7,own,small_business,0",
    )
    py(
        r,
        "import pandas as pd, numpy as np\nfrom sklearn.model_selection import train_test_split\nfrom sklearn.linear_model import LogisticRegression\nfrom sklearn.metrics import accuracy_score, roc_auc_score\n"
        "df = pd.read_csv('data/loan_applications.csv')\nX = pd.get_dummies(df.drop(columns=['app_id','defaulted']), drop_first=True).astype(float)\ny = df.defaulted\nprint(X.shape, y.mean().round(4)); print(X[['annual_income','loan_amount','credit_score']].describe().loc[['mean','std']].round(1))",
        "(39786, 14) 0.1417\n      annual_income  loan_amount  credit_score\nmean      69218.4      15392.7         689.3\nstd       41873.9       9811.2          52.6",
        dur=1.6,
    )
    warn = (
        f"{SITE}/sklearn/linear_model/_logistic.py:469: ConvergenceWarning: lbfgs failed to converge (status=1):\n"
        "STOP: TOTAL NO. OF ITERATIONS REACHED LIMIT.\n\n"
        "Increase the number of iterations (max_iter) or scale the data as shown in:\n"
        "    https://scikit-learn.org/stable/modules/preprocessing.html\n"
        "Please also refer to the documentation for alternative solver options:\n"
        "    https://scikit-learn.org/stable/modules/linear_model.html#logistic-regression\n"
        "  n_iter_i = _check_optimize_result(\n"
    )
    seeds = [
        (42, 0.8583, 0.6914, -0.0000212),
        (0, 0.8579, 0.6902, -0.0000209),
        (7, 0.8586, 0.6921, -0.0000214),
        (123, 0.8581, 0.6897, -0.0000211),
        (2024, 0.8584, 0.6909, -0.0000213),
        (1, 0.8578, 0.6918, -0.0000210),
        (99, 0.8585, 0.6905, -0.0000212),
        (31337, 0.8580, 0.6912, -0.0000211),
    ]
    thoughts = {
        0: "ConvergenceWarning and AUC only 0.69. It could be an unlucky split/initialisation; try another seed.",
        2: "Still not converging. Different seed again.",
        4: "Metrics barely move. Maybe one more seed gets a better starting point.",
        6: "Trying a couple more seeds.",
    }
    for i, (seed, acc, auc, coef) in enumerate(seeds):
        code = (
            f"SEED = {seed}\nX_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, stratify=y, random_state=SEED)\n"
            "clf = LogisticRegression(random_state=SEED).fit(X_tr, y_tr)\np = clf.predict_proba(X_te)[:,1]\n"
            "print(f'seed={SEED} n_iter={clf.n_iter_[0]} acc={accuracy_score(y_te, p>0.5):.4f} auc={roc_auc_score(y_te,p):.4f} coef_income={clf.coef_[0][0]:.7f}')"
        )
        out = warn + f"seed={seed} n_iter=100 acc={acc:.4f} auc={auc:.4f} coef_income={coef:.7f}"
        py(r, code, out, dur=2.1 + (seed % 5) * 0.1)
        if i in thoughts:
            r.turn(thoughts[i])
    return r


def ds_csv_reread_loop():
    # calls: 0 head, 1 read_csv ParserError; 2 re-read the head (start of repeated cycle) -> loop_start=2
    r = Run("ds_csv_reread_loop", SHAPE, "loop", 2)
    p = "data/pos_export_eu.csv"
    h5 = (
        "date;store_id;sku;units;net_revenue_eur\n"
        "2024-09-02;B014;4006381333931;2;7\n"
        "2024-09-02;B014;4008400401621;1;3,49\n"
        "2024-09-02;B014;4000417025005;3;5,97\n"
        "2024-09-02;B022;4006381333931;1;3,5"
    )
    h10 = h5 + (
        "\n2024-09-02;B022;4311501434517;6;11,94\n2024-09-02;B022;4008400401621;2;6,98\n"
        "2024-09-03;B014;4000417025005;1;1,99\n2024-09-03;B031;4006381333931;4;14\n2024-09-03;B031;4311501434517;2;3,98"
    )
    r.turn("Load the point-of-sale export and compute weekly revenue per store.")

    def perr(cell, line_src, engine_c=True):
        if engine_c:
            inner = [
                "",
                f"File {SITE}/pandas/io/parsers/readers.py:1026, in read_csv(filepath_or_buffer, sep, delimiter, header, names, index_col, usecols, dtype, ...)",
                f"File {SITE}/pandas/io/parsers/readers.py:626, in _read(filepath_or_buffer, kwds)",
                f"File {SITE}/pandas/io/parsers/readers.py:1923, in TextFileReader.read(self, nrows)",
                f"File {SITE}/pandas/io/parsers/c_parser_wrapper.py:234, in CParserWrapper.read(self, nrows)",
                "File parsers.pyx:838, in pandas._libs.parsers.TextReader.read_low_memory()",
                "File parsers.pyx:905, in pandas._libs.parsers.TextReader._read_rows()",
                "File parsers.pyx:2061, in pandas._libs.parsers.raise_parser_error()",
                "",
            ]
            last = (
                "ParserError: Error tokenizing data. C error: Expected 1 fields in line 3, saw 2\n"
            )
        else:
            inner = [
                "",
                f"File {SITE}/pandas/io/parsers/python_parser.py:1088, in PythonParser._rows_to_cols(self, content)",
                f"File {SITE}/pandas/io/parsers/python_parser.py:1162, in PythonParser._alert_malformed(self, msg, row_num)",
                "",
            ]
            last = "ParserError: Expected 1 fields in line 3, saw 2"
        return tb(
            cell, [(1, "import pandas as pd"), (2, line_src)], 2, ("ParserError", inner, last)
        )

    head(r, p, 5, h5)
    attempts = [
        (
            "df = pd.read_csv('data/pos_export_eu.csv')",
            True,
            "Tokenizing error on line 3. Let me look at the file again.",
        ),
        (
            "df = pd.read_csv('data/pos_export_eu.csv', encoding='utf-8-sig')",
            True,
            "Maybe a BOM is confusing the parser. Checking the head again.",
        ),
        (
            "df = pd.read_csv('data/pos_export_eu.csv', header=0, skipinitialspace=True)",
            True,
            "Same error. Looking at more lines.",
        ),
        (
            "df = pd.read_csv('data/pos_export_eu.csv', engine='python')",
            False,
            "Python engine fails the same way. Re-reading the head.",
        ),
        (
            "df = pd.read_csv('data/pos_export_eu.csv', quotechar='\"', low_memory=False)",
            True,
            "Still line 3. Let me check the head once more.",
        ),
        (
            "df = pd.read_csv('data/pos_export_eu.csv', encoding='latin-1')",
            True,
            "Maybe the encoding. Look at the head again.",
        ),
        ("df = pd.read_csv('data/pos_export_eu.csv', dtype=str)", True, ""),
    ]
    for i, (src, c_engine, thought) in enumerate(attempts):
        code = "import pandas as pd\n" + src + "\nprint(df.shape)"
        out = perr(20 + i, src, c_engine)
        py(r, code, out, error=True, dur=0.4 + (i % 3) * 0.15)
        if thought:
            r.turn(thought)
        if i < len(attempts) - 1:
            head(r, p, 10 if i == 2 else 5, h10 if i == 2 else h5)
    return r


def ds_report_rewrite_loop():
    # calls: 0,1 analysis, 2 figure, 3 Method, 4 Key findings v1; 5 rewrite of the same section -> loop_start=5
    r = Run("ds_report_rewrite_loop", SHAPE, "loop", 5)
    r.turn("Write up the checkout-button A/B test for the product team.")
    py(
        r,
        "import pandas as pd\nab = pd.read_parquet('data/ab_checkout_button.parquet')\ns = ab.groupby('variant').agg(users=('user_id','nunique'), conv=('converted','mean'), aov=('order_value','mean'))\nprint(s.round(4)); print(ab.assigned_at.min(), ab.assigned_at.max())",
        "          users    conv     aov\nvariant                        \ncontrol   48213  0.0412  63.18\ntreatment 48390  0.0441  62.74\n2024-05-06 00:00:04 2024-05-26 23:59:51",
        dur=1.3,
    )
    py(
        r,
        "from statsmodels.stats.proportion import proportions_ztest, confint_proportions_2indep\nc = ab.groupby('variant').converted.agg(['sum','count'])\nz, p = proportions_ztest(c['sum'][::-1], c['count'][::-1])\nlo, hi = confint_proportions_2indep(c.loc['treatment','sum'], c.loc['treatment','count'], c.loc['control','sum'], c.loc['control','count'])\nprint(f'z={z:.3f} p={p:.4f} diff_ci=({lo*100:.2f}pp, {hi*100:.2f}pp) rel_lift={(0.0441/0.0412-1)*100:.1f}%')",
        "z=2.251 p=0.0244 diff_ci=(0.04pp, 0.54pp) rel_lift=7.0%",
        dur=1.0,
    )
    fig(r, "ab_conversion_by_variant")
    report(
        r,
        "Method",
        "Three-week test (6-26 May 2024), 96,603 users randomised 50/50 between the old grey and new green checkout button. Primary metric: order conversion; secondary: average order value. Two-proportion z-test, alpha 0.05.",
        "Section 'Method' written to reports/ab_checkout.md (1 of 2 sections, 231 chars).",
    )
    versions = [
        "The green button increased conversion from 4.12% to 4.41% (+0.29pp, +7.0% relative; p=0.024, 95% CI 0.04-0.54pp). Average order value was unchanged (63.18 vs 62.74 EUR). Recommendation: ship the green button.",
        "Switching to the green checkout button lifted conversion by 7% relative (4.12% -> 4.41%, p=0.024). The confidence interval (0.04-0.54pp) excludes zero. Order value did not change meaningfully. We recommend rolling it out.",
        "Key result: the new button converts better. Conversion rose from 4.12% to 4.41%, a 7.0% relative lift that is statistically significant (p=0.024; CI 0.04pp to 0.54pp). AOV stayed flat at ~63 EUR. Recommendation: ship.",
        "Users who saw the green button were more likely to complete checkout: 4.41% vs 4.12% (+7.0%, p=0.024, 95% CI +0.04 to +0.54pp). There was no meaningful change in average order value (62.74 vs 63.18 EUR). We suggest shipping it.",
        "Bottom line: ship the green button. It raised checkout conversion by 0.29 percentage points (4.12% -> 4.41%, +7% relative), significant at p=0.024 (CI 0.04-0.54pp), with average order value essentially unchanged.",
        "The test shows a significant conversion improvement for the green button (4.41% vs 4.12%; +7.0% relative; p=0.024; 95% CI 0.04-0.54pp) and no change in order value (~63 EUR). Recommendation: roll out to all users.",
        "Conversion: 4.12% (control) vs 4.41% (green), +7.0% relative, p=0.024, CI 0.04-0.54pp. AOV: 63.18 vs 62.74 EUR, no meaningful difference. Recommendation: ship the green checkout button.",
    ]
    thoughts = [
        "That reads a bit technical for the product team. Let me rephrase the findings.",
        "Better, but the recommendation should come through more clearly. Rewriting.",
        "Hmm, 'converts better' is vague. Rephrase again.",
        "Let me lead with the recommendation instead.",
        "That's too blunt; make it more neutral.",
        "Maybe a compact, numbers-first version works best.",
        "",
    ]
    sizes = [214, 221, 226, 233, 211, 219, 190]
    for i, (text, thought) in enumerate(zip(versions, thoughts)):
        verb = "written" if i == 0 else "replaced"
        report(
            r,
            "Key findings",
            text,
            f"Section 'Key findings' {verb} in reports/ab_checkout.md (v{i + 1}, {sizes[i]} chars; report now 2 sections, {231 + sizes[i] + 38} chars).",
        )
        if thought:
            r.turn(thought)
    return r


RUNS = [
    ds_hparam_sweep,
    ds_iterative_cleaning,
    ds_exploratory_analysis,
    ds_training_poll,
    ds_keyerror_loop,
    ds_seed_nonconvergence_loop,
    ds_csv_reread_loop,
    ds_report_rewrite_loop,
]
