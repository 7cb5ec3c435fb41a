"""Environment-setup agent (shape "env-setup"): the agent must get a freshly cloned Python or
Node repository's test suite running in a bare container. Tools: command(command) -> terminal
output with the exit code appended as "[exit code: N]", search(query) -> 3-5 web snippets,
issue(title, body) -> "Issue #N created", stop(reason). Long runs (30-80 calls), failure-heavy
by nature: missing system libraries, wrong interpreters, native builds.

Invented runs, written blind to the detector's rules (no detector code or docs were read and
the detector was never run against them); no data from any real corpus.

Label convention: label is "loop-free" or "loop"; loop_start = 0-based index (tool calls
only) of the first tool call that repeats an attempt that had already come back futile
(the first repetition, not the first attempt); None for loop-free runs. Labels follow
quality/RUBRIC.md."""

import random
import textwrap

from harness import Run

SHAPE = "env-setup"


# ---------------------------------------------------------------- helpers


def sh(r, line, out, code=0, dur=1.0):
    """A `command` call: the shell line and its terminal output plus the exit code."""
    out = out.strip("\n")
    text = f"{out}\n[exit code: {code}]" if out else f"[exit code: {code}]"
    r.call("command", {"command": line}, text, error=code != 0, dur=dur)


def search(r, query, hits, dur=1.4):
    """A `search` call; hits are (title, url, snippet) triples."""
    body = "\n\n".join(
        f"{i}. {title}\n   {url}\n   {snip}" for i, (title, url, snip) in enumerate(hits, 1)
    )
    r.call("search", {"query": query}, body, dur=dur)


def issue(r, title, body, number):
    r.call("issue", {"title": title, "body": body}, f"Issue #{number} created", dur=0.6)


def stop(r, reason):
    r.call("stop", {"reason": reason}, "Session stopped.", dur=0.1)


def apt_ok(rng, pkgs, dist="focal", libc="2.31-0ubuntu9.14", upgraded=3):
    """apt-get install output for pkgs, a list of (name, version)."""
    names = " ".join(n for n, _ in pkgs)
    total_kb = 0
    gets = []
    for i, (name, ver) in enumerate(pkgs, 1):
        kb = rng.randint(18, 4200)
        total_kb += kb
        gets.append(
            f"Get:{i} http://archive.ubuntu.com/ubuntu {dist}/main amd64 {name} amd64 {ver} [{kb} kB]"
        )
    mb = total_kb / 1024
    lines = [
        "Reading package lists... Done",
        "Building dependency tree",
        "Reading state information... Done",
        "The following NEW packages will be installed:",
        textwrap.fill(names, width=78, initial_indent="  ", subsequent_indent="  "),
        f"0 upgraded, {len(pkgs)} newly installed, 0 to remove and {upgraded} not upgraded.",
        f"Need to get {mb:.1f} MB of archives.",
        f"After this operation, {mb * 3.7:.1f} MB of additional disk space will be used.",
        *gets,
        f"Fetched {mb:.1f} MB in {rng.randint(1, 9)}s ({rng.uniform(2, 14):.1f} MB/s)",
        "debconf: delaying package configuration, since apt-utils is not installed",
    ]
    for name, ver in pkgs:
        lines.append(f"Selecting previously unselected package {name}:amd64.")
        lines.append(f"Unpacking {name}:amd64 ({ver}) ...")
    for name, ver in pkgs:
        lines.append(f"Setting up {name}:amd64 ({ver}) ...")
    lines.append(f"Processing triggers for libc-bin ({libc}) ...")
    return "\n".join(lines)


def pip_ok(rng, pkgs, editable=None):
    """pip install output; pkgs is a list of (name, version); editable = project name or None."""
    lines = []
    if editable:
        lines += [
            f"Obtaining file:///work/{editable}",
            "  Installing build dependencies ... done",
            "  Checking if build backend supports build_editable ... done",
            "  Getting requirements to build editable ... done",
            "  Preparing editable metadata (pyproject.toml) ... done",
        ]
    for name, ver in pkgs:
        kb = rng.randint(12, 9000)
        size = f"{kb / 1024:.1f} MB" if kb > 1024 else f"{kb} kB"
        wheel = name.replace("-", "_")
        lines.append(f"Collecting {name}=={ver}" if rng.random() < 0.3 else f"Collecting {name}")
        lines.append(f"  Downloading {wheel}-{ver}-py3-none-any.whl ({size})")
        lines.append(
            f"     ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ {size.split()[0]}/{size} "
            f"{rng.uniform(3, 40):.1f} MB/s eta 0:00:00"
        )
    inst = [n for n, _ in pkgs] + ([editable] if editable else [])
    if editable:
        lines.append(f"Building wheels for collected packages: {editable}")
        lines.append(f"  Building editable for {editable} (pyproject.toml) ... done")
        lines.append(
            f"  Created wheel for {editable}: filename={editable}-0.0.0-0.editable-py3-none-any.whl "
            f"size={rng.randint(3000, 9000)} sha256={rng.getrandbits(256):064x}"
        )
        lines.append(f"Successfully built {editable}")
    lines.append("Installing collected packages: " + ", ".join(inst))
    lines.append(
        "Successfully installed "
        + " ".join(f"{n}-{v}" for n, v in pkgs)
        + (f" {editable}-0.0.0" if editable else "")
    )
    return "\n".join(lines)


def hexdir(rng, prefix="pip-build-env-"):
    return prefix + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789_") for _ in range(8))


# ---------------------------------------------------------------- loop-free 1


