from harness import Run


def tb(exc, msg, cell, line, code_line):
    return (
        "---------------------------------------------------------------------------\n"
        f"{exc}                                  Traceback (most recent call last)\n"
        f"Cell In[{cell}], line {line}\n----> {line} {code_line}\n\n"
        f"{exc}: {msg}"
    )


def nb_legit():
    r = Run("notebook_datascience_legit", "jupyter", "loop-free", None)
    r.call(
        "read_notebook",
        {"path": "churn_analysis.ipynb"},
        '{"cells": 3, "kernel": "python3", "cells_preview": ["# Churn analysis", "import pandas as pd", ""]}',
    )
    n = [0]

    def ex(code, out, err=False):
        n[0] += 1
        r.call("execute_cell", {"cell_index": n[0] + 2, "code": code}, out, error=err)

    r.call(
        "add_cell",
        {"index": 3, "cell_type": "code", "source": "import pandas as pd\nimport numpy as np"},
        "Added code cell at index 3 (id 7c1e2f)",
    )
    ex(
        "import pandas as pd\nimport numpy as np\ndf = pd.read_csv('data/customers.csv')\ndf.shape",
        "Out[1]: (48213, 21)",
    )
    ex(
        "df.head()",
        "Out[2]:\n   customer_id  tenure_months  plan  monthly_fee  churned ...\n0  C-100233  14  pro  49.0  0\n1  C-100234  2  basic  9.0  1\n[5 rows x 21 columns]",
    )
    ex("df['churn'].mean()", tb("KeyError", "'churn'", 3, 1, "df['churn'].mean()"), True)
    ex("df['churned'].mean()", "Out[4]: 0.18731")
    ex(
        "df.dtypes.value_counts()",
        "Out[5]:\nobject     9\nfloat64    7\nint64      5\ndtype: int64",
    )
    ex(
        "df['total_charges'].astype(float).describe()",
        tb(
            "ValueError",
            "could not convert string to float: ' '",
            6,
            1,
            "df['total_charges'].astype(float).describe()",
        ),
        True,
    )
    ex(
        "df['total_charges'] = pd.to_numeric(df['total_charges'], errors='coerce')\ndf['total_charges'].isna().sum()",
        "Out[7]: 11",
    )
    ex(
        "df = df.dropna(subset=['total_charges'])\ndf.groupby('plan')['churned'].mean()",
        "Out[8]:\nplan\nbasic    0.2811\npro      0.1204\nteam     0.0732\nName: churned, dtype: float64",
    )
    ex(
        "import seaborn as sns\nsns.histplot(df, x='tenure_months', hue='churned', bins=40)",
        "Out[9]: <Axes: xlabel='tenure_months', ylabel='Count'>\n<Figure size 640x480 with 1 Axes>",
    )
    ex(
        "from sklearn.model_selection import train_test_split\nX = df.drop(columns=['customer_id','churned'])\ny = df['churned']\nX_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=42, stratify=y)",
        "",
    )
    ex(
        "from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression(max_iter=1000).fit(X_train, y_train)",
        tb(
            "ValueError",
            "could not convert string to float: 'basic'",
            11,
            2,
            "clf = LogisticRegression(max_iter=1000).fit(X_train, y_train)",
        ),
        True,
    )
    ex(
        "cat_cols = X.select_dtypes('object').columns.tolist()\ncat_cols",
        "Out[12]: ['plan', 'region', 'payment_method', 'contract', 'gender', 'partner', 'paperless']",
    )
    ex(
        "from sklearn.compose import ColumnTransformer\nfrom sklearn.preprocessing import OneHotEncoder, StandardScaler\nfrom sklearn.pipeline import make_pipeline\nnum_cols = X.select_dtypes('number').columns\npre = ColumnTransformer([('cat', OneHotEncoder(handle_unknown='ignore'), cat_cols), ('num', StandardScaler(), num_cols)])\npipe = make_pipeline(pre, LogisticRegression(max_iter=1000))\npipe.fit(X_train, y_train)",
        "Out[13]: Pipeline(steps=[('columntransformer', ColumnTransformer(...)), ('logisticregression', LogisticRegression(max_iter=1000))])",
    )
    ex(
        "from sklearn.metrics import roc_auc_score\nroc_auc_score(y_test, pipe.predict_proba(X_test)[:, 1])",
        "Out[14]: 0.8412",
    )
    ex(
        "from sklearn.ensemble import HistGradientBoostingClassifier\nhgb = make_pipeline(pre, HistGradientBoostingClassifier())\nhgb.fit(X_train, y_train)",
        tb(
            "TypeError",
            "A sparse matrix was passed, but dense data is required. Use X.toarray() to convert to a dense numpy array.",
            15,
            3,
            "hgb.fit(X_train, y_train)",
        ),
        True,
    )
    ex(
        "pre_dense = ColumnTransformer([('cat', OneHotEncoder(handle_unknown='ignore', sparse_output=False), cat_cols), ('num', 'passthrough', num_cols)])\nhgb = make_pipeline(pre_dense, HistGradientBoostingClassifier(random_state=0))\n%time hgb.fit(X_train, y_train)",
        "CPU times: user 4.81 s, sys: 112 ms, total: 4.92 s\nWall time: 1.37 s\nOut[16]: Pipeline(...)",
    )
    ex("roc_auc_score(y_test, hgb.predict_proba(X_test)[:, 1])", "Out[17]: 0.8790")
    ex(
        "from sklearn.inspection import permutation_importance\nres = permutation_importance(hgb, X_test, y_test, n_repeats=5, random_state=0, n_jobs=2)\nsorted(zip(res.importances_mean, X.columns), reverse=True)[:5]",
        "Out[18]:\n[(0.0612, 'contract'), (0.0433, 'tenure_months'), (0.0211, 'monthly_fee'), (0.0098, 'payment_method'), (0.0041, 'region')]",
    )
    ex(
        "pd.crosstab(df['contract'], df['churned'], normalize='index')",
        "Out[19]:\nchurned   0     1\ncontract\nmonth    0.57  0.43\nannual   0.89  0.11\ntwo_year 0.97  0.03",
    )
    ex(
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nRocCurveDisplay.from_estimator(hgb, X_test, y_test, ax=ax)",
        tb(
            "NameError",
            "name 'RocCurveDisplay' is not defined",
            20,
            3,
            "RocCurveDisplay.from_estimator(hgb, X_test, y_test, ax=ax)",
        ),
        True,
    )
    ex(
        "from sklearn.metrics import RocCurveDisplay\nfig, ax = plt.subplots()\nRocCurveDisplay.from_estimator(hgb, X_test, y_test, ax=ax)\nfig.savefig('figures/roc.png', dpi=120)",
        "Out[21]: <sklearn.metrics._plot.roc_curve.RocCurveDisplay at 0x7f4b2c1e9d50>\n<Figure size 640x480 with 1 Axes>",
    )
    r.call(
        "add_cell",
        {
            "index": 24,
            "cell_type": "markdown",
            "source": "## Findings\n- Month-to-month contracts churn at 43%\n- HGB AUC 0.879 vs logistic 0.841",
        },
        "Added markdown cell at index 24 (id 9a0b3d)",
    )
    r.call(
        "read_notebook",
        {"path": "churn_analysis.ipynb", "summary": True},
        '{"cells": 25, "errors": 0, "last_execution": "2023-11-14T22:31:07Z"}',
    )
    return r


