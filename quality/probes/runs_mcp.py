from harness import Run

FILES = [
    "src/billing/invoice.py",
    "src/billing/tax.py",
    "src/billing/discounts.py",
    "src/api/routes/invoices.py",
    "src/api/routes/customers.py",
    "src/workers/monthly_close.py",
    "src/reports/revenue.py",
    "tests/billing/test_invoice.py",
    "tests/billing/test_tax.py",
    "tests/api/test_invoices.py",
]


def mcp_legit():
    r = Run("mcp_fs_git_refactor_legit", "mcp-fs-git", "loop-free", None)
    r.turn(
        "Task: rename compute_total() to compute_invoice_total() and move money helpers to src/billing/money.py."
    )
    r.call(
        "list_directory",
        {"path": "/workspace/acme"},
        "[DIR] src\n[DIR] tests\n[FILE] pyproject.toml\n[FILE] README.md\n[FILE] Makefile",
    )
    r.call(
        "search_files",
        {"path": "/workspace/acme", "pattern": "compute_total"},
        "\n".join(
            f"/workspace/acme/{f}:{10 + i * 7}: ... compute_total(" for i, f in enumerate(FILES)
        ),
    )
    for i, f in enumerate(FILES):
        r.call(
            "read_file",
            {"path": f"/workspace/acme/{f}"},
            f"# {f}\nfrom decimal import Decimal\nfrom src.billing.invoice import compute_total\n\n\ndef handler_{i}(inv):\n    total = compute_total(inv.lines, inv.currency)\n    return round_money(total)\n",
        )
    r.call(
        "write_file",
        {
            "path": "/workspace/acme/src/billing/money.py",
            "content": "from decimal import Decimal, ROUND_HALF_EVEN\n\n\ndef round_money(value: Decimal, places: int = 2) -> Decimal:\n    return value.quantize(Decimal(10) ** -places, rounding=ROUND_HALF_EVEN)\n",
        },
        "Successfully wrote to /workspace/acme/src/billing/money.py",
    )
    for i, f in enumerate(FILES):
        r.call(
            "write_file",
            {
                "path": f"/workspace/acme/{f}",
                "content": f"# {f}\nfrom decimal import Decimal\nfrom src.billing.invoice import compute_invoice_total\nfrom src.billing.money import round_money\n\n\ndef handler_{i}(inv):\n    total = compute_invoice_total(inv.lines, inv.currency)\n    return round_money(total)\n",
            },
            f"Successfully wrote to /workspace/acme/{f}",
        )
    r.call(
        "run_command",
        {"command": "python -m pytest -q tests/billing"},
        "..........F....\nFAILED tests/billing/test_tax.py::test_reverse_charge - ImportError: cannot import name 'round_money' from 'src.billing.tax'\n1 failed, 14 passed in 2.31s",
        error=True,
    )
    r.call(
        "read_file",
        {"path": "/workspace/acme/tests/billing/test_tax.py"},
        "from src.billing.tax import round_money, apply_tax\n\ndef test_reverse_charge(): ...",
    )
    r.call(
        "write_file",
        {
            "path": "/workspace/acme/tests/billing/test_tax.py",
            "content": "from src.billing.money import round_money\nfrom src.billing.tax import apply_tax\n\ndef test_reverse_charge(): ...",
        },
        "Successfully wrote to /workspace/acme/tests/billing/test_tax.py",
    )
    r.call(
        "run_command",
        {"command": "python -m pytest -q"},
        "........................................ [ 71%]\n................                         [100%]\n56 passed in 4.87s",
    )
    r.call(
        "search_files", {"path": "/workspace/acme", "pattern": "compute_total"}, "No matches found"
    )
    r.call(
        "git_diff",
        {"repo_path": "/workspace/acme"},
        "diff --git a/src/billing/invoice.py b/src/billing/invoice.py\nindex 3f1c2ab..9e0d4c1 100644\n--- a/src/billing/invoice.py\n+++ b/src/billing/invoice.py\n@@ -10,7 +10,7 @@\n-def compute_total(lines, currency):\n+def compute_invoice_total(lines, currency):\n ... 11 files changed, 48 insertions(+), 41 deletions(-)",
    )
    r.call(
        "git_commit",
        {
            "repo_path": "/workspace/acme",
            "message": "Rename compute_total to compute_invoice_total; extract money helpers",
        },
        "[refactor/invoice-total 8c2d1f0] Rename compute_total to compute_invoice_total; extract money helpers\n 11 files changed, 48 insertions(+), 41 deletions(-)\n create mode 100644 src/billing/money.py",
    )
    return r