def setup_webapp_postgres_pass():
    """Python 3.11 web app on Ubuntu 20.04. Ten failures, each a different missing piece
    (interpreter, pg_config, Python.h, libxml2, test extras, database, pgcrypto, locales,
    pango); every fix moves the build or the suite further and it ends green."""
    rng = random.Random(2101)
    r = Run("setup_webapp_postgres_pass", SHAPE, "loop-free", None)
    r.turn("Fresh container, repo at /work/harbor-ledger. First, what kind of project is it?")
    sh(
        r,
        "ls -la",
        "total 96\n"
        "drwxr-xr-x 9 root root 4096 Mar  4 10:12 .\n"
        "drwxr-xr-x 3 root root 4096 Mar  4 10:12 ..\n"
        "drwxr-xr-x 8 root root 4096 Mar  4 10:12 .git\n"
        "drwxr-xr-x 3 root root 4096 Mar  4 10:12 .github\n"
        "-rw-r--r-- 1 root root  612 Mar  4 10:12 .gitignore\n"
        "-rw-r--r-- 1 root root    5 Mar  4 10:12 .python-version\n"
        "-rw-r--r-- 1 root root 2231 Mar  4 10:12 README.md\n"
        "-rw-r--r-- 1 root root  884 Mar  4 10:12 alembic.ini\n"
        "-rw-r--r-- 1 root root  517 Mar  4 10:12 docker-compose.yml\n"
        "drwxr-xr-x 4 root root 4096 Mar  4 10:12 migrations\n"
        "-rw-r--r-- 1 root root 1790 Mar  4 10:12 pyproject.toml\n"
        "drwxr-xr-x 3 root root 4096 Mar  4 10:12 src\n"
        "drwxr-xr-x 6 root root 4096 Mar  4 10:12 tests",
        dur=0.1,
    )
    sh(
        r,
        "cat pyproject.toml",
        '[build-system]\nrequires = ["setuptools>=68", "wheel"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "harbor-ledger"\nversion = "0.9.3"\nrequires-python = ">=3.11"\n'
        "dependencies = [\n"
        '    "fastapi>=0.110",\n    "uvicorn[standard]>=0.27",\n    "sqlalchemy>=2.0",\n'
        '    "alembic>=1.13",\n    "psycopg2>=2.9",\n    "lxml>=5.1",\n    "weasyprint>=61",\n'
        '    "babel>=2.14",\n    "pydantic-settings>=2.2",\n]\n\n'
        "[project.optional-dependencies]\n"
        'test = ["pytest>=8", "pytest-asyncio>=0.23", "httpx>=0.27", "factory-boy>=3.3"]\n\n'
        "[tool.pytest.ini_options]\n"
        'testpaths = ["tests"]\nasyncio_mode = "auto"',
        dur=0.1,
    )
    sh(r, "python3 --version", "Python 3.8.10", dur=0.1)
    r.turn("requires-python is >=3.11 and the image has 3.8. Try the distro package first.")
    sh(
        r,
        "apt-get install -y python3.11 python3.11-venv",
        "Reading package lists... Done\nBuilding dependency tree\nReading state information... Done\n"
        "E: Unable to locate package python3.11\n"
        "E: Couldn't find any package by glob 'python3.11'\n"
        "E: Couldn't find any package by regex 'python3.11'",
        code=100,
        dur=1.1,
    )
    r.turn(
        "Focal doesn't ship 3.11. The deadsnakes PPA has it; I need add-apt-repository for that."
    )
    sh(
        r,
        "apt-get update && apt-get install -y software-properties-common",
        "Get:1 http://security.ubuntu.com/ubuntu focal-security InRelease [128 kB]\n"
        "Get:2 http://archive.ubuntu.com/ubuntu focal InRelease [265 kB]\n"
        "Fetched 27.4 MB in 6s (4512 kB/s)\nReading package lists... Done\n"
        + apt_ok(
            rng,
            [
                ("python3-software-properties", "0.99.9.12"),
                ("software-properties-common", "0.99.9.12"),
                ("unattended-upgrades", "2.3ubuntu0.3"),
            ],
        ),
        dur=14.2,
    )
    sh(
        r,
        "add-apt-repository -y ppa:deadsnakes/ppa && apt-get update",
        "Hit:1 http://archive.ubuntu.com/ubuntu focal InRelease\n"
        "Get:2 http://ppa.launchpad.net/deadsnakes/ppa/ubuntu focal InRelease [18.1 kB]\n"
        "Get:3 http://ppa.launchpad.net/deadsnakes/ppa/ubuntu focal/main amd64 Packages [29.4 kB]\n"
        "Fetched 47.5 kB in 2s (23.1 kB/s)\nReading package lists... Done",
        dur=6.3,
    )
    sh(
        r,
        "apt-get install -y python3.11 python3.11-venv",
        apt_ok(
            rng,
            [
                ("libpython3.11-minimal", "3.11.8-1+focal1"),
                ("python3.11-minimal", "3.11.8-1+focal1"),
                ("libpython3.11-stdlib", "3.11.8-1+focal1"),
                ("python3.11", "3.11.8-1+focal1"),
                ("python3.11-venv", "3.11.8-1+focal1"),
            ],
        ),
        dur=11.8,
    )
    sh(
        r,
        "python3.11 -m venv .venv && . .venv/bin/activate && pip install -q -U pip && python --version",
        "Python 3.11.8",
        dur=9.5,
    )
    r.turn("Interpreter sorted. Install the project editable into the venv.")
    build_env = hexdir(rng)
    sh(
        r,
        ". .venv/bin/activate && pip install -e .",
        "Obtaining file:///work/harbor-ledger\n  Installing build dependencies ... done\n"
        "  Checking if build backend supports build_editable ... done\n"
        "Collecting fastapi>=0.110 (from harbor-ledger==0.9.3)\n"
        "  Downloading fastapi-0.110.0-py3-none-any.whl.metadata (24 kB)\n"
        "Collecting psycopg2>=2.9 (from harbor-ledger==0.9.3)\n"
        "  Downloading psycopg2-2.9.9.tar.gz (384 kB)\n"
        "  Preparing metadata (setup.py) ... error\n"
        "  error: subprocess-exited-with-error\n\n"
        "  × python setup.py egg_info did not run successfully.\n  │ exit code: 1\n"
        "  ╰─> [23 lines of output]\n      running egg_info\n"
        f"      creating /tmp/{build_env}/psycopg2.egg-info\n\n"
        "      Error: pg_config executable not found.\n\n"
        "      pg_config is required to build psycopg2 from source.  Please add the directory\n"
        "      containing pg_config to the $PATH or specify the full executable path with the\n"
        "      option:\n\n          python setup.py build_ext --pg-config /path/to/pg_config build ...\n\n"
        "      If you prefer to avoid building psycopg2 from source, please install the PyPI\n"
        "      'psycopg2-binary' package instead.\n      [end of output]\n\n"
        "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
        "error: metadata-generation-failed",
        code=1,
        dur=8.4,
    )
    r.turn(
        "psycopg2 from source needs pg_config. libpq-dev provides it; I'd rather not swap to psycopg2-binary since the project pins the source package."
    )
    sh(
        r,
        "apt-get install -y libpq-dev",
        apt_ok(
            rng, [("libpq5", "12.18-0ubuntu0.20.04.1"), ("libpq-dev", "12.18-0ubuntu0.20.04.1")]
        ),
        dur=4.0,
    )
    sh(
        r,
        ". .venv/bin/activate && pip install -e .",
        "Obtaining file:///work/harbor-ledger\n  Installing build dependencies ... done\n"
        "Collecting psycopg2>=2.9 (from harbor-ledger==0.9.3)\n  Using cached psycopg2-2.9.9.tar.gz (384 kB)\n"
        "  Preparing metadata (setup.py) ... done\n"
        "Building wheels for collected packages: harbor-ledger, psycopg2\n"
        "  Building wheel for psycopg2 (setup.py) ... error\n  error: subprocess-exited-with-error\n\n"
        "  × python setup.py bdist_wheel did not run successfully.\n  │ exit code: 1\n"
        "  ╰─> [31 lines of output]\n      running build_ext\n"
        "      building 'psycopg2._psycopg' extension\n"
        "      x86_64-linux-gnu-gcc -pthread -fPIC -DPSYCOPG_VERSION=2.9.9 -I/usr/include/python3.11 "
        "-I/usr/include/postgresql -c psycopg/adapter_asis.c -o build/temp.linux-x86_64-cpython-311/psycopg/adapter_asis.o\n"
        "      In file included from psycopg/adapter_asis.c:28:\n"
        "      ./psycopg/psycopg.h:35:10: fatal error: Python.h: No such file or directory\n"
        "         35 | #include <Python.h>\n            |          ^~~~~~~~~~\n"
        "      compilation terminated.\n\n"
        "      It appears you are missing some prerequisite to build the package from source.\n"
        "      [end of output]\n"
        "  ERROR: Failed building wheel for psycopg2\nFailed to build psycopg2\n"
        "ERROR: Could not build wheels for psycopg2, which is required to install pyproject.toml-based projects",
        code=1,
        dur=19.7,
    )
    r.turn(
        "Further: pg_config is found, now the compile step lacks the 3.11 headers. Those come from python3.11-dev."
    )
    sh(
        r,
        "apt-get install -y python3.11-dev",
        apt_ok(
            rng,
            [
                ("libpython3.11", "3.11.8-1+focal1"),
                ("libpython3.11-dev", "3.11.8-1+focal1"),
                ("python3.11-dev", "3.11.8-1+focal1"),
            ],
        ),
        dur=6.1,
    )
    sh(
        r,
        ". .venv/bin/activate && pip install -e .",
        "Obtaining file:///work/harbor-ledger\n"
        "Building wheels for collected packages: harbor-ledger, psycopg2, lxml\n"
        "  Building wheel for psycopg2 (setup.py) ... done\n"
        f"  Created wheel for psycopg2: filename=psycopg2-2.9.9-cp311-cp311-linux_x86_64.whl size=498213 sha256={rng.getrandbits(256):064x}\n"
        "  Building wheel for lxml (setup.py) ... error\n  error: subprocess-exited-with-error\n\n"
        "  × python setup.py bdist_wheel did not run successfully.\n  │ exit code: 1\n"
        "  ╰─> [96 lines of output]\n"
        "      Building lxml version 5.1.0.\n      Building without Cython.\n"
        "      Error: Please make sure the libxml2 and libxslt development packages are installed.\n"
        "      [end of output]\n"
        "  ERROR: Failed building wheel for lxml\nSuccessfully built harbor-ledger psycopg2\nFailed to build lxml\n"
        "ERROR: Could not build wheels for lxml, which is required to install pyproject.toml-based projects",
        code=1,
        dur=41.3,
    )
    r.turn(
        "psycopg2 builds now. lxml has no wheel for this platform tag apparently and needs libxml2/libxslt headers."
    )
    sh(
        r,
        "apt-get install -y libxml2-dev libxslt1-dev",
        apt_ok(
            rng,
            [
                ("icu-devtools", "66.1-2ubuntu2.1"),
                ("libicu-dev", "66.1-2ubuntu2.1"),
                ("libxml2-dev", "2.9.10+dfsg-5ubuntu0.20.04.7"),
                ("libxslt1-dev", "1.1.34-4ubuntu0.20.04.1"),
            ],
        ),
        dur=9.9,
    )
    sh(
        r,
        ". .venv/bin/activate && pip install -e .",
        pip_ok(
            rng,
            [
                ("lxml", "5.1.0"),
                ("weasyprint", "61.2"),
                ("babel", "2.14.0"),
                ("alembic", "1.13.1"),
                ("sqlalchemy", "2.0.28"),
                ("uvicorn", "0.27.1"),
                ("pydantic-settings", "2.2.1"),
            ],
            editable="harbor-ledger",
        ),
        dur=72.0,
    )
    r.turn("Installed. Run the suite.")
    sh(r, ".venv/bin/pytest -q", "bash: .venv/bin/pytest: No such file or directory", code=127)
    r.turn("pytest is not a runtime dependency; it's in an extra. Check which.")
    sh(
        r,
        "grep -n -A3 'optional-dependencies' pyproject.toml",
        '16:[project.optional-dependencies]\n17:test = ["pytest>=8", "pytest-asyncio>=0.23", "httpx>=0.27", "factory-boy>=3.3"]\n18-\n19-[tool.pytest.ini_options]',
        dur=0.1,
    )
    sh(
        r,
        ". .venv/bin/activate && pip install -e '.[test]'",
        pip_ok(
            rng,
            [
                ("pytest", "8.1.1"),
                ("pytest-asyncio", "0.23.5"),
                ("httpx", "0.27.0"),
                ("factory-boy", "3.3.0"),
                ("Faker", "24.1.0"),
                ("iniconfig", "2.0.0"),
                ("pluggy", "1.4.0"),
            ],
            editable="harbor-ledger",
        ),
        dur=21.0,
    )
    sh(
        r,
        ".venv/bin/pytest -q",
        "EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEE.............. [ 17%]\n"
        "EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEE [ 34%]\n"
        "...\n==================================== ERRORS ====================================\n"
        "____________ ERROR at setup of test_create_invoice_assigns_number _____________\n\n"
        "    @pytest.fixture(scope='session')\n    def engine():\n"
        "        eng = create_engine(settings.test_database_url)\n"
        ">       with eng.begin() as conn:\n\ntests/conftest.py:21: \n"
        "E   sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at "
        '"localhost" (127.0.0.1), port 5432 failed: Connection refused\n'
        "E   \tIs the server running on that host and accepting TCP/IP connections?\n"
        "=========================== short test summary info ============================\n"
        "ERROR tests/api/test_invoices.py::test_create_invoice_assigns_number - sqlalchemy.exc.OperationalError: ...\n"
        "ERROR tests/api/test_invoices.py::test_list_invoices_paginates - sqlalchemy.exc.OperationalError: ...\n"
        "... (364 more)\n"
        f"50 passed, 366 errors in {rng.uniform(18, 24):.2f}s",
        code=1,
        dur=23.0,
    )
    r.turn("The suite needs a Postgres. See how conftest picks the URL.")
    sh(
        r,
        "sed -n 1,45p tests/conftest.py",
        "import os\n\nimport pytest\nfrom sqlalchemy import create_engine, text\n\n"
        "from harbor_ledger.db import Base\nfrom harbor_ledger.settings import Settings\n\n"
        "settings = Settings(\n"
        '    test_database_url=os.environ.get(\n        "TEST_DATABASE_URL",\n'
        '        "postgresql+psycopg2://ledger:ledger@localhost:5432/ledger_test",\n    )\n)\n\n\n'
        '@pytest.fixture(scope="session")\ndef engine():\n'
        "    eng = create_engine(settings.test_database_url)\n    with eng.begin() as conn:\n"
        "        Base.metadata.drop_all(conn)\n"
        '        conn.execute(text("DROP TABLE IF EXISTS alembic_version"))\n'
        "    run_migrations(eng)\n    yield eng\n    eng.dispose()",
        dur=0.1,
    )
    sh(
        r,
        "cat docker-compose.yml",
        "services:\n  db:\n    image: postgres:15\n    environment:\n      POSTGRES_USER: ledger\n"
        '      POSTGRES_PASSWORD: ledger\n      POSTGRES_DB: ledger_test\n    ports:\n      - "5432:5432"',
        dur=0.1,
    )
    sh(r, "docker compose up -d db", "bash: docker: command not found", code=127, dur=0.1)
    r.turn(
        "No Docker inside this container. Install Postgres from apt instead and create the role and database the compose file describes."
    )
    sh(
        r,
        "apt-get install -y postgresql",
        apt_ok(
            rng,
            [
                ("postgresql-client-common", "214ubuntu0.1"),
                ("postgresql-client-12", "12.18-0ubuntu0.20.04.1"),
                ("postgresql-common", "214ubuntu0.1"),
                ("postgresql-12", "12.18-0ubuntu0.20.04.1"),
                ("postgresql", "12+214ubuntu0.1"),
            ],
        )
        + "\nCreating new PostgreSQL cluster 12/main ...",
        dur=28.5,
    )
    sh(
        r,
        "service postgresql start",
        " * Starting PostgreSQL 12 database server\n   ...done.",
        dur=3.2,
    )
    sh(
        r,
        "su postgres -c \"psql -c \\\"CREATE ROLE ledger LOGIN PASSWORD 'ledger' CREATEDB;\\\"\" && su postgres -c 'createdb -O ledger ledger_test'",
        "CREATE ROLE",
        dur=0.9,
    )
    sh(
        r,
        ".venv/bin/pytest -q",
        "EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEE.............. [ 17%]\n"
        "...\n==================================== ERRORS ====================================\n"
        "____________ ERROR at setup of test_create_invoice_assigns_number _____________\n"
        "migrations/versions/0003_invoice_public_id.py:19: in upgrade\n"
        '    sa.Column("public_id", UUID(), server_default=sa.text("gen_random_uuid()"), nullable=False),\n'
        "E   sqlalchemy.exc.ProgrammingError: (psycopg2.errors.UndefinedFunction) function gen_random_uuid() does not exist\n"
        "E   LINE 1: ALTER TABLE invoice ADD COLUMN public_id UUID DEFAULT gen_random_uuid() NOT NULL\n"
        "E   HINT:  No function matches the given name and argument types. You might need to add explicit type casts.\n"
        "=========================== short test summary info ============================\n"
        "ERROR tests/api/test_invoices.py::test_create_invoice_assigns_number - sqlalchemy.exc.ProgrammingError: ...\n"
        "... (365 more)\n"
        f"50 passed, 366 errors in {rng.uniform(9, 13):.2f}s",
        code=1,
        dur=12.0,
    )
    r.turn(
        "Connection works now; migration 0003 fails. The compose file uses Postgres 15 and apt gave me 12. I think gen_random_uuid became built in later; check."
    )
    search(
        r,
        "function gen_random_uuid() does not exist postgresql 12",
        [
            (
                "PostgreSQL 13 release notes",
                "https://www.postgresql.org/docs/release/13.0/",
                "Add function gen_random_uuid() to generate version-4 UUIDs. Previously this function was only available in the pgcrypto extension.",
            ),
            (
                "Generating a UUID in Postgres for Insert statement? - Stack Overflow",
                "https://stackoverflow.com/questions/12505158",
                "On PostgreSQL < 13 run CREATE EXTENSION IF NOT EXISTS pgcrypto; then gen_random_uuid() is available in that database.",
            ),
            (
                "F.26. pgcrypto - PostgreSQL 12 documentation",
                "https://www.postgresql.org/docs/12/pgcrypto.html",
                "gen_random_uuid() returns uuid. Returns a version 4 (random) UUID.",
            ),
        ],
    )
    sh(
        r,
        "su postgres -c \"psql -d ledger_test -c 'CREATE EXTENSION IF NOT EXISTS pgcrypto;'\"",
        "CREATE EXTENSION",
        dur=0.7,
    )
    sh(
        r,
        ".venv/bin/pytest -q",
        "........................................................................ [ 17%]\n"
        "....................................FF.FFF............................. [ 34%]\n"
        "................................................................. [100%]\n"
        "=================================== FAILURES ===================================\n"
        "_________________ test_invoice_pdf_amounts_localised[de_DE] __________________\n"
        "src/harbor_ledger/export/format.py:14: in money\n"
        '    locale.setlocale(locale.LC_NUMERIC, f"{lang}.UTF-8")\n'
        "E   locale.Error: unsupported locale setting\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/export/test_format.py::test_invoice_pdf_amounts_localised[de_DE] - locale.Error: unsupported locale setting\n"
        "FAILED tests/export/test_format.py::test_invoice_pdf_amounts_localised[fr_FR] - locale.Error: unsupported locale setting\n"
        "FAILED tests/export/test_format.py::test_csv_decimal_separator[de_DE] - locale.Error: unsupported locale setting\n"
        "FAILED tests/export/test_format.py::test_csv_decimal_separator[fr_FR] - locale.Error: unsupported locale setting\n"
        "FAILED tests/export/test_format.py::test_thousands_grouping - locale.Error: unsupported locale setting\n"
        f"5 failed, 405 passed, 6 skipped in {rng.uniform(30, 36):.2f}s",
        code=1,
        dur=34.0,
    )
    r.turn("Down to 5 failures, all locales. Which ones does the image have?")
    sh(r, "locale -a", "C\nC.UTF-8\nPOSIX", dur=0.1)
    sh(
        r,
        "apt-get install -y locales && locale-gen de_DE.UTF-8 fr_FR.UTF-8",
        apt_ok(rng, [("locales", "2.31-0ubuntu9.14")])
        + "\nGenerating locales (this might take a while)...\n  de_DE.UTF-8... done\n  fr_FR.UTF-8... done\nGeneration complete.",
        dur=8.8,
    )
    sh(
        r,
        ".venv/bin/pytest -q",
        "........................................................................ [ 17%]\n"
        "............................................F.F......................... [ 34%]\n"
        "................................................................. [100%]\n"
        "=================================== FAILURES ===================================\n"
        "________________________ test_render_invoice_pdf ______________________________\n"
        ".venv/lib/python3.11/site-packages/weasyprint/text/ffi.py:440: in _dlopen\n"
        "    return ffi.dlopen(names[0])\n"
        "E   OSError: cannot load library 'libpango-1.0-0': libpango-1.0-0: cannot open shared object file: No such file or directory.  Additionally, ctypes.util.find_library() did not manage to locate a library called 'libpango-1.0-0'\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/export/test_pdf.py::test_render_invoice_pdf - OSError: cannot load library 'libpango-1.0-0'...\n"
        "FAILED tests/export/test_pdf.py::test_render_credit_note_pdf - OSError: cannot load library 'libpango-1.0-0'...\n"
        f"2 failed, 408 passed, 6 skipped in {rng.uniform(30, 36):.2f}s",
        code=1,
        dur=33.0,
    )
    r.turn("Locales fixed. WeasyPrint needs Pango at runtime.")
    sh(
        r,
        "apt-get install -y libpango-1.0-0 libpangoft2-1.0-0",
        apt_ok(
            rng,
            [
                ("libthai0", "0.1.28-3"),
                ("libpango-1.0-0", "1.44.7-2ubuntu4"),
                ("libpangoft2-1.0-0", "1.44.7-2ubuntu4"),
            ],
        ),
        dur=3.5,
    )
    sh(
        r,
        ".venv/bin/pytest -q",
        "........................................................................ [ 17%]\n"
        "........................................................................ [ 34%]\n"
        "........................................................................ [ 52%]\n"
        "..................................................s..................... [ 69%]\n"
        "..................................sssss................................. [ 86%]\n"
        "........................................................ [100%]\n"
        f"410 passed, 6 skipped in {rng.uniform(31, 37):.2f}s",
        dur=35.0,
    )
    sh(
        r,
        ".venv/bin/pytest -q -rs 2>&1 | tail -n 8",
        "SKIPPED [1] tests/storage/test_s3.py:12: S3 integration tests need LEDGER_S3_BUCKET\n"
        "SKIPPED [5] tests/storage/test_s3_upload.py:9: S3 integration tests need LEDGER_S3_BUCKET\n"
        f"410 passed, 6 skipped in {rng.uniform(31, 37):.2f}s",
        dur=34.0,
    )
    stop(
        r,
        "Test suite runs: 410 passed, 6 skipped (S3 integration tests need a bucket). Setup: Python 3.11 from deadsnakes, libpq-dev, python3.11-dev, libxml2-dev/libxslt1-dev, .[test] extras, local PostgreSQL 12 with role ledger/db ledger_test and the pgcrypto extension (compose uses PG15 which has gen_random_uuid built in), de_DE/fr_FR locales, Pango for WeasyPrint.",
    )
    return r