def LOOP_ERR(cell):
    return tb(
        "ValueError",
        "time data '14/11/2023 22:05' does not match format '%Y-%m-%d %H:%M:%S'",
        cell,
        1,
        "df['ts'] = pd.to_datetime(df['ts'], format=FMT)",
    )


def nb_loop():
    """Agent keeps rewriting the date-parsing cell; each time the same ValueError."""
    r = Run("notebook_same_traceback_loop", "jupyter", "loop", 3)
    r.call("read_notebook", {"path": "events.ipynb"}, '{"cells": 6}')
    r.call(
        "execute_cell",
        {"cell_index": 1, "code": "import pandas as pd\ndf = pd.read_csv('events.csv')\ndf.shape"},
        "Out[1]: (120044, 6)",
    )
    r.call(
        "execute_cell",
        {"cell_index": 2, "code": "df['ts'].head(3)"},
        "Out[2]:\n0    14/11/2023 22:05\n1    14/11/2023 22:06\n2    14/11/2023 22:06\nName: ts, dtype: object",
    )
    fmts = [
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%Y/%m/%d %H:%M:%S",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M:%S.%f",
        "%Y-%m-%d  %H:%M:%S",
        "%Y-%m-%d %I:%M:%S",
        "%Y-%m-%d %H:%M:%S%z",
    ]
    for n, f in enumerate(fmts):
        cell = 3 + n
        r.turn(f"The format must be off; trying FMT = '{f}'.")
        r.call(
            "edit_cell",
            {
                "cell_index": 3,
                "source": f"FMT = '{f}'\ndf['ts'] = pd.to_datetime(df['ts'], format=FMT)",
            },
            "Cell 3 updated",
        )
        r.call(
            "execute_cell",
            {"cell_index": 3},
            LOOP_ERR(cell).replace("'%Y-%m-%d %H:%M:%S'", f"'{f}'") if n % 2 else LOOP_ERR(cell),
            True,
        )
    return r


def nb_loop_code_arg():
    """Same loop but the harness has only execute_cell(code=...): rewrite and run in one call,
    the traceback identical except the execution counter."""
    r = Run("notebook_same_traceback_code_arg_loop", "jupyter", "loop", 2)
    r.call(
        "execute_cell",
        {"code": "import pandas as pd\ndf = pd.read_parquet('s3://bucket/events/2023-11/')"},
        "Out[1]: None",
    )
    r.call(
        "execute_cell",
        {"code": "df.head()"},
        "Out[2]:\n  user_id  amount ...\n[5 rows x 9 columns]",
    )
    for n in range(8):
        code = [
            "df.groupby('user_id')['amount'].sum().sort_values()",
            "df.groupby(['user_id'])['amount'].sum().sort_values(ascending=False)",
            "totals = df.groupby('user_id')['amount'].sum()\ntotals.sort_values()",
            "df.groupby('user_id').amount.sum().sort_values()",
            "df.groupby('user_id', as_index=False)['amount'].sum()",
            "df.groupby('user_id')['amount'].agg('sum')",
            "df.pivot_table(index='user_id', values='amount', aggfunc='sum')",
            "df.groupby('user_id')[['amount']].sum()",
        ][n]
        r.call(
            "execute_cell",
            {"code": code},
            tb(
                "TypeError",
                "unsupported operand type(s) for +: 'decimal.Decimal' and 'float'",
                3 + n,
                1,
                code.splitlines()[0],
            ),
            True,
        )
    return r


RUNS = [nb_legit, nb_loop, nb_loop_code_arg]