TSC_ERR = (
    "> acme-web@2.4.1 typecheck\n> tsc --noEmit -p tsconfig.json\n\n"
    "src/api/client.ts(42,17): error TS2345: Argument of type 'string | undefined' is not assignable to parameter of type 'string'.\n"
    "  Type 'undefined' is not assignable to type 'string'.\n\nFound 1 error in src/api/client.ts:42\n"
)


def mcp_loop():
    r = Run("mcp_write_same_file_same_check_loop", "mcp-fs-git", "loop", 3)
    r.call(
        "read_file",
        {"path": "/workspace/web/src/api/client.ts"},
        "export async function getUser(id?: string) {\n  return http.get(buildUrl(id));\n}\n",
    )
    r.call("run_command", {"command": "npm run typecheck"}, TSC_ERR, error=True)
    r.call(
        "read_file",
        {"path": "/workspace/web/src/api/url.ts"},
        "export function buildUrl(id: string): string { return `/users/${id}`; }\n",
    )
    bodies = [
        "export async function getUser(id?: string) {\n  return http.get(buildUrl(id as string));\n}\n",
        "export async function getUser(id?: string) {\n  const uid = id;\n  return http.get(buildUrl(uid));\n}\n",
        "export async function getUser(id?: string) {\n  // ensure id\n  return http.get(buildUrl(id!));\n}\n",
        "export async function getUser(id?: string): Promise<User> {\n  return http.get(buildUrl(id));\n}\n",
        "export async function getUser(id: string | undefined) {\n  return http.get(buildUrl(id));\n}\n",
        "export async function getUser(id?: string) {\n  if (id === null) throw new Error('id');\n  return http.get(buildUrl(id));\n}\n",
        "export async function getUser(id?: string) {\n  return http.get(buildUrl(`${id}`.trim() || id));\n}\n",
    ]
    for n, b in enumerate(bodies):
        r.turn(f"Attempt {n + 1}: adjusting getUser so the id is a string.")
        r.call(
            "write_file",
            {"path": "/workspace/web/src/api/client.ts", "content": b},
            "Successfully wrote to /workspace/web/src/api/client.ts",
        )
        r.call("run_command", {"command": "npm run typecheck"}, TSC_ERR, error=True)
    return r


def mcp_loop_tsc_timing():
    """Same loop with a pytest check whose failure mentions tmp_path, whose counter
    (pytest-of-agent/pytest-N) goes up by one each session: the only change in the output."""
    r = Run("mcp_same_check_pytest_tmp_path_loop", "mcp-fs-git", "loop", 1)
    r.call(
        "read_file",
        {"path": "/workspace/etl/src/etl/export.py"},
        "def export_csv(rows, path):\n    with open(path, 'w') as fh: ...",
    )
    for n in range(7):
        r.call(
            "write_file",
            {
                "path": "/workspace/etl/src/etl/export.py",
                "content": f"import csv\n\ndef export_csv(rows, path):\n    with open(path, 'w', newline='{chr(92) + 'n' if n % 2 else ''}') as fh:\n        w = csv.writer(fh, lineterminator='\\n')\n        # attempt {n}\n        w.writerows(rows)\n",
            },
            "Successfully wrote to /workspace/etl/src/etl/export.py",
        )
        p = f"/tmp/pytest-of-agent/pytest-{31 + n}/test_export_roundtrip0/out.csv"
        r.call(
            "run_command",
            {"command": "python -m pytest -q tests/test_export.py"},
            f"F.\n=================================== FAILURES ===================================\n___________________________ test_export_roundtrip ____________________________\n\ntmp_path = PosixPath('{p.rsplit('/', 1)[0]}')\n\n    def test_export_roundtrip(tmp_path):\n>       assert read_back(tmp_path / 'out.csv') == ROWS\nE       AssertionError: assert [['id', 'name'], [], ['1', 'a']] == [['id', 'name'], ['1', 'a']]\n\ntests/test_export.py:18: AssertionError\nFAILED tests/test_export.py::test_export_roundtrip - AssertionError: assert [['id', 'name'], [], ['1', 'a']]...\n1 failed, 1 passed in 0.{21 + n}s",
            error=True,
        )
    return r


RUNS = [mcp_legit, mcp_loop, mcp_loop_tsc_timing]