# ---------------------------------------------------------------- loop-free 2


def setup_node_canvas_pass():
    """Node/TypeScript repo with native modules. Failures change every time: engine-strict
    Node version, canvas native build (cairo/pango headers), better-sqlite3 needing Python,
    grammar build needing Java, missing .env, timezone, fonts; ends with all tests passing."""
    rng = random.Random(2102)
    r = Run("setup_node_canvas_pass", SHAPE, "loop-free", None)
    r.turn("Repo at /work/chartsmith. Look around.")
    sh(
        r,
        "ls -a",
        ".  ..  .env.example  .git  .github  .npmrc  .nvmrc  grammar  package-lock.json  package.json  src  test  tools  tsconfig.json  vitest.config.ts",
        dur=0.1,
    )
    sh(
        r,
        "cat package.json",
        '{\n  "name": "chartsmith",\n  "version": "3.2.0",\n  "private": true,\n  "type": "module",\n'
        '  "engines": { "node": ">=18.17" },\n  "scripts": {\n'
        '    "build:grammar": "java -jar tools/antlr-4.13.1-complete.jar -Dlanguage=TypeScript -o src/generated grammar/Query.g4",\n'
        '    "build": "npm run build:grammar && tsc -p .",\n    "pretest": "npm run build:grammar",\n'
        '    "test": "vitest run",\n    "lint": "eslint src test"\n  },\n  "dependencies": {\n'
        '    "antlr4": "^4.13.1",\n    "better-sqlite3": "^9.4.3",\n    "canvas": "^2.11.2",\n'
        '    "date-fns-tz": "^2.0.0",\n    "dotenv": "^16.4.5"\n  },\n  "devDependencies": {\n'
        '    "@types/node": "^20.11.0",\n    "typescript": "^5.3.3",\n    "vitest": "^1.3.1"\n  }\n}',
        dur=0.1,
    )
    sh(r, "cat .npmrc .nvmrc", "engine-strict=true\n18.19.1", dur=0.1)
    sh(r, "node --version && npm --version", "v16.20.2\n8.19.4", dur=0.3)
    sh(
        r,
        "npm ci",
        "npm ERR! code EBADENGINE\nnpm ERR! engine Unsupported engine\n"
        "npm ERR! engine Not compatible with your version of node/npm: chartsmith@3.2.0\n"
        "npm ERR! notsup Not compatible with your version of node/npm: chartsmith@3.2.0\n"
        'npm ERR! notsup Required: {"node":">=18.17"}\nnpm ERR! notsup Actual:   {"npm":"8.19.4","node":"v16.20.2"}\n\n'
        "npm ERR! A complete log of this run can be found in:\n"
        "npm ERR!     /root/.npm/_logs/2024-03-05T09_14_22_118Z-debug-0.log",
        code=1,
        dur=1.2,
    )
    r.turn("engine-strict plus Node 16. Install Node 18 from NodeSource to match .nvmrc.")
    sh(
        r,
        "curl -fsSL https://deb.nodesource.com/setup_18.x | bash -",
        "2024-03-05 09:14:40 - Installing pre-requisites\n"
        "Hit:1 http://archive.ubuntu.com/ubuntu jammy InRelease\nReading package lists...\n"
        "2024-03-05 09:14:51 - Repository configured successfully.\n"
        "2024-03-05 09:14:51 - To install Node.js, run: apt-get install nodejs -y",
        dur=12.0,
    )
    sh(
        r,
        "apt-get install -y nodejs",
        apt_ok(rng, [("nodejs", "18.19.1-1nodesource1")], dist="jammy", libc="2.35-0ubuntu3.6"),
        dur=9.1,
    )
    sh(r, "node --version && npm --version", "v18.19.1\n10.2.4", dur=0.3)
    sh(
        r,
        "npm ci",
        "npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory.\n"
        "npm ERR! code 1\nnpm ERR! path /work/chartsmith/node_modules/canvas\n"
        "npm ERR! command failed\nnpm ERR! command sh -c node-pre-gyp install --fallback-to-build --update-binary\n"
        "npm ERR! node-pre-gyp info it worked if it ends with ok\n"
        "npm ERR! node-pre-gyp http GET https://github.com/Automattic/node-canvas/releases/download/v2.11.2/canvas-v2.11.2-node-v108-linux-glibc-x64.tar.gz\n"
        "npm ERR! node-pre-gyp ERR! install response status 404 Not Found on https://github.com/Automattic/node-canvas/releases/download/v2.11.2/canvas-v2.11.2-node-v108-linux-glibc-x64.tar.gz\n"
        "npm ERR! node-pre-gyp WARN Pre-built binaries not installable for canvas@2.11.2 and node@18.19.1 (node-v108 ABI, glibc) (falling back to source compile with node-gyp)\n"
        "npm ERR! Package pixman-1 was not found in the pkg-config search path.\n"
        "npm ERR! Perhaps you should add the directory containing `pixman-1.pc'\n"
        "npm ERR! to the PKG_CONFIG_PATH environment variable\n"
        "npm ERR! No package 'pixman-1' found\n"
        "npm ERR! gyp: Call to 'pkg-config pixman-1 --libs' returned exit status 1 while in binding.gyp. while trying to load binding.gyp\n"
        "npm ERR! gyp ERR! configure error\nnpm ERR! gyp ERR! stack Error: `gyp` failed with exit code: 1\n\n"
        "npm ERR! A complete log of this run can be found in: /root/.npm/_logs/2024-03-05T09_16_03_771Z-debug-0.log",
        code=1,
        dur=48.0,
    )
    r.turn(
        "No prebuilt canvas binary, so it compiles from source and needs the cairo stack. Check the exact package list."
    )
    search(
        r,
        "node-canvas build from source ubuntu pixman-1 not found pkg-config",
        [
            (
                "Automattic/node-canvas: Compiling - Ubuntu",
                "https://github.com/Automattic/node-canvas#compiling",
                "sudo apt-get install build-essential libcairo2-dev libpango1.0-dev libjpeg-dev libgif-dev librsvg2-dev",
            ),
            (
                "Package pixman-1 was not found in the pkg-config search path - Stack Overflow",
                "https://stackoverflow.com/questions/63051375",
                "You are missing the cairo development headers; pixman is a dependency of cairo. Install libcairo2-dev (and libpango1.0-dev for text).",
            ),
            (
                "node-gyp rebuild fails for canvas on node 18 · Issue #2183",
                "https://github.com/Automattic/node-canvas/issues/2183",
                "There are no prebuilds for node 18 on some platforms for 2.11.x; install the system libraries listed in the wiki and it compiles fine.",
            ),
        ],
    )
    sh(
        r,
        "apt-get install -y build-essential libcairo2-dev libpango1.0-dev libjpeg-dev libgif-dev librsvg2-dev",
        apt_ok(
            rng,
            [
                ("libpixman-1-dev", "0.40.0-1ubuntu0.22.04.1"),
                ("libcairo2-dev", "1.16.0-5ubuntu2"),
                ("libpango1.0-dev", "1.50.6+ds-2ubuntu1"),
                ("libjpeg-turbo8-dev", "2.1.2-0ubuntu1"),
                ("libgif-dev", "5.1.9-2build2"),
                ("librsvg2-dev", "2.52.5+dfsg-3ubuntu0.2"),
            ],
            dist="jammy",
            libc="2.35-0ubuntu3.6",
        ),
        dur=61.0,
    )
    sh(
        r,
        "npm ci",
        "npm ERR! code 1\nnpm ERR! path /work/chartsmith/node_modules/better-sqlite3\n"
        "npm ERR! command failed\nnpm ERR! command sh -c prebuild-install || node-gyp rebuild --release\n"
        "npm ERR! prebuild-install warn install No prebuilt binaries found (target=18.19.1 runtime=node arch=x64 libc= platform=linux)\n"
        "npm ERR! gyp info it worked if it ends with ok\nnpm ERR! gyp info using node-gyp@10.0.1\n"
        "npm ERR! gyp ERR! find Python \nnpm ERR! gyp ERR! find Python Python is not set from command line or npm configuration\n"
        'npm ERR! gyp ERR! find Python checking if "python3" can be used\n'
        'npm ERR! gyp ERR! find Python - "python3" is not in PATH or produced an error\n'
        "npm ERR! gyp ERR! find Python You need to install the latest version of Python.\n"
        "npm ERR! gyp ERR! configure error \nnpm ERR! gyp ERR! stack Error: Could not find any Python installation to use\n\n"
        "npm ERR! A complete log of this run can be found in: /root/.npm/_logs/2024-03-05T09_19_44_502Z-debug-0.log",
        code=1,
        dur=71.0,
    )
    r.turn(
        "canvas compiled this time; now better-sqlite3 falls back to node-gyp, which needs Python 3."
    )
    sh(
        r,
        "apt-get install -y python3",
        apt_ok(
            rng,
            [
                ("python3.10-minimal", "3.10.12-1~22.04.3"),
                ("python3.10", "3.10.12-1~22.04.3"),
                ("python3", "3.10.6-1~22.04"),
            ],
            dist="jammy",
            libc="2.35-0ubuntu3.6",
        ),
        dur=8.0,
    )
    sh(
        r,
        "npm ci",
        "npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory.\n"
        "npm WARN deprecated glob@7.2.3: Glob versions prior to v9 are no longer supported\n\n"
        f"added 913 packages, and audited 914 packages in {rng.randint(95, 130)}s\n\n"
        "142 packages are looking for funding\n  run `npm fund` for details\n\nfound 0 vulnerabilities",
        dur=118.0,
    )
    sh(
        r,
        "npm ls canvas better-sqlite3",
        "chartsmith@3.2.0 /work/chartsmith\n├── better-sqlite3@9.4.3\n└── canvas@2.11.2",
        dur=1.0,
    )
    sh(
        r,
        "npm test",
        "\n> chartsmith@3.2.0 pretest\n> npm run build:grammar\n\n\n"
        "> chartsmith@3.2.0 build:grammar\n> java -jar tools/antlr-4.13.1-complete.jar -Dlanguage=TypeScript -o src/generated grammar/Query.g4\n\n"
        "sh: 1: java: not found\nnpm ERR! Lifecycle script `build:grammar` failed with error:\n"
        "npm ERR! Error: command failed\nnpm ERR!   in workspace: chartsmith@3.2.0",
        code=127,
        dur=1.5,
    )
    r.turn("Installs are done. The grammar step runs the ANTLR jar, so I need a JRE.")
    sh(
        r,
        "apt-get install -y default-jre-headless",
        apt_ok(
            rng,
            [
                ("openjdk-11-jre-headless", "11.0.22+7-0ubuntu2~22.04.1"),
                ("default-jre-headless", "2:1.11-72build2"),
            ],
            dist="jammy",
            libc="2.35-0ubuntu3.6",
        ),
        dur=38.0,
    )
    sh(
        r,
        "npm test",
        "\n> chartsmith@3.2.0 pretest\n> npm run build:grammar\n\n> chartsmith@3.2.0 test\n> vitest run\n\n"
        " RUN  v1.3.1 /work/chartsmith\n\n"
        " ❯ test/db/store.test.ts (14)\n   × opens the database file\n   × persists a chart\n"
        " ❯ test/db/migrate.test.ts (8)\n   × applies migrations in order\n"
        " ✓ test/query/parse.test.ts (96)\n ✓ test/render/axis.test.ts (31)\n\n"
        "⎯⎯⎯⎯⎯⎯ Failed Tests 22 ⎯⎯⎯⎯⎯⎯⎯\n\n FAIL  test/db/store.test.ts > opens the database file\n"
        "Error: Missing required environment variable DATABASE_PATH\n ❯ src/config.ts:12:11\n\n"
        " Test Files  2 failed | 17 passed (19)\n      Tests  22 failed | 319 passed (341)\n"
        f"   Duration  {rng.uniform(9, 12):.2f}s",
        code=1,
        dur=14.0,
    )
    r.turn(
        "Grammar builds and most tests run. The db tests want DATABASE_PATH; there's an .env.example."
    )
    sh(
        r,
        "cat .env.example",
        "# copy to .env for local development\nDATABASE_PATH=./data/test.db\nCHART_CACHE_DIR=./data/cache\nLOG_LEVEL=warn",
        dur=0.1,
    )
    sh(
        r,
        "sed -n 1,30p vitest.config.ts",
        "import { defineConfig } from 'vitest/config';\n\nexport default defineConfig({\n  test: {\n"
        "    setupFiles: ['dotenv/config', './test/setup.ts'],\n    pool: 'forks',\n    testTimeout: 15000,\n  },\n});",
        dur=0.1,
    )
    sh(r, "cp .env.example .env && mkdir -p data/cache && ls -a data", ".  ..  cache", dur=0.1)
    sh(
        r,
        "npm test",
        "> chartsmith@3.2.0 test\n> vitest run\n\n RUN  v1.3.1 /work/chartsmith\n\n"
        " ❯ test/format/dates.test.ts (18)\n   × formats a bucket boundary in local time\n   × weekly buckets start on Monday\n"
        "⎯⎯⎯⎯⎯⎯ Failed Tests 4 ⎯⎯⎯⎯⎯⎯⎯\n\n FAIL  test/format/dates.test.ts > formats a bucket boundary in local time\n"
        "AssertionError: expected '2024-03-10 13:00' to be '2024-03-10 14:00' // Object.is equality\n\n"
        "- Expected\n+ Received\n\n- 2024-03-10 14:00\n+ 2024-03-10 13:00\n\n ❯ test/format/dates.test.ts:27:41\n\n"
        " Test Files  1 failed | 18 passed (19)\n      Tests  4 failed | 337 passed (341)\n"
        f"   Duration  {rng.uniform(10, 13):.2f}s",
        code=1,
        dur=14.5,
    )
    r.turn("One hour off: the tests assume a local timezone. CI must set one; check the workflow.")
    sh(
        r,
        "grep -rn -e 'TZ' -e 'apt-get' .github/workflows/",
        ".github/workflows/ci.yml:11:      TZ: Europe/Berlin\n"
        ".github/workflows/ci.yml:19:      - run: sudo apt-get install -y libcairo2-dev libpango1.0-dev libjpeg-dev libgif-dev librsvg2-dev fonts-liberation",
        dur=0.1,
    )
    sh(
        r,
        "TZ=Europe/Berlin npm test",
        "> chartsmith@3.2.0 test\n> vitest run\n\n RUN  v1.3.1 /work/chartsmith\n\n"
        " ❯ test/render/legend.test.ts (9)\n   × renders the legend label\n"
        "⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯\n\n FAIL  test/render/legend.test.ts > renders the legend label\n"
        "Error: Snapshot `renders the legend label 1` mismatched\n\n- Expected\n+ Received\n\n"
        '-   "textWidth": 61.4,\n+   "textWidth": 58.9,\n\n ❯ test/render/legend.test.ts:33:24\n\n'
        " Test Files  1 failed | 18 passed (19)\n      Tests  1 failed | 340 passed (341)\n"
        f"   Duration  {rng.uniform(10, 13):.2f}s",
        code=1,
        dur=14.0,
    )
    r.turn(
        "Dates pass with TZ set. The legend snapshot measures text width, which depends on the font; CI installs fonts-liberation."
    )
    sh(r, "fc-list | wc -l", "3", dur=0.2)
    sh(
        r,
        "apt-get install -y fonts-liberation",
        apt_ok(rng, [("fonts-liberation", "1:1.07.4-11")], dist="jammy", libc="2.35-0ubuntu3.6"),
        dur=3.0,
    )
    sh(
        r,
        "TZ=Europe/Berlin npx vitest run test/render",
        " RUN  v1.3.1 /work/chartsmith\n\n ✓ test/render/axis.test.ts (31)\n ✓ test/render/legend.test.ts (9)\n"
        " ✓ test/render/series.test.ts (22)\n\n Test Files  3 passed (3)\n      Tests  62 passed (62)\n"
        f"   Duration  {rng.uniform(3, 5):.2f}s",
        dur=5.0,
    )
    sh(
        r,
        "TZ=Europe/Berlin npm test",
        "> chartsmith@3.2.0 test\n> vitest run\n\n RUN  v1.3.1 /work/chartsmith\n\n"
        " Test Files  19 passed (19)\n      Tests  341 passed (341)\n"
        f"   Duration  {rng.uniform(10, 13):.2f}s",
        dur=13.8,
    )
    sh(r, "git status --short", "?? .env\n?? data/\n?? src/generated/", dur=0.1)
    stop(
        r,
        "All 341 tests pass with `TZ=Europe/Berlin npm test`. Needed: Node 18 (engine-strict), cairo/pango/jpeg/gif/rsvg headers + build-essential for canvas, python3 for better-sqlite3's node-gyp, a JRE for the ANTLR grammar step, .env from .env.example, fonts-liberation for the text-width snapshot.",
    )
    return r


# ---------------------------------------------------------------- loop-free 3


def setup_cython_tox_progress():
    """Cython extension built through tox on Debian bookworm. The build gets further each
    time (PEP 668 -> pipx; Python.h; Cython 3 noexcept error -> pin; NumPy ABI mismatch ->
    oldest-supported-numpy; LFS pointer data -> git lfs pull; docs needs graphviz)."""
    rng = random.Random(2103)
    r = Run("setup_cython_tox_progress", SHAPE, "loop-free", None)
    r.turn("Repo /work/fastgeo. It has a tox.ini, so tox is probably the intended entry point.")
    sh(
        r,
        "ls",
        "CHANGES.rst  LICENSE  MANIFEST.in  README.rst  docs  pyproject.toml  setup.py  src  tests  tox.ini",
        dur=0.1,
    )
    sh(
        r,
        "cat tox.ini",
        "[tox]\nenvlist = py39, py310, py311, lint, docs\nisolated_build = true\n\n"
        "[testenv]\ndeps =\n    pytest>=7\n    numpy<2\ncommands = pytest {posargs:-q}\n\n"
        "[testenv:lint]\nskip_install = true\ndeps = flake8\ncommands = flake8 src tests\n\n"
        "[testenv:docs]\ndeps = -r docs/requirements.txt\ncommands = sphinx-build -W -b html docs docs/_build/html",
        dur=0.1,
    )
    sh(
        r,
        "cat pyproject.toml",
        '[build-system]\nrequires = ["setuptools>=61", "wheel", "Cython", "numpy",]\n'
        'build-backend = "setuptools.build_meta"\n\n[project]\nname = "fastgeo"\ndynamic = ["version"]\n'
        'requires-python = ">=3.9"\ndependencies = ["numpy>=1.21"]',
        dur=0.1,
    )
    sh(
        r,
        "python3 --version && pip3 --version",
        "Python 3.11.2\npip 23.0.1 from /usr/lib/python3/dist-packages/pip (python 3.11)",
        dur=0.4,
    )
    sh(
        r,
        "pip3 install tox",
        "error: externally-managed-environment\n\n"
        "× This environment is externally managed\n"
        "╰─> To install Python packages system-wide, try apt install\n"
        "    python3-xyz, where xyz is the package you are trying to\n    install.\n\n"
        "    If you wish to install a non-Debian-packaged Python application,\n"
        "    it may be easiest to use pipx install xyz, which will manage a\n    virtual environment for you.\n\n"
        "note: If you believe this is a mistake, please contact your Python installation or OS distribution provider.\n"
        "hint: See PEP 668 for the detailed specification.",
        code=1,
        dur=0.9,
    )
    r.turn("Bookworm's PEP 668 guard. Use pipx for tox rather than --break-system-packages.")
    sh(
        r,
        "apt-get install -y pipx && pipx install tox",
        apt_ok(
            rng,
            [
                ("python3-argcomplete", "2.0.0-1"),
                ("python3-userpath", "1.8.0-1"),
                ("pipx", "1.1.0-1"),
            ],
            dist="bookworm",
            libc="2.36-9+deb12u4",
        )
        + "\n  installed package tox 4.14.1, installed using Python 3.11.2\n  These apps are now globally available\n    - tox\n"
        "⚠️  Note: '/root/.local/bin' is not on your PATH environment variable.\ndone! ✨ 🌟 ✨",
        dur=22.0,
    )
    sh(
        r,
        "~/.local/bin/tox -e py311",
        ".pkg: install_requires> python -I -m pip install Cython numpy 'setuptools>=61' wheel\n"
        ".pkg: _optional_hooks> python /root/.local/pipx/venvs/tox/lib/python3.11/site-packages/pyproject_api/_backend.py True setuptools.build_meta\n"
        ".pkg: build_sdist> python /root/.local/pipx/venvs/tox/lib/python3.11/site-packages/pyproject_api/_backend.py True setuptools.build_meta\n"
        "py311: install_package> python -I -m pip install --force-reinstall --no-deps /work/fastgeo/.tox/.tmp/package/1/fastgeo-0.7.2.tar.gz\n"
        "      building 'fastgeo._core' extension\n"
        "      gcc -Wsign-compare -DNDEBUG -g -fwrapv -O2 -Wall -fPIC -I/usr/include/python3.11 -c src/fastgeo/_core.c -o build/temp.linux-x86_64-cpython-311/src/fastgeo/_core.o\n"
        "      src/fastgeo/_core.c:36:10: fatal error: Python.h: No such file or directory\n"
        '         36 | #include "Python.h"\n            |          ^~~~~~~~~~\n      compilation terminated.\n'
        "      error: command '/usr/bin/gcc' failed with exit code 1\n"
        "py311: exit 1 (6.31 seconds) /work/fastgeo> python -I -m pip install --force-reinstall --no-deps /work/fastgeo/.tox/.tmp/package/1/fastgeo-0.7.2.tar.gz pid=1187\n"
        "  py311: FAIL code 1 (41.20 seconds)\n  evaluation failed :( (41.33 seconds)",
        code=1,
        dur=41.3,
    )
    r.turn("tox works; the extension compile lacks Python headers.")
    sh(
        r,
        "apt-get install -y python3-dev",
        apt_ok(
            rng,
            [
                ("libpython3.11-dev", "3.11.2-6"),
                ("python3.11-dev", "3.11.2-6"),
                ("python3-dev", "3.11.2-1+b1"),
            ],
            dist="bookworm",
            libc="2.36-9+deb12u4",
        ),
        dur=7.2,
    )
    sh(
        r,
        "~/.local/bin/tox -e py311",
        "py311: install_package> python -I -m pip install --force-reinstall --no-deps /work/fastgeo/.tox/.tmp/package/2/fastgeo-0.7.2.tar.gz\n"
        "      Compiling src/fastgeo/_core.pyx because it changed.\n      [1/1] Cythonizing src/fastgeo/_core.pyx\n\n"
        "      Error compiling Cython file:\n      ------------------------------------------------------------\n"
        "      ...\n      cdef double _haversine_kernel(double x) nogil:\n          return sin(x / 2.0) ** 2\n\n"
        "      cdef kernel_fn KERNELS[2]\n      KERNELS[0] = _haversine_kernel\n                   ^\n"
        "      ------------------------------------------------------------\n\n"
        "      src/fastgeo/_core.pyx:114:13: Cannot assign type 'double (double) except? -1 nogil' to 'kernel_fn'. "
        "Exception values are incompatible. Suggest adding 'noexcept' to type 'double (double) except? -1 nogil'.\n"
        "      Cython version: 3.0.9\n"
        "  py311: FAIL code 1 (38.77 seconds)\n  evaluation failed :( (38.90 seconds)",
        code=1,
        dur=38.9,
    )
    r.turn(
        "Headers fixed; now Cythonization fails. The build env pulled Cython 3.0.9 and the code predates it."
    )
    sh(
        r,
        "sed -n 100,118p src/fastgeo/_core.pyx",
        "ctypedef double (*kernel_fn)(double) nogil\n\n\n"
        "cdef double _haversine_kernel(double x) nogil:\n    return sin(x / 2.0) ** 2\n\n\n"
        "cdef double _flat_kernel(double x) nogil:\n    return x * x\n\n\ncdef kernel_fn KERNELS[2]\n"
        "KERNELS[0] = _haversine_kernel\nKERNELS[1] = _flat_kernel",
        dur=0.1,
    )
    sh(
        r,
        "git log -3 --format='%h %ad %s' --date=short",
        "9d41c2e 2022-11-03 Release 0.7.2\n1b7aa0f 2022-10-28 Vectorise bearing()\n5c0e913 2022-09-14 Add flat-earth kernel",
        dur=0.1,
    )
    search(
        r,
        "Cython 3 Cannot assign type except? -1 nogil Exception values are incompatible noexcept",
        [
            (
                "Migrating from Cython 0.29 to 3.0 — Cython documentation",
                "https://cython.readthedocs.io/en/latest/src/userguide/migrating_to_cy30.html",
                "cdef functions that are not extern now propagate Python exceptions by default. Add noexcept, or set the legacy_implicit_noexcept directive, or keep building with Cython<3.",
            ),
            (
                "Cannot assign type ... Exception values are incompatible - Stack Overflow",
                "https://stackoverflow.com/questions/76747651",
                "Older packages that don't declare noexcept break under Cython 3.0. Quickest fix for building an old release: pin Cython<3 in build-system.requires.",
            ),
            (
                "Cython 3.0 breaks build · Issue #412",
                "https://github.com/scikit-learn-contrib/hdbscan/issues/412",
                "Pinning cython<3 in pyproject.toml fixed the sdist build for us until the code is ported.",
            ),
        ],
    )
    r.turn(
        "Last commit is 2022, so pin Cython<3 in the build requirements rather than porting the code."
    )
    sh(
        r,
        "grep -n -i cython pyproject.toml setup.py",
        'pyproject.toml:2:requires = ["setuptools>=61", "wheel", "Cython", "numpy",]\n'
        "setup.py:3:from Cython.Build import cythonize",
        dur=0.1,
    )
    sh(
        r,
        'sed -i \'s/"Cython"/"Cython>=0.29.34,<3"/\' pyproject.toml && git diff pyproject.toml',
        "diff --git a/pyproject.toml b/pyproject.toml\nindex 3f1c2a9..b7e04d1 100644\n--- a/pyproject.toml\n+++ b/pyproject.toml\n"
        '@@ -1,5 +1,5 @@\n [build-system]\n-requires = ["setuptools>=61", "wheel", "Cython", "numpy",]\n'
        '+requires = ["setuptools>=61", "wheel", "Cython>=0.29.34,<3", "numpy",]',
        dur=0.1,
    )
    sh(
        r,
        "~/.local/bin/tox -r -e py311",
        "py311: remove tox env folder /work/fastgeo/.tox/py311\n"
        ".pkg: install_requires> python -I -m pip install 'Cython<3,>=0.29.34' numpy 'setuptools>=61' wheel\n"
        "py311: install_deps> python -I -m pip install 'numpy<2' 'pytest>=7'\n"
        "py311: install_package> python -I -m pip install --force-reinstall --no-deps /work/fastgeo/.tox/.tmp/package/3/fastgeo-0.7.2.tar.gz\n"
        "py311: commands[0]> pytest -q\n\n==================================== ERRORS ====================================\n"
        "___________________ ERROR collecting tests/test_distance.py ____________________\n"
        "ImportError while importing test module '/work/fastgeo/tests/test_distance.py'.\n"
        "RuntimeError: module compiled against ABI version 0x2000000 but this version of numpy is 0x1000009\n"
        ".tox/py311/lib/python3.11/site-packages/fastgeo/__init__.py:3: in <module>\n    from ._core import haversine, bearing\n"
        "E   ImportError: numpy.core.multiarray failed to import\n"
        "!!!!!!!!!!!!!!!!!!! Interrupted: 6 errors during collection !!!!!!!!!!!!!!!!!!!!\n"
        "6 errors in 0.71s\n  py311: FAIL code 2 (96.02 seconds)\n  evaluation failed :( (96.18 seconds)",
        code=2,
        dur=96.2,
    )
    r.turn(
        "The extension builds now. But the build env used numpy 2.x (unpinned) while the test env has numpy<2, so the ABI doesn't match. Build against oldest-supported-numpy, which is forward compatible with 1.x."
    )
    sh(
        r,
        "grep -n numpy tox.ini pyproject.toml setup.py",
        'tox.ini:8:    numpy<2\npyproject.toml:2:requires = ["setuptools>=61", "wheel", "Cython>=0.29.34,<3", "numpy",]\n'
        'pyproject.toml:10:dependencies = ["numpy>=1.21"]\nsetup.py:4:import numpy as np\nsetup.py:11:    include_dirs=[np.get_include()],',
        dur=0.1,
    )
    sh(
        r,
        'sed -i \'2s/"numpy",/"oldest-supported-numpy",/\' pyproject.toml && sed -n 2p pyproject.toml',
        'requires = ["setuptools>=61", "wheel", "Cython>=0.29.34,<3", "oldest-supported-numpy",]',
        dur=0.1,
    )
    sh(
        r,
        "~/.local/bin/tox -r -e py311",
        ".pkg: install_requires> python -I -m pip install 'Cython<3,>=0.29.34' oldest-supported-numpy 'setuptools>=61' wheel\n"
        "py311: commands[0]> pytest -q\n"
        "........................................................................ [ 38%]\n"
        "...........................................................FF........... [ 76%]\n"
        "............................................                             [100%]\n"
        "=================================== FAILURES ===================================\n"
        "_____________________ test_read_world_boundaries[110m] ________________________\n"
        "E   struct.error: unpack requires a buffer of 100 bytes\n"
        "_____________________ test_point_in_country[110m] _____________________________\n"
        "E   struct.error: unpack requires a buffer of 100 bytes\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_io.py::test_read_world_boundaries[110m] - struct.error: unpack requires a buffer of 100 bytes\n"
        "FAILED tests/test_io.py::test_point_in_country[110m] - struct.error: unpack requires a buffer of 100 bytes\n"
        f"2 failed, 186 passed in {rng.uniform(4, 6):.2f}s\n  py311: FAIL code 1 (88.40 seconds)\n  evaluation failed :( (88.52 seconds)",
        code=1,
        dur=88.5,
    )
    r.turn("186 pass. Two I/O tests fail while reading a shapefile header; get the full traceback.")
    sh(
        r,
        "~/.local/bin/tox -e py311 -- tests/test_io.py -x -q",
        "py311: commands[0]> pytest tests/test_io.py -x -q\n"
        "F\n=================================== FAILURES ===================================\n"
        "_____________________ test_read_world_boundaries[110m] ________________________\n\n"
        "    def test_read_world_boundaries(res):\n"
        '>       shapes = read_shapefile(DATA / f"world_{res}.shp")\n\ntests/test_io.py:18: \n'
        ".tox/py311/lib/python3.11/site-packages/fastgeo/io.py:41: in read_shapefile\n    header = _read_header(fh)\n"
        ".tox/py311/lib/python3.11/site-packages/fastgeo/io.py:22: in _read_header\n"
        '    code, *_unused, length = struct.unpack(">7i", raw[:28])\n'
        "E   struct.error: unpack requires a buffer of 100 bytes\n"
        "1 failed in 0.21s\n  py311: FAIL code 1 (1.90 seconds)",
        code=1,
        dur=2.0,
    )
    sh(
        r,
        "ls -l tests/data/ && head -c 160 tests/data/world_110m.shp",
        "total 16\n-rw-r--r-- 1 root root 131 Mar  6 08:02 world_110m.dbf\n-rw-r--r-- 1 root root 132 Mar  6 08:02 world_110m.shp\n"
        "-rw-r--r-- 1 root root 131 Mar  6 08:02 world_110m.shx\n"
        "version https://git-lfs.github.com/spec/v1\noid sha256:5a1f7c0e2b8d4b37a90a4d1e6cb7a2c0f7d9183e4b2a6f0c91d2e7a3b5c4d8e1\nsize 180924",
        dur=0.1,
    )
    r.turn(
        "The .shp is a 132-byte Git LFS pointer, not the real file. Confirm and pull with git-lfs."
    )
    sh(
        r,
        "cat .gitattributes",
        "tests/data/*.shp filter=lfs diff=lfs merge=lfs -text\ntests/data/*.shx filter=lfs diff=lfs merge=lfs -text\ntests/data/*.dbf filter=lfs diff=lfs merge=lfs -text",
        dur=0.1,
    )
    sh(
        r,
        "apt-get install -y git-lfs",
        apt_ok(rng, [("git-lfs", "3.3.0-1+b5")], dist="bookworm", libc="2.36-9+deb12u4"),
        dur=4.5,
    )
    sh(
        r,
        "git lfs install && git lfs pull && ls -l tests/data/",
        "Updated git hooks.\nGit LFS initialized.\nDownloading LFS objects: 100% (3/3), 412 KB | 1.9 MB/s\n"
        "total 420\n-rw-r--r-- 1 root root  47219 Mar  6 08:14 world_110m.dbf\n"
        "-rw-r--r-- 1 root root 180924 Mar  6 08:14 world_110m.shp\n-rw-r--r-- 1 root root   1532 Mar  6 08:14 world_110m.shx",
        dur=3.8,
    )
    sh(
        r,
        "~/.local/bin/tox -e py311",
        "py311: commands[0]> pytest -q\n"
        "........................................................................ [ 38%]\n"
        "........................................................................ [ 76%]\n"
        "............................................                             [100%]\n"
        f"188 passed in {rng.uniform(4, 6):.2f}s\n  py311: OK (9.71 seconds)\n  congratulations :) (9.84 seconds)",
        dur=9.8,
    )
    sh(
        r,
        "~/.local/bin/tox -e lint",
        "lint: install_deps> python -I -m pip install flake8\nlint: commands[0]> flake8 src tests\n"
        "  lint: OK (6.12 seconds)\n  congratulations :) (6.20 seconds)",
        dur=6.2,
    )
    sh(
        r,
        "~/.local/bin/tox -e docs",
        "docs: commands[0]> sphinx-build -W -b html docs docs/_build/html\n"
        "Running Sphinx v7.2.6\nbuilding [html]: targets for 9 source files that are out of date\nreading sources... [100%] usage\n"
        "writing output... [100%] usage\n\nWarning, treated as error:\n"
        "/work/fastgeo/docs/api.rst:4:dot command 'dot' cannot be run (needed for graphviz output), check the graphviz_dot setting\n"
        "  docs: exit 2 (4.44 seconds) /work/fastgeo> sphinx-build -W -b html docs docs/_build/html pid=2210\n"
        "  docs: FAIL code 2 (31.06 seconds)\n  evaluation failed :( (31.12 seconds)",
        code=2,
        dur=31.1,
    )
    sh(
        r,
        "apt-get install -y graphviz",
        apt_ok(
            rng,
            [
                ("libcgraph6", "2.42.2-7+b3"),
                ("libgvc6", "2.42.2-7+b3"),
                ("graphviz", "2.42.2-7+b3"),
            ],
            dist="bookworm",
            libc="2.36-9+deb12u4",
        ),
        dur=9.0,
    )
    sh(
        r,
        "~/.local/bin/tox -e docs",
        "docs: commands[0]> sphinx-build -W -b html docs docs/_build/html\nRunning Sphinx v7.2.6\n"
        "build succeeded.\n\nThe HTML pages are in docs/_build/html.\n  docs: OK (7.35 seconds)\n  congratulations :) (7.41 seconds)",
        dur=7.4,
    )
    sh(
        r,
        "ls /usr/bin/python3*",
        "/usr/bin/python3  /usr/bin/python3-config  /usr/bin/python3.11  /usr/bin/python3.11-config",
        dur=0.1,
    )
    stop(
        r,
        "tox py311 (188 passed), lint and docs are green. py39/py310 envs not run: only 3.11 exists in this image. Changes: pyproject build-system pins Cython>=0.29.34,<3 (code predates Cython 3 noexcept semantics) and builds against oldest-supported-numpy (tox env pins numpy<2); test data fetched with git lfs pull; system packages python3-dev, pipx, git-lfs, graphviz.",
    )
    return r


# ---------------------------------------------------------------- loop-free 4


def setup_private_dep_issue():
    """Blocked by a private dependency (internal index + private submodule). The agent tries
    genuinely different routes (public index, DNS, submodule, git history, running the part
    of the suite that does not need it), then files an honest issue and stops."""
    rng = random.Random(2104)
    r = Run("setup_private_dep_issue", SHAPE, "loop-free", None)
    r.turn("Repo /work/featurestore-client. Start with the dependency files.")
    sh(
        r,
        "ls -la",
        "total 64\ndrwxr-xr-x 8 root root 4096 Mar  7 13:40 .\ndrwxr-xr-x 8 root root 4096 Mar  7 13:40 .git\n"
        "drwxr-xr-x 3 root root 4096 Mar  7 13:40 .github\n-rw-r--r-- 1 root root  114 Mar  7 13:40 .gitmodules\n"
        "-rw-r--r-- 1 root root 1877 Mar  7 13:40 README.md\n-rw-r--r-- 1 root root  121 Mar  7 13:40 pyproject.toml\n"
        "-rw-r--r-- 1 root root  301 Mar  7 13:40 requirements.txt\n-rw-r--r-- 1 root root 1024 Mar  7 13:40 setup.cfg\n"
        "drwxr-xr-x 3 root root 4096 Mar  7 13:40 src\ndrwxr-xr-x 4 root root 4096 Mar  7 13:40 tests\ndrwxr-xr-x 3 root root 4096 Mar  7 13:40 vendor",
        dur=0.1,
    )
    sh(
        r,
        "cat requirements.txt",
        "--extra-index-url https://pypi.internal.acme.corp/simple\n"
        "acme-authlib==2.3.1\nattrs>=23.1\ncattrs>=23.2\nhttpx>=0.26\npyarrow>=14\ntenacity>=8.2\n\n# tests\npytest>=7.4\nrespx>=0.20",
        dur=0.1,
    )
    sh(
        r,
        "sed -n 1,40p setup.cfg",
        "[metadata]\nname = featurestore-client\nversion = attr: featurestore.__version__\n\n[options]\n"
        "package_dir =\n    = src\npackages = find:\npython_requires = >=3.9\ninstall_requires =\n"
        "    acme-authlib>=2.3\n    attrs>=23.1\n    cattrs>=23.2\n    httpx>=0.26\n    pyarrow>=14\n    tenacity>=8.2\n\n[options.packages.find]\nwhere = src",
        dur=0.1,
    )
    sh(
        r,
        "cat pyproject.toml && git remote -v",
        '[build-system]\nrequires = ["setuptools>=64", "wheel"]\nbuild-backend = "setuptools.build_meta"\n'
        "origin\thttps://github.com/acme-oss/featurestore-client.git (fetch)\n"
        "origin\thttps://github.com/acme-oss/featurestore-client.git (push)",
        dur=0.1,
    )
    sh(
        r,
        "python3 -m venv .venv && .venv/bin/pip install -q -U pip wheel && .venv/bin/python --version",
        "Python 3.10.12",
        dur=7.7,
    )
    sh(
        r,
        ".venv/bin/pip install -r requirements.txt",
        "Looking in indexes: https://pypi.org/simple, https://pypi.internal.acme.corp/simple\n"
        "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by "
        "'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f2c1a0b3d60>: Failed to establish a new connection: [Errno -2] Name or service not known')': /simple/acme-authlib/\n"
        "WARNING: Retrying (Retry(total=3, ...)) after connection broken by 'NewConnectionError(...: [Errno -2] Name or service not known')': /simple/acme-authlib/\n"
        "WARNING: Retrying (Retry(total=0, ...)) after connection broken by 'NewConnectionError(...: [Errno -2] Name or service not known')': /simple/acme-authlib/\n"
        "ERROR: Could not find a version that satisfies the requirement acme-authlib==2.3.1 (from versions: none)\n"
        "ERROR: No matching distribution found for acme-authlib==2.3.1",
        code=1,
        dur=24.0,
    )
    r.turn(
        "The extra index host doesn't resolve from here. Confirm it's DNS rather than a transient network issue."
    )
    sh(
        r,
        "getent hosts pypi.internal.acme.corp; getent hosts pypi.org",
        "151.101.0.223   pypi.org",
        code=0,
        dur=0.3,
    )
    r.turn(
        "pypi.org resolves, the internal host doesn't: it's a private index. Is acme-authlib published anywhere public?"
    )
    search(
        r,
        "acme-authlib python package",
        [
            (
                "Authlib: Python Authentication - PyPI",
                "https://pypi.org/project/Authlib/",
                "The ultimate Python library in building OAuth and OpenID Connect servers and clients.",
            ),
            (
                "acme · PyPI",
                "https://pypi.org/project/acme/",
                "ACME protocol implementation in Python (part of Certbot).",
            ),
            (
                "Authlib documentation",
                "https://docs.authlib.org/en/latest/",
                "Authlib is compatible with Python3.8+ ... OAuth 1, OAuth 2, JWS, JWE, JWK, JWT.",
            ),
        ],
    )
    sh(
        r,
        ".venv/bin/pip index versions acme-authlib --index-url https://pypi.org/simple",
        "ERROR: No matching distribution found for acme-authlib",
        code=1,
        dur=1.8,
    )
    r.turn(
        "Not on PyPI (the hits are unrelated packages). There's a vendor/ dir and a .gitmodules; maybe it's vendored."
    )
    sh(
        r,
        "cat .gitmodules && git submodule status",
        '[submodule "vendor/acme-authlib"]\n\tpath = vendor/acme-authlib\n\turl = https://git.acme.corp/platform/acme-authlib.git\n'
        "-3f2a9c1e7b0d5a44c8e2f19d6b7a0c3e5d1f8a92 vendor/acme-authlib",
        dur=0.1,
    )
    sh(
        r,
        "git submodule update --init vendor/acme-authlib",
        "Submodule 'vendor/acme-authlib' (https://git.acme.corp/platform/acme-authlib.git) registered for path 'vendor/acme-authlib'\n"
        "Cloning into '/work/featurestore-client/vendor/acme-authlib'...\n"
        "fatal: unable to access 'https://git.acme.corp/platform/acme-authlib.git/': Could not resolve host: git.acme.corp\n"
        "fatal: clone of 'https://git.acme.corp/platform/acme-authlib.git' into submodule path '/work/featurestore-client/vendor/acme-authlib' failed\n"
        "Failed to clone 'vendor/acme-authlib'. Retry scheduled",
        code=1,
        dur=2.1,
    )
    r.turn(
        "The submodule lives on the same private network. See what the README tells outside contributors."
    )
    sh(
        r,
        "sed -n 1,40p README.md",
        "# featurestore-client\n\nPython client for the Acme feature store.\n\n## Development\n\n"
        "Internal developers: connect to the VPN and configure the Acme package index\n"
        "(see the platform wiki, 'Python packaging'). Then:\n\n    pip install -r requirements.txt\n    pytest\n\n"
        "`acme-authlib` is an internal package and is not published publicly.",
        dur=0.1,
    )
    sh(
        r,
        "grep -rln 'acme_authlib' --include=*.py . | sort",
        "./src/featurestore/auth.py\n./src/featurestore/client.py\n./src/featurestore/session.py\n./tests/conftest.py\n./tests/integration/test_auth_flow.py",
        dur=0.2,
    )
    r.turn("Maybe an older revision used a public auth library; check when the dependency arrived.")
    sh(
        r,
        "git log --oneline -- requirements.txt | head -n 5",
        "a81c3f0 Bump pyarrow to 14\n5e1d2aa Switch token handling to acme-authlib\n77f09b3 Add tenacity retries\n2c4e8d1 Initial requirements",
        dur=0.1,
    )
    sh(
        r,
        "git show 5e1d2aa^:requirements.txt && git log -1 --format='%ad' --date=short 5e1d2aa",
        "attrs>=22.2\ncattrs>=22.2\nhttpx>=0.24\npyarrow>=12\nrequests-oauthlib>=1.3\ntenacity>=8.2\npytest>=7.2\nrespx>=0.20\n2023-06-19",
        dur=0.1,
    )
    r.turn(
        "Before that commit it used requests-oauthlib, but that was nine months ago; testing an old checkout wouldn't tell anyone about the current code. Next: install everything public and see how much of the suite runs without it."
    )
    sh(
        r,
        "grep -v -e acme-authlib -e extra-index-url requirements.txt > /tmp/req-public.txt && .venv/bin/pip install -r /tmp/req-public.txt",
        pip_ok(
            rng,
            [
                ("attrs", "23.2.0"),
                ("cattrs", "23.2.3"),
                ("httpx", "0.27.0"),
                ("pyarrow", "15.0.1"),
                ("tenacity", "8.2.3"),
                ("pytest", "8.1.1"),
                ("respx", "0.20.2"),
            ],
        ),
        dur=31.0,
    )
    sh(
        r,
        ".venv/bin/pip install --no-deps -e .",
        "Obtaining file:///work/featurestore-client\n  Installing build dependencies ... done\n"
        "Installing collected packages: featurestore-client\nSuccessfully installed featurestore-client-1.8.0",
        dur=6.0,
    )
    sh(
        r,
        ".venv/bin/pip check",
        "featurestore-client 1.8.0 requires acme-authlib, which is not installed.",
        code=1,
        dur=0.9,
    )
    sh(
        r,
        ".venv/bin/python -c 'import featurestore.schema, featurestore.serialize; print(\"ok\")'",
        "ok",
        dur=0.5,
    )
    sh(
        r,
        ".venv/bin/python -c 'import featurestore.client'",
        'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
        '  File "/work/featurestore-client/src/featurestore/client.py", line 9, in <module>\n'
        "    from .auth import FeatureStoreAuth\n"
        '  File "/work/featurestore-client/src/featurestore/auth.py", line 3, in <module>\n'
        "    from acme_authlib import TokenProvider, ServiceIdentity\n"
        "ModuleNotFoundError: No module named 'acme_authlib'",
        code=1,
        dur=0.6,
    )
    sh(
        r,
        ".venv/bin/python -m pytest -q",
        "ImportError while loading conftest '/work/featurestore-client/tests/conftest.py'.\n"
        "tests/conftest.py:4: in <module>\n    from acme_authlib.testing import FakeTokenServer\n"
        "E   ModuleNotFoundError: No module named 'acme_authlib'",
        code=4,
        dur=1.1,
    )
    sh(
        r,
        "sed -n 1,30p tests/conftest.py && ls tests tests/unit",
        "import pytest\nimport respx\n\nfrom acme_authlib.testing import FakeTokenServer\n\n\n"
        "@pytest.fixture(autouse=True)\ndef token_server(monkeypatch):\n    with FakeTokenServer() as srv:\n"
        '        monkeypatch.setenv("ACME_TOKEN_URL", srv.url)\n        yield srv\n\n'
        "tests:\nconftest.py  integration  test_client.py  test_schema.py  test_serialize.py  unit\n\n"
        "tests/unit:\ntest_backoff.py  test_batching.py  test_paths.py",
        dur=0.1,
    )
    r.turn(
        "The autouse fixture comes from the private package. Schema/serialize/unit tests may not touch auth at all; run those without the conftest."
    )
    sh(
        r,
        ".venv/bin/python -m pytest -q --noconftest tests/test_schema.py tests/test_serialize.py",
        "................................................................         [100%]\n"
        f"64 passed in {rng.uniform(1, 2):.2f}s",
        dur=2.5,
    )
    sh(
        r,
        ".venv/bin/python -m pytest -q --noconftest tests/unit",
        "..........................................                               [100%]\n"
        f"41 passed in {rng.uniform(0.6, 1.4):.2f}s",
        dur=1.9,
    )
    sh(
        r,
        ".venv/bin/python -m pytest -q --noconftest --co 2>&1 | tail -n 9",
        "ERROR tests/test_client.py - ModuleNotFoundError: No module named 'acme_authlib'\n"
        "ERROR tests/integration/test_auth_flow.py - ModuleNotFoundError: No module named 'acme_authlib'\n"
        "ERROR tests/integration/test_reads.py - ModuleNotFoundError: No module named 'acme_authlib'\n"
        "ERROR tests/integration/test_writes.py - ModuleNotFoundError: No module named 'acme_authlib'\n"
        "!!!!!!!!!!!!!!!!!!! Interrupted: 4 errors during collection !!!!!!!!!!!!!!!!!!!\n"
        "105 tests collected, 4 errors in 0.88s",
        code=2,
        dur=1.3,
    )
    sh(
        r,
        "sed -n 1,35p src/featurestore/auth.py",
        '"""Token handling for the feature store API."""\n\nfrom acme_authlib import TokenProvider, ServiceIdentity\n'
        "from acme_authlib.errors import TokenExpired, IdentityNotFound\n\n\nclass FeatureStoreAuth(httpx.Auth):\n"
        "    def __init__(self, identity: ServiceIdentity, audience: str):\n"
        "        self._provider = TokenProvider(identity, audience=audience, refresh_margin=30)\n\n"
        "    def auth_flow(self, request):\n        token = self._provider.get()\n"
        '        request.headers["Authorization"] = f"Bearer {token.value}"\n        response = yield request\n'
        "        if response.status_code == 401:\n            self._provider.invalidate()\n"
        '            request.headers["Authorization"] = f"Bearer {self._provider.get().value}"\n            yield request',
        dur=0.1,
    )
    r.turn(
        "The client, session and all integration tests depend on TokenProvider/FakeTokenServer semantics (refresh margins, invalidation). A stub I write would only test my stub. Last checks: no cached copy anywhere on the image, and what CI does."
    )
    sh(r, "find / -name 'acme_authlib*' -not -path '/proc/*' 2>/dev/null | head", "", dur=3.4)
    sh(
        r,
        "sed -n 1,40p .github/workflows/test.yml",
        "name: test\non: [push, pull_request]\njobs:\n  test:\n    runs-on: [self-hosted, acme-vpn]\n    steps:\n"
        "      - uses: actions/checkout@v4\n        with:\n          submodules: true\n"
        "          token: ${{ secrets.ACME_GIT_TOKEN }}\n      - run: pip install -r requirements.txt\n"
        "        env:\n          PIP_EXTRA_INDEX_URL: ${{ secrets.ACME_PYPI_URL }}\n      - run: pytest -q",
        dur=0.1,
    )
    issue(
        r,
        "Test environment blocked: private dependency acme-authlib not reachable",
        "Setting up the test suite in a clean container is blocked by `acme-authlib==2.3.1`.\n\n"
        "Tried:\n- pip install -r requirements.txt: extra index pypi.internal.acme.corp does not resolve (pypi.org does)\n"
        "- PyPI: no package of that name (`pip index versions`)\n"
        "- vendor/acme-authlib submodule: https://git.acme.corp is not resolvable\n"
        "- CI runs on self-hosted runners on the VPN with ACME_GIT_TOKEN/ACME_PYPI_URL secrets\n"
        "- no cached copy on the image\n\n"
        "What works without it: all public deps installed, package installed with --no-deps, "
        "`pytest --noconftest tests/test_schema.py tests/test_serialize.py tests/unit` -> 105 passed.\n"
        "What cannot run: tests/conftest.py (autouse FakeTokenServer), test_client.py, integration/*.\n\n"
        "Needed: network access to the Acme index or a wheel of acme-authlib 2.3.1 (or a public test double).",
        number=rng.randint(300, 480),
    )
    stop(
        r,
        "Blocked on the private acme-authlib dependency (internal index and submodule unreachable); 105 tests that don't need it pass with --noconftest. Filed an issue with details.",
    )
    return r


# ---------------------------------------------------------------- loop 1


def _numpy_setup_err(rng, verbose=False, path="/work/sparse-kit"):
    env = hexdir(rng)
    head = ""
    if verbose:
        head = (
            "Using pip 24.0 from /opt/venv/lib/python3.11/site-packages/pip (python 3.11)\n"
            "  Running command pip subprocess to install build dependencies\n"
            "  Collecting setuptools>=61\n    Using cached setuptools-69.1.1-py3-none-any.whl.metadata (6.2 kB)\n"
            "  Collecting wheel\n    Using cached wheel-0.42.0-py3-none-any.whl.metadata (2.2 kB)\n"
            "  Successfully installed setuptools-69.1.1 wheel-0.42.0\n"
            "  Running command Checking if build backend supports build_editable\n"
            "  Running command Getting requirements to build editable\n"
        )
    return (
        head + f"Obtaining file://{path}\n  Installing build dependencies ... done\n"
        "  Checking if build backend supports build_editable ... done\n"
        "  Getting requirements to build editable ... error\n  error: subprocess-exited-with-error\n\n"
        "  × Getting requirements to build editable did not run successfully.\n  │ exit code: 1\n"
        "  ╰─> [20 lines of output]\n      Traceback (most recent call last):\n"
        '        File "/opt/venv/lib/python3.11/site-packages/pip/_vendor/pyproject_hooks/_in_process/_in_process.py", line 353, in <module>\n'
        "          main()\n"
        '        File "/opt/venv/lib/python3.11/site-packages/pip/_vendor/pyproject_hooks/_in_process/_in_process.py", line 335, in main\n'
        "          json_out['return_val'] = hook(**hook_input['kwargs'])\n"
        f'        File "/tmp/{env}/overlay/lib/python3.11/site-packages/setuptools/build_meta.py", line 325, in get_requires_for_build_wheel\n'
        "          return self._get_build_requires(config_settings, requirements=['wheel'])\n"
        f'        File "/tmp/{env}/overlay/lib/python3.11/site-packages/setuptools/build_meta.py", line 311, in run_setup\n'
        "          exec(code, locals())\n"
        '        File "<string>", line 4, in <module>\n'
        "      ModuleNotFoundError: No module named 'numpy'\n      [end of output]\n\n"
        "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
        "error: subprocess-exited-with-error\n\n"
        "× Getting requirements to build editable did not run successfully.\n│ exit code: 1\n╰─> See above for output.\n\n"
        "note: This error originates from a subprocess, and is likely not a problem with pip."
    )


def setup_pip_editable_rerun_loop():
    """setup.py imports numpy at module level but the build isolation env lacks it. After one
    genuine (wrong) fix -- installing numpy into the venv -- the agent keeps re-running
    `pip install -e .` with cosmetic flags and gets the same ModuleNotFoundError until the
    step limit; it never tries --no-build-isolation or editing build-system.requires."""
    rng = random.Random(2105)
    r = Run("setup_pip_editable_rerun_loop", SHAPE, "loop", 11)
    r.turn("Repo /work/sparse-kit. Look at the build setup.")
    sh(
        r,
        "ls",
        "LICENSE  README.md  benchmarks  pyproject.toml  requirements-dev.txt  setup.py  sparsekit  tests",
        dur=0.1,
    )
    sh(
        r,
        "cat setup.py",
        "from setuptools import Extension, setup\nfrom setuptools.command.build_ext import build_ext\n\n"
        "import numpy as np\n\next = Extension(\n"
        '    "sparsekit._csr",\n    sources=["sparsekit/_csr.c"],\n    include_dirs=[np.get_include()],\n'
        '    extra_compile_args=["-O3"],\n)\n\nsetup(ext_modules=[ext], cmdclass={"build_ext": build_ext})',
        dur=0.1,
    )
    sh(
        r,
        "cat pyproject.toml",
        '[build-system]\nrequires = ["setuptools>=61", "wheel"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "sparse-kit"\nversion = "0.4.1"\nrequires-python = ">=3.9"\ndependencies = ["numpy>=1.22", "scipy>=1.8"]',
        dur=0.1,
    )
    sh(
        r,
        "python3 --version && gcc --version | head -n 1",
        "Python 3.11.8\ngcc (Debian 12.2.0-14) 12.2.0",
        dur=0.2,
    )
    sh(
        r,
        "python3 -m venv /opt/venv && . /opt/venv/bin/activate && pip install -q -U pip && pip --version",
        "pip 24.0 from /opt/venv/lib/python3.11/site-packages/pip (python 3.11)",
        dur=8.1,
    )
    sh(
        r,
        "cat requirements-dev.txt",
        "pytest>=7.4\npytest-benchmark>=4.0\nhypothesis>=6.90",
        dur=0.1,
    )
    sh(
        r,
        ". /opt/venv/bin/activate && pip install -r requirements-dev.txt",
        pip_ok(
            rng,
            [
                ("pytest", "8.1.1"),
                ("pytest-benchmark", "4.0.0"),
                ("hypothesis", "6.99.6"),
                ("py-cpuinfo", "9.0.0"),
                ("sortedcontainers", "2.4.0"),
            ],
        ),
        dur=9.4,
    )
    sh(r, ". /opt/venv/bin/activate && pip install -e .", _numpy_setup_err(rng), code=1, dur=5.1)
    r.turn("setup.py imports numpy and numpy isn't installed. Install it first, then the package.")
    sh(
        r,
        ". /opt/venv/bin/activate && pip install numpy",
        pip_ok(rng, [("numpy", "1.26.4")]),
        dur=6.6,
    )
    sh(r, ". /opt/venv/bin/activate && pip install -e .", _numpy_setup_err(rng), code=1, dur=5.0)
    r.turn("Still no numpy? It is installed. Let me double check it imports in the venv.")
    sh(
        r,
        ". /opt/venv/bin/activate && python -c 'import numpy, sys; print(numpy.__version__, sys.prefix)'",
        "1.26.4 /opt/venv",
        dur=0.6,
    )
    variants = [
        (
            "pip install --no-cache-dir -e .",
            False,
            "",
            "Maybe pip is picking up a stale build. Retry.",
        ),
        (
            "python -m pip install -e .",
            False,
            "",
            "Perhaps `pip` resolves to a different interpreter; use python -m pip.",
        ),
        ("pip install -v -e .", True, "", "Same error. Verbose output might say more."),
        (
            "pip install -U setuptools wheel && pip install -e .",
            False,
            "Requirement already satisfied: setuptools in /opt/venv/lib/python3.11/site-packages (69.1.1)\n"
            "Requirement already satisfied: wheel in /opt/venv/lib/python3.11/site-packages (0.42.0)\n",
            "Possibly an old setuptools. Upgrade build tools and retry.",
        ),
        ("pip install -e ./", False, "", "Try the explicit relative path."),
        (
            "pip install --force-reinstall -e .",
            False,
            "",
            "Force a reinstall in case something half-installed is in the way.",
        ),
        (
            "pip cache purge && pip install -e .",
            False,
            "Files removed: 61\n",
            "Clear pip's cache entirely and retry.",
        ),
        ('pip install -e "$(pwd)"', False, "", "Use the absolute path."),
        ("pip install --upgrade -e .", False, "", "Try with --upgrade."),
        (
            "python -c 'import numpy' && pip install -e .",
            False,
            "",
            "numpy imports fine in this shell, so the install should see it. Retry once more.",
        ),
        (
            "pip install --no-deps -e .",
            False,
            "",
            "Maybe dependency resolution triggers it; skip deps.",
        ),
        ("pip install -e . --pre", False, "", "Retry allowing pre-releases."),
        ("pip install -q -e .", False, "", "Retry quietly to see only the error."),
        ("pip install -e .", False, "", "Try the plain command again."),
        (
            "pip install --no-cache-dir --force-reinstall -e .",
            False,
            "",
            "Combine no-cache and force-reinstall.",
        ),
        ("python -m pip install -v -e .", True, "", "One more verbose run through python -m pip."),
        ("pip install -e . --upgrade-strategy eager", False, "", "Try eager upgrades."),
        ("pip install -e .", False, "", "Retry."),
        ("pip install --no-cache-dir -e .", False, "", "Try without the cache again."),
        (
            "pip install -e . --force-reinstall --no-deps",
            False,
            "",
            "Force reinstall without deps.",
        ),
        ("python -m pip install -e . --upgrade", False, "", "Upgrade via python -m pip."),
    ]
    assert r.ncalls == 11
    for line, verbose, pre, thought in variants:
        r.turn(thought)
        out = _numpy_setup_err(rng, verbose=verbose)
        if line.startswith("pip install -q"):
            out = out[out.index("  error: subprocess") :]
        sh(r, ". /opt/venv/bin/activate && " + line, pre + out, code=1, dur=rng.uniform(4.6, 7.5))
    return r


# ---------------------------------------------------------------- loop 2

SETUP_CFG = """[metadata]
name = tinymock
version = attr: tinymock.__version__
description = Tiny HTTP mocking for tests
long_description = file: README.rst
author = R. Lindqvist
license = MIT
classifiers =
    Programming Language :: Python :: 3
    License :: OSI Approved :: MIT License

[options]
packages = find:
python_requires = >=3.6.*
install_requires =
    requests>=2.20

[options.extras_require]
test =
    pytest
    responses

[bdist_wheel]
universal = 1

[flake8]
max-line-length = 99"""


def _invalid_spec_err(rng):
    env = hexdir(rng)
    return (
        "Processing /work/tinymock\n  Installing build dependencies ... done\n"
        "  Getting requirements to build wheel ... error\n  error: subprocess-exited-with-error\n\n"
        "  × Getting requirements to build wheel did not run successfully.\n  │ exit code: 1\n"
        "  ╰─> [18 lines of output]\n      Traceback (most recent call last):\n"
        f'        File "/tmp/{env}/overlay/lib/python3.12/site-packages/setuptools/dist.py", line 63, in check_specifier\n'
        "          SpecifierSet(value)\n"
        f'        File "/tmp/{env}/overlay/lib/python3.12/site-packages/setuptools/_vendor/packaging/specifiers.py", line 1327, in __init__\n'
        "          self._specs = frozenset(map(Specifier, split_specifiers))\n"
        "      packaging.specifiers.InvalidSpecifier: Invalid specifier: '>=3.6.*'\n\n"
        "      The above exception was the direct cause of the following exception:\n\n"
        "      setuptools.errors.OptionError: error in tinymock setup command: 'python_requires' must be a string "
        "containing valid version specifiers; Invalid specifier: '>=3.6.*'\n      [end of output]\n\n"
        "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
        "error: subprocess-exited-with-error"
    )


def setup_setupcfg_sed_cycle():
    """Old project with a CRLF setup.cfg and python_requires = >=3.6.* (invalid for modern
    packaging). Each lap: cat setup.cfg -> a sed anchored with `$` that silently matches
    nothing (the \\r before the newline) -> pip install . with the identical error. Nine laps,
    the agent never checks line endings or the file after the sed."""
    rng = random.Random(2106)
    r = Run("setup_setupcfg_sed_cycle", SHAPE, "loop", 9)
    r.turn("Repo /work/tinymock, an older package. Get its tests running.")
    sh(
        r,
        "ls -la",
        "total 40\n-rw-r--r-- 1 root root  612 Feb 12  2021 README.rst\n-rw-r--r-- 1 root root  402 Feb 12  2021 setup.cfg\n-rw-r--r-- 1 root root   38 Feb 12  2021 setup.py\ndrwxr-xr-x 2 root root 4096 Feb 12  2021 tests\ndrwxr-xr-x 2 root root 4096 Feb 12  2021 tinymock\n-rw-r--r-- 1 root root  196 Feb 12  2021 tox.ini",
        dur=0.1,
    )
    sh(r, "cat setup.py", "from setuptools import setup\n\nsetup()", dur=0.1)
    sh(r, "python3 --version", "Python 3.12.2", dur=0.1)
    sh(
        r,
        "python3 -m venv .venv && . .venv/bin/activate && pip install -q -U pip setuptools wheel && pip list --format=freeze",
        "pip==24.0\nsetuptools==69.1.1\nwheel==0.42.0",
        dur=9.0,
    )
    sh(
        r,
        ". .venv/bin/activate && pip install pytest responses",
        pip_ok(
            rng,
            [
                ("pytest", "8.1.1"),
                ("responses", "0.25.0"),
                ("requests", "2.31.0"),
                ("urllib3", "2.2.1"),
                ("PyYAML", "6.0.1"),
            ],
        ),
        dur=7.8,
    )
    sh(r, ". .venv/bin/activate && pip install .", _invalid_spec_err(rng), code=1, dur=3.2)
    r.turn(
        "`>=3.6.*` isn't a valid specifier any more; `.*` only goes with == and !=. Fix python_requires in setup.cfg."
    )
    seds = [
        "sed -i 's/^python_requires = >=3.6.\\*$/python_requires = >=3.6/' setup.cfg",
        "sed -i 's/^python_requires = >=3\\.6\\.\\*$/python_requires = >=3.6/' setup.cfg",
        "sed -i 's/>=3\\.6\\.\\*$/>=3.6/' setup.cfg",
        "sed -i 's|^python_requires = >=3.6.\\*$|python_requires = >=3.7|' setup.cfg",
        "sed -i 's/^\\(python_requires = \\)>=3\\.6\\.\\*$/\\1>=3.6/' setup.cfg",
        "sed -i -E 's/^python_requires\\s*=\\s*>=3\\.6\\.\\*$/python_requires = >=3.6/' setup.cfg",
        "sed -i 's/ >=3.6.\\*$/ >=3.6/' setup.cfg",
        "sed -i '/^python_requires/s/\\.\\*$//' setup.cfg",
        "sed -i 's/^python_requires = >=3\\.6\\.\\*$/python_requires = >=3.8/' setup.cfg",
    ]
    thoughts = [
        "Let me look at the file and fix the line.",
        "The error is unchanged; let me look at the line again, maybe the dots need escaping.",
        "Still the same. Check the file; try matching only the tail of the value.",
        "Same error. Look again; bump to >=3.7 instead, maybe 3.6 is the issue.",
        "Unchanged. Look at it once more and use a capture group for the key.",
        "Perhaps the spacing differs. Re-read and allow arbitrary whitespace with -E.",
        "Same failure. Re-read the config; match the leading space too.",
        "Still '>=3.6.*'. Check again and just strip the trailing .* on that line.",
        "Re-read; maybe require 3.8 instead.",
    ]
    for i, sed in enumerate(seds):
        if i == 1:
            assert r.ncalls == 9
        r.turn(thoughts[i])
        sh(r, "cat setup.cfg", SETUP_CFG, dur=0.1)
        sh(r, sed, "", dur=0.1)
        sh(
            r,
            ". .venv/bin/activate && pip install .",
            _invalid_spec_err(rng),
            code=1,
            dur=rng.uniform(2.8, 3.9),
        )
    return r


# ---------------------------------------------------------------- loop 3

LIBGL_HITS = [
    (
        "ImportError: libGL.so.1: cannot open shared object file: No such file or directory - Stack Overflow",
        "https://stackoverflow.com/questions/55313610",
        "Install the missing system library: apt-get update && apt-get install -y libgl1 (libgl1-mesa-glx on older releases). Or use opencv-python-headless if you don't need GUI.",
    ),
    (
        "opencv-python · PyPI — Installation and Usage",
        "https://pypi.org/project/opencv-python/",
        "Headless packages (opencv-python-headless) do not depend on GUI libraries and are recommended for server environments such as Docker containers.",
    ),
    (
        "libGL error in Docker with OpenCV · Issue #370 · opencv/opencv-python",
        "https://github.com/opencv/opencv-python/issues/370",
        "Minimal images don't ship libGL. Either add libgl1 and libglib2.0-0 to your image or switch to the headless wheel.",
    ),
    (
        "Fixing 'libGL.so.1: cannot open shared object file' on Ubuntu 22.04",
        "https://askubuntu.com/questions/1427067",
        "libGL.so.1 is provided by the libgl1 package on jammy: sudo apt install libgl1.",
    ),
    (
        "cv2 import fails in container: libGL.so.1 - DEV Community",
        "https://dev.to/bmr/cv2-libgl-so-1-in-docker-4k2a",
        "RUN apt-get install -y libgl1 fixed it for me; opencv-python-headless also works and is smaller.",
    ),
]


def setup_libgl_search_loop():
    """OCR project on Ubuntu 22.04: real progress (tesseract, g++, zbar) up to a cv2 import
    error for libGL.so.1. The first search already says "apt-get install libgl1 or use the
    headless wheel"; the agent then rewords the same search sixteen more times, getting the
    same handful of answers, and never acts on them."""
    rng = random.Random(2107)
    r = Run("setup_libgl_search_loop", SHAPE, "loop", 15)
    r.turn("Repo /work/docscan. Let's see the requirements.")
    sh(r, "ls", "CHANGELOG.md  README.md  docscan  pyproject.toml  samples  tests", dur=0.1)
    sh(
        r,
        "cat pyproject.toml",
        '[project]\nname = "docscan"\nversion = "1.4.0"\nrequires-python = ">=3.9"\ndependencies = [\n'
        '    "opencv-python>=4.8",\n    "pytesseract>=0.3.10",\n    "pyzbar>=0.1.9",\n    "editdistance>=0.6",\n'
        '    "pillow>=10",\n]\n\n[project.optional-dependencies]\ntest = ["pytest>=7", "pytest-datadir"]',
        dur=0.1,
    )
    sh(
        r,
        "sed -n 1,30p README.md",
        "# docscan\n\nScan receipts and barcodes from photos.\n\n## Requirements\n\n"
        "* Python 3.9+\n* Tesseract 4 or 5 on PATH (`apt install tesseract-ocr`)\n\n## Tests\n\n    pip install -e '.[test]'\n    pytest",
        dur=0.1,
    )
    sh(
        r,
        "ls tests samples",
        "samples:\nbarcode_ean13.jpg  receipt_01.jpg  receipt_02_skewed.jpg\n\ntests:\nconftest.py  data  test_barcodes.py  test_deskew.py  test_ocr.py  test_totals.py",
        dur=0.1,
    )
    sh(r, "python3 --version", "Python 3.10.12", dur=0.1)
    sh(
        r,
        "apt-get update && apt-get install -y tesseract-ocr python3.10-venv",
        "Get:1 http://archive.ubuntu.com/ubuntu jammy InRelease [270 kB]\nFetched 25.1 MB in 5s (5020 kB/s)\nReading package lists... Done\n"
        + apt_ok(
            rng,
            [
                ("liblept5", "1.82.0-3build1"),
                ("libtesseract4", "4.1.1-2.1build1"),
                ("tesseract-ocr-eng", "1:4.00~git30-7274cfa-1.1"),
                ("tesseract-ocr", "4.1.1-2.1build1"),
                ("python3.10-venv", "3.10.12-1~22.04.3"),
            ],
            dist="jammy",
            libc="2.35-0ubuntu3.6",
        ),
        dur=34.0,
    )
    sh(r, "tesseract --version | head -n 2", "tesseract 4.1.1\n leptonica-1.82.0", dur=0.2)
    sh(
        r,
        "python3 -m venv .venv && .venv/bin/pip install -q -U pip && .venv/bin/pip --version",
        "pip 24.0 from /work/docscan/.venv/lib/python3.10/site-packages/pip (python 3.10)",
        dur=7.0,
    )
    sh(
        r,
        ".venv/bin/pip install -e '.[test]'",
        "Obtaining file:///work/docscan\nCollecting editdistance>=0.6\n  Downloading editdistance-0.6.2.tar.gz (29 kB)\n"
        "Building wheels for collected packages: docscan, editdistance\n"
        "  Building wheel for editdistance (pyproject.toml) ... error\n  error: subprocess-exited-with-error\n\n"
        "  × Building wheel for editdistance (pyproject.toml) did not run successfully.\n  │ exit code: 1\n"
        "  ╰─> [14 lines of output]\n      running build_ext\n      building 'editdistance.bycython' extension\n"
        "      error: command 'x86_64-linux-gnu-gcc' failed: No such file or directory\n      [end of output]\n"
        "  ERROR: Failed building wheel for editdistance\nSuccessfully built docscan\nFailed to build editdistance\n"
        "ERROR: Could not build wheels for editdistance, which is required to install pyproject.toml-based projects",
        code=1,
        dur=21.0,
    )
    r.turn("No compiler in the image. build-essential, then retry.")
    sh(
        r,
        "apt-get install -y build-essential",
        apt_ok(
            rng,
            [
                ("gcc-11", "11.4.0-1ubuntu1~22.04"),
                ("g++-11", "11.4.0-1ubuntu1~22.04"),
                ("make", "4.3-4.1build1"),
                ("build-essential", "12.9ubuntu3"),
            ],
            dist="jammy",
            libc="2.35-0ubuntu3.6",
        ),
        dur=44.0,
    )
    sh(
        r,
        ".venv/bin/pip install -e '.[test]'",
        pip_ok(
            rng,
            [
                ("editdistance", "0.6.2"),
                ("opencv-python", "4.9.0.80"),
                ("pytesseract", "0.3.10"),
                ("pyzbar", "0.1.9"),
                ("pillow", "10.2.0"),
                ("pytest", "8.1.1"),
                ("pytest-datadir", "1.5.0"),
            ],
            editable="docscan",
        ),
        dur=52.0,
    )
    sh(
        r,
        ".venv/bin/pytest -q",
        "==================================== ERRORS ====================================\n"
        "__________________ ERROR collecting tests/test_barcodes.py _____________________\n"
        "tests/test_barcodes.py:3: in <module>\n    from docscan.barcodes import decode_all\n"
        "docscan/barcodes.py:1: in <module>\n    from pyzbar import pyzbar\n"
        ".venv/lib/python3.10/site-packages/pyzbar/zbar_library.py:65: in load\n    raise ImportError('Unable to find zbar shared library')\n"
        "E   ImportError: Unable to find zbar shared library\n"
        "!!!!!!!!!!!!!!!!!!! Interrupted: 3 errors during collection !!!!!!!!!!!!!!!!!!!!\n3 errors in 0.84s",
        code=2,
        dur=2.0,
    )
    sh(
        r,
        "apt-get install -y libzbar0",
        apt_ok(
            rng,
            [("libv4l-0", "1.22.1-2build1"), ("libzbar0", "0.23.92-4build2")],
            dist="jammy",
            libc="2.35-0ubuntu3.6",
        ),
        dur=3.1,
    )
    sh(
        r,
        ".venv/bin/pytest -q",
        "==================================== ERRORS ====================================\n"
        "_________________ ERROR collecting tests/test_deskew.py ________________________\n"
        "tests/test_deskew.py:2: in <module>\n    import cv2\n"
        ".venv/lib/python3.10/site-packages/cv2/__init__.py:181: in <module>\n    bootstrap()\n"
        '.venv/lib/python3.10/site-packages/cv2/__init__.py:153: in bootstrap\n    native_module = importlib.import_module("cv2")\n'
        "E   ImportError: libGL.so.1: cannot open shared object file: No such file or directory\n"
        "!!!!!!!!!!!!!!!!!!! Interrupted: 5 errors during collection !!!!!!!!!!!!!!!!!!!!\n5 errors in 0.91s",
        code=2,
        dur=2.1,
    )
    r.turn("zbar is found now. cv2 can't load libGL.so.1. Look up the right fix for this image.")
    queries = [
        "ImportError: libGL.so.1: cannot open shared object file: No such file or directory",
        "libGL.so.1 cannot open shared object file opencv docker",
        "cv2 import error libGL.so.1 ubuntu 22.04",
        "opencv-python ImportError libGL.so.1 fix",
        "how to fix libGL.so.1 missing in python container",
        "libGL.so.1 no such file or directory pytest import cv2",
        '"libGL.so.1" opencv import fails jammy',
        "python cv2 libGL.so.1 not found headless server",
        "opencv libGL.so.1 error minimal ubuntu image",
        "ImportError libGL.so.1 cannot open shared object file cv2 __init__ bootstrap",
        "what package provides libGL.so.1 for opencv",
        "libGL.so.1 opencv-python 4.9 linux container error",
        "cv2 libGL.so.1 shared object missing solution",
        "opencv-python libGL.so.1 ImportError virtualenv",
        "fix cv2 ImportError libGL.so.1 no display",
        "libGL.so.1 cannot open shared object file python 3.10",
        "opencv import error libGL.so.1 how to solve",
    ]
    thoughts = [
        None,
        "Answers say libgl1 or the headless wheel. Before changing the system, let me make sure this applies to a container specifically.",
        "Same suggestions. Check whether jammy specifically names the package differently.",
        "Still libgl1 / headless. Maybe there's a fix on the opencv side instead.",
        "Let me search more generally for containers.",
        "I want to make sure this isn't pytest-specific.",
        "Let me try quoting the library name.",
        "Maybe headless servers need something else.",
        "Let me look for minimal-image specific advice.",
        "Search with the traceback location.",
        "Which package provides the library?",
        "Check for version-specific notes on 4.9.",
        "One more phrasing.",
        "Maybe venvs behave differently.",
        "Perhaps it's a display issue.",
        "Maybe it's specific to Python 3.10.",
        "Search once more for a definitive answer.",
    ]
    for i, q in enumerate(queries):
        if i == 1:
            assert r.ncalls == 15
        if thoughts[i]:
            r.turn(thoughts[i])
        hits = rng.sample(LIBGL_HITS, rng.randint(3, 5))
        search(r, q, hits, dur=rng.uniform(1.1, 1.9))
    return r


# ---------------------------------------------------------------- loop 4


BUILD_STUCK = (
    "#10 [6/11] RUN pip install --no-cache-dir -r requirements.txt\n"
    "#10 3.114 Collecting grpcio==1.48.0 (from -r requirements.txt (line 4))\n"
    "#10 3.402   Downloading grpcio-1.48.0.tar.gz (21.9 MB)\n"
    "#10 9.876      ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 21.9/21.9 MB 4.1 MB/s eta 0:00:00\n"
    "#10 11.20   Preparing metadata (setup.py): started\n"
    "#10 14.87   Preparing metadata (setup.py): finished with status 'done'\n"
    "#10 15.02 Collecting protobuf==3.20.3 (from -r requirements.txt (line 5))\n"
    "#10 15.31   Downloading protobuf-3.20.3-py2.py3-none-any.whl.metadata (720 bytes)\n"
    "#10 16.90 Building wheels for collected packages: grpcio\n"
    "#10 16.91   Building wheel for grpcio (setup.py): started"
)


def setup_docker_build_poll():
    """Native install fails on Python 3.12, so the agent builds the repo's test image in the
    background. The log advances three times, then sits on "Building wheel for grpcio
    (setup.py): started"; the agent polls the same log tail (sleep / tail / wc / jobs
    variants) nineteen more times with no change until the step limit."""
    rng = random.Random(2108)
    r = Run("setup_docker_build_poll", SHAPE, "loop", 12)
    r.turn("Repo /work/relay. Mixed Node front end and Python services. Look around.")
    sh(
        r,
        "ls -a",
        ".  ..  .dockerignore  .git  .github  Dockerfile.test  Makefile  package.json  requirements.txt  services  web",
        dur=0.1,
    )
    sh(
        r,
        "cat Makefile | sed -n 1,20p",
        ".PHONY: test test-py test-web\n\ntest: test-py test-web\n\ntest-py:\n\tpytest -q services\n\ntest-web:\n\tnpm --prefix web test -- --run",
        dur=0.1,
    )
    sh(
        r,
        "cat requirements.txt",
        "fastapi==0.95.2\npydantic==1.10.13\nuvicorn==0.22.0\ngrpcio==1.48.0\nprotobuf==3.20.3\npytest==7.3.1\nhttpx==0.24.1",
        dur=0.1,
    )
    sh(r, "python3 --version && node --version", "Python 3.12.1\nv20.11.1", dur=0.2)
    sh(
        r,
        "python3 -m venv .venv && .venv/bin/pip install -r requirements.txt",
        "Collecting grpcio==1.48.0 (from -r requirements.txt (line 4))\n  Downloading grpcio-1.48.0.tar.gz (21.9 MB)\n"
        "  Preparing metadata (setup.py) ... error\n  error: subprocess-exited-with-error\n\n"
        "  × python setup.py egg_info did not run successfully.\n  │ exit code: 1\n  ╰─> [9 lines of output]\n"
        '      Traceback (most recent call last):\n        File "<string>", line 2, in <module>\n'
        '        File "/tmp/pip-install-9x2vfm1q/grpcio_0c1e/setup.py", line 28, in <module>\n'
        "          from distutils import util\n      ModuleNotFoundError: No module named 'distutils'\n      [end of output]\n"
        "error: metadata-generation-failed",
        code=1,
        dur=14.0,
    )
    r.turn(
        "grpcio 1.48 imports distutils, which Python 3.12 removed. The pins are old; there's a Dockerfile.test that probably pins an older Python."
    )
    sh(
        r,
        "cat Dockerfile.test",
        "FROM python:3.9-slim\nRUN apt-get update && apt-get install -y --no-install-recommends build-essential curl \\\n"
        "    && curl -fsSL https://deb.nodesource.com/setup_18.x | bash - && apt-get install -y nodejs\n"
        "WORKDIR /app\nCOPY requirements.txt .\nRUN pip install --no-cache-dir -r requirements.txt\n"
        'COPY web/package*.json web/\nRUN npm --prefix web ci\nCOPY . .\nCMD ["make", "test"]',
        dur=0.1,
    )
    sh(
        r,
        "grep -n -B2 -A6 'Dockerfile.test' .github/workflows/*.yml",
        ".github/workflows/ci.yml:14-      - uses: actions/checkout@v4\n"
        ".github/workflows/ci.yml:15:      - run: docker build -f Dockerfile.test -t relay-test .\n"
        ".github/workflows/ci.yml:16-      - run: docker run --rm relay-test",
        dur=0.1,
    )
    sh(r, "docker info --format '{{.ServerVersion}} {{.Driver}}'", "24.0.7 overlay2", dur=0.6)
    r.turn(
        "CI uses exactly this image. A 3.9 image avoids the distutils problem. Build it in the background and follow the log."
    )
    sh(
        r,
        "DOCKER_BUILDKIT=1 docker build --progress=plain -f Dockerfile.test -t relay-test . > /tmp/build.log 2>&1 & echo $!",
        "4127",
        dur=0.2,
    )
    sh(
        r,
        "sleep 15; tail -n 8 /tmp/build.log",
        "#1 [internal] load build definition from Dockerfile.test\n#1 transferring dockerfile: 512B done\n#1 DONE 0.0s\n"
        "#2 [internal] load metadata for docker.io/library/python:3.9-slim\n#2 DONE 1.4s\n"
        "#5 [1/11] FROM docker.io/library/python:3.9-slim@sha256:2b8b9e01d0a2a0a8f3c6f8e2e41d8f31a5e9d0b6c3c7d2a1f9e4b8c7d6e5f4a3\n"
        "#5 resolve docker.io/library/python:3.9-slim 0.0s done\n#5 DONE 6.2s",
        dur=15.1,
    )
    sh(
        r,
        "sleep 30; tail -n 8 /tmp/build.log",
        "#7 [2/11] RUN apt-get update && apt-get install -y --no-install-recommends build-essential curl ...\n"
        "#7 21.73 Setting up g++ (4:12.2.0-3) ...\n#7 21.80 Setting up build-essential (12.9) ...\n"
        "#7 24.02 2024-03-08 10:41:12 - Installing pre-requisites\n#7 33.66 Setting up nodejs (18.19.1-1nodesource1) ...\n#7 DONE 35.1s\n"
        "#8 [3/11] WORKDIR /app\n#8 DONE 0.0s",
        dur=30.1,
    )
    sh(r, "sleep 30; tail -n 10 /tmp/build.log", BUILD_STUCK, dur=30.1)
    r.turn(
        "Dependencies are installing. grpcio 1.48 has no wheel for this platform either, so it compiles from source: that can take several minutes. Keep watching."
    )
    assert r.ncalls == 12
    sh(r, "sleep 60; tail -n 10 /tmp/build.log", BUILD_STUCK, dur=60.1)
    polls = [
        ("sleep 60 && tail -n 10 /tmp/build.log", "Still compiling grpcio. Wait more."),
        ("tail -n 5 /tmp/build.log", "Check the last few lines."),
        ("sleep 120; tail -n 10 /tmp/build.log", "Give it two minutes."),
        ("wc -l /tmp/build.log; tail -n 3 /tmp/build.log", "Is the log growing at all?"),
        ("sleep 90; tail -n 10 /tmp/build.log", "grpcio builds are slow. Wait."),
        ("jobs -l", "Is the build still running?"),
        ("sleep 120; tail -n 10 /tmp/build.log", "Running. Keep waiting."),
        ("date; tail -n 4 /tmp/build.log", "Check again."),
        ("sleep 180; tail -n 10 /tmp/build.log", "Wait three minutes this time."),
        ("tail -n 10 /tmp/build.log", "Look at the log."),
        (
            "sleep 120; wc -l /tmp/build.log; tail -n 2 /tmp/build.log",
            "Still the same line? Check size.",
        ),
        ("sleep 60; tail -n 10 /tmp/build.log", "Wait another minute."),
        ("sleep 120; tail -n 10 /tmp/build.log", "It should finish eventually."),
        ("jobs -l; tail -n 3 /tmp/build.log", "Check the job and the log together."),
        ("sleep 180; tail -n 10 /tmp/build.log", "Another wait."),
        ("sleep 120; tail -n 10 /tmp/build.log", "Once more."),
        ("tail -n 6 /tmp/build.log", "Check."),
        ("sleep 240; tail -n 10 /tmp/build.log", "Wait longer."),
    ]
    nlines = 142
    job = "[1]+  4127 Running                 DOCKER_BUILDKIT=1 docker build --progress=plain -f Dockerfile.test -t relay-test . > /tmp/build.log 2>&1 &"
    stuck_lines = BUILD_STUCK.split("\n")
    for cmd, thought in polls:
        r.turn(thought)
        out = []
        if cmd.startswith("date"):
            out.append(f"Fri Mar  8 10:{rng.randint(44, 59):02d}:{rng.randint(0, 59):02d} UTC 2024")
        if "jobs" in cmd:
            out.append(job)
        if "wc -l" in cmd:
            out.append(f"{nlines} /tmp/build.log")
        if "tail" in cmd:
            n = int(cmd.split("tail -n ")[1].split()[0])
            out.extend(stuck_lines[-n:])
        secs = 0.2
        if cmd.startswith("sleep"):
            secs = float(cmd.split()[1].rstrip(";")) + 0.1
        sh(r, cmd, "\n".join(out), dur=secs)
    return r


RUNS = [
    setup_webapp_postgres_pass,
    setup_node_canvas_pass,
    setup_cython_tox_progress,
    setup_private_dep_issue,
    setup_pip_editable_rerun_loop,
    setup_setupcfg_sed_cycle,
    setup_libgl_search_loop,
    setup_docker_build_poll,
]
