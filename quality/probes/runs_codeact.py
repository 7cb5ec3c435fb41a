"""CodeAct-style coding agent fixing a bug in a Python repository (shape "codeact"): tools
execute_bash(command), str_replace_editor(command=view|str_replace|create|insert|undo_edit,
path, old_str/new_str/view_range/file_text/insert_line) answering the way that editor prints
(`cat -n` snippets, "The file X has been edited...", "No replacement was performed..."), and
finish(message). 30-70 calls per run. Edits are applied to an in-memory copy of each file,
so every view and edit snippet shows the file as it is at that point.

Invented runs, written blind to the detector's rules (no detector code or docs were read and
the detector was never run against them); no data from any real corpus.

Label convention: label is "loop-free" or "loop"; loop_start = 0-based index (tool calls
only) of the first tool call that repeats an attempt that had already come back futile
(the first repetition, not the first attempt); None for loop-free runs. Labels follow
quality/RUBRIC.md."""

import random

from harness import Run

SHAPE = "codeact"


# ---------------------------------------------------------------- helpers


def cat_n(lines, start):
    return "\n".join(f"{start + i:6}\t{ln}" for i, ln in enumerate(lines))


class Workspace:
    """Files of one repository plus the tools that act on them."""

    def __init__(self, run, root, files):
        self.r = run
        self.root = root
        self.files = {f"{root}/{k}": v.strip("\n") + "\n" for k, v in files.items()}
        self.history = {}

    def p(self, rel):
        return f"{self.root}/{rel}"

    def lines(self, rel):
        return self.files[self.p(rel)].rstrip("\n").split("\n")

    def line_of(self, rel, needle, nth=1):
        seen = 0
        for i, ln in enumerate(self.lines(rel), 1):
            if needle in ln:
                seen += 1
                if seen == nth:
                    return i
        raise KeyError(needle)

    def text(self, rel, a, b):
        return "\n".join(self.lines(rel)[a - 1 : b])

    def bash(self, command, out, code=0, dur=0.6):
        out = out.strip("\n")
        tail = f"[The command completed with exit code {code}.]"
        self.r.call(
            "execute_bash",
            {"command": command},
            f"{out}\n{tail}" if out else tail,
            error=code != 0,
            dur=dur,
        )

    def view(self, rel, view_range=None):
        path = self.p(rel)
        args = {"command": "view", "path": path}
        lines = self.lines(rel)
        if view_range is None:
            res = f"Here's the result of running `cat -n` on {path}:\n{cat_n(lines, 1)}\n"
            self.r.call("str_replace_editor", args, res, dur=0.1)
            return
        a, b = view_range
        args["view_range"] = [a, b]
        if b > len(lines):
            res = (
                f"ERROR:\nInvalid `view_range` parameter: [{a}, {b}]. Its second element `{b}` "
                f"should be smaller than the number of lines in the file: `{len(lines)}`."
            )
            self.r.call("str_replace_editor", args, res, error=True, dur=0.1)
            return
        res = f"Here's the result of running `cat -n` on {path}:\n{cat_n(lines[a - 1 : b], a)}\n"
        self.r.call("str_replace_editor", args, res, dur=0.1)

    def view_dir(self, listing):
        res = (
            f"Here's the files and directories up to 2 levels deep in {self.root}, "
            f"excluding hidden items:\n{listing}"
        )
        self.r.call("str_replace_editor", {"command": "view", "path": self.root}, res, dur=0.1)

    def _snippet(self, path, first, last):
        lines = self.files[path].rstrip("\n").split("\n")
        a = max(1, first - 4)
        b = min(len(lines), last + 4)
        return cat_n(lines[a - 1 : b], a)

    def replace(self, rel, old, new):
        path = self.p(rel)
        args = {"command": "str_replace", "path": path, "old_str": old, "new_str": new}
        content = self.files[path]
        n = content.count(old)
        if n == 0:
            res = f"ERROR:\nNo replacement was performed, old_str `{old}` did not appear verbatim in {path}."
            self.r.call("str_replace_editor", args, res, error=True, dur=0.1)
            return False
        if n > 1:
            starts = []
            pos = content.find(old)
            while pos != -1:
                starts.append(content[:pos].count("\n") + 1)
                pos = content.find(old, pos + 1)
            res = (
                f"ERROR:\nNo replacement was performed. Multiple occurrences of old_str `{old}` "
                f"in lines {starts}. Please ensure it is unique."
            )
            self.r.call("str_replace_editor", args, res, error=True, dur=0.1)
            return False
        self.history.setdefault(path, []).append(content)
        first = content[: content.find(old)].count("\n") + 1
        self.files[path] = content.replace(old, new)
        last = first + new.count("\n")
        res = (
            f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet "
            f"of {path}:\n{self._snippet(path, first, last)}\n"
            "Review the changes and make sure they are as expected. Edit the file again if necessary."
        )
        self.r.call("str_replace_editor", args, res, dur=0.1)
        return True

    def create(self, rel, text):
        path = self.p(rel)
        self.files[path] = text.strip("\n") + "\n"
        args = {"command": "create", "path": path, "file_text": text.strip("\n") + "\n"}
        self.r.call("str_replace_editor", args, f"File created successfully at: {path}", dur=0.1)

    def insert(self, rel, after_line, text):
        path = self.p(rel)
        lines = self.lines(rel)
        new = text.strip("\n").split("\n")
        self.history.setdefault(path, []).append(self.files[path])
        lines[after_line:after_line] = new
        self.files[path] = "\n".join(lines) + "\n"
        args = {
            "command": "insert",
            "path": path,
            "insert_line": after_line,
            "new_str": text.strip("\n"),
        }
        res = (
            f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet "
            f"of the edited file:\n{self._snippet(path, after_line + 1, after_line + len(new))}\n"
            "Review the changes and make sure they are as expected (correct indentation, no "
            "duplicate lines, etc). Edit the file again if necessary."
        )
        self.r.call("str_replace_editor", args, res, dur=0.1)

    def sed(self, rel, a, b):
        """Body of `sed -n a,bp rel` for the current file content."""
        return self.text(rel, a, b)

    def finish(self, message):
        self.r.call("finish", {"message": message}, "", dur=0.1)


def pytest_out(rng, body, summary, lo=0.2, hi=1.5):
    t = rng.uniform(lo, hi)
    return f"{body.strip()}\n{summary} in {t:.2f}s" if body.strip() else f"{summary} in {t:.2f}s"


# ---------------------------------------------------------------- loop-free 1

LOADER_PY = '''
"""Load layered YAML configuration with environment interpolation.

Values may reference environment variables as ``${NAME}`` or ``${NAME:-default}``.
Write ``$${`` to get a literal ``${``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

import yaml

__all__ = ["ConfigError", "load", "load_layers", "merge"]

_VAR_RE = re.compile(r"\\$\\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^:}]*))?\\}")
_ESCAPE = "$${"
_SENTINEL = "\\x00LBRACE\\x00"
_MAX_DEPTH = 8


class ConfigError(Exception):
    """Raised for unreadable files, bad YAML or unresolved references."""

    def __init__(self, message: str, *, path: Path | None = None, key: str | None = None):
        where = []
        if path is not None:
            where.append(str(path))
        if key is not None:
            where.append(key)
        super().__init__(f"{': '.join(where)}: {message}" if where else message)
        self.path = path
        self.key = key


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read file ({exc.strerror})", path=path) from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", path=path) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("top level must be a mapping", path=path)
    return data


def merge(base: MutableMapping[str, Any], override: Mapping[str, Any]) -> MutableMapping[str, Any]:
    """Deep-merge ``override`` into ``base`` in place and return ``base``.

    Mappings merge recursively; any other value in ``override`` replaces the one in
    ``base``. A value of ``None`` in ``override`` deletes the key.
    """
    for key, value in override.items():
        if value is None:
            base.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(base.get(key), MutableMapping):
            merge(base[key], value)
        else:
            base[key] = value
    return base


def _lookup(name: str, default: str | None, env: Mapping[str, str], key: str) -> str:
    if name in env:
        return env[name]
    if default is not None:
        return default
    raise ConfigError(f"environment variable {name} is not set", key=key)


def _interpolate_str(value: str, env: Mapping[str, str], key: str) -> str:
    if "${" not in value:
        return value
    value = value.replace(_ESCAPE, _SENTINEL)
    for _ in range(_MAX_DEPTH):
        new = _VAR_RE.sub(lambda m: _lookup(m["name"], m["default"], env, key), value)
        if new == value:
            break
        value = new
    else:
        raise ConfigError("interpolation nested too deeply", key=key)
    return value.replace(_SENTINEL, "${")


def _interpolate(node: Any, env: Mapping[str, str], key: str = "") -> Any:
    if isinstance(node, str):
        return _interpolate_str(node, env, key)
    if isinstance(node, Mapping):
        return {k: _interpolate(v, env, f"{key}.{k}" if key else str(k)) for k, v in node.items()}
    if isinstance(node, list):
        return [_interpolate(v, env, f"{key}[{i}]") for i, v in enumerate(node)]
    return node


def _coerce(node: Any) -> Any:
    """Turn interpolated strings that look like scalars back into scalars."""
    if isinstance(node, dict):
        return {k: _coerce(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_coerce(v) for v in node]
    if not isinstance(node, str):
        return node
    low = node.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if re.fullmatch(r"[+-]?\\d+", node):
        return int(node)
    if re.fullmatch(r"[+-]?\\d+\\.\\d*(e[+-]?\\d+)?", low):
        return float(node)
    return node


def load_layers(
    paths: list[str | Path],
    *,
    env: Mapping[str, str] | None = None,
    missing_ok: bool = False,
    coerce: bool = True,
) -> dict[str, Any]:
    """Load ``paths`` in order, later files overriding earlier ones."""
    env = os.environ if env is None else env
    merged: dict[str, Any] = {}
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            if missing_ok:
                continue
            raise ConfigError("file not found", path=path)
        merge(merged, _read_yaml(path))
    result = _interpolate(merged, env)
    return _coerce(result) if coerce else result


def load(
    path: str | Path,
    *,
    profile: str | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Load ``path`` plus, if given, the ``<stem>.<profile>.yaml`` file next to it."""
    path = Path(path)
    layers: list[str | Path] = [path]
    if profile:
        layers.append(path.with_name(f"{path.stem}.{profile}{path.suffix}"))
    return load_layers(layers, env=env, missing_ok=bool(profile))


def dump_resolved(config: Mapping[str, Any], *, redact: tuple[str, ...] = ("password", "token")) -> str:
    """Render a resolved config as YAML with secret-looking keys masked."""

    def walk(node: Any, key: str = "") -> Any:
        if isinstance(node, Mapping):
            return {k: walk(v, str(k)) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, key) for v in node]
        if any(word in key.lower() for word in redact):
            return "***"
        return node

    return yaml.safe_dump(walk(config), sort_keys=False)
'''

LOADER_TESTS = """
import pytest

from confgrid.loader import ConfigError, _interpolate, load, load_layers, merge


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_merge_nested():
    base = {"db": {"host": "a", "port": 1}, "debug": False}
    merge(base, {"db": {"port": 2}, "debug": True})
    assert base == {"db": {"host": "a", "port": 2}, "debug": True}


def test_merge_none_deletes():
    base = {"a": 1, "b": 2}
    merge(base, {"b": None})
    assert base == {"a": 1}


def test_profile_overrides(tmp_path):
    write(tmp_path, "app.yaml", "db:\\n  host: localhost\\n  port: 5432\\n")
    write(tmp_path, "app.prod.yaml", "db:\\n  host: db.internal\\n")
    cfg = load(tmp_path / "app.yaml", profile="prod", env={})
    assert cfg["db"] == {"host": "db.internal", "port": 5432}


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_layers([tmp_path / "nope.yaml"], env={})


def test_top_level_must_be_mapping(tmp_path):
    write(tmp_path, "app.yaml", "- a\\n- b\\n")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load(tmp_path / "app.yaml", env={})


def test_interpolates_env():
    assert _interpolate({"u": "${USER}"}, {"USER": "ana"}) == {"u": "ana"}


def test_interpolation_default():
    assert _interpolate({"h": "${HOST:-localhost}"}, {}) == {"h": "localhost"}


def test_interpolation_env_beats_default():
    assert _interpolate({"h": "${HOST:-localhost}"}, {"HOST": "db"}) == {"h": "db"}


def test_interpolation_in_lists():
    assert _interpolate({"xs": ["${A}", "b"]}, {"A": "a"}) == {"xs": ["a", "b"]}


def test_interpolation_missing_var_names_key():
    with pytest.raises(ConfigError, match="db.password: environment variable PW is not set"):
        _interpolate({"db": {"password": "${PW}"}}, {})


def test_escape_literal():
    assert _interpolate({"s": "$${HOME}"}, {"HOME": "/root"}) == {"s": "${HOME}"}


def test_nested_reference():
    env = {"A": "${B}", "B": "x"}
    assert _interpolate({"v": "${A}"}, env) == {"v": "x"}


def test_nesting_limit():
    env = {"A": "${A}"}
    with pytest.raises(ConfigError, match="nested too deeply"):
        _interpolate({"v": "${A}"}, env)


def test_coerce_scalars(tmp_path):
    write(tmp_path, "app.yaml", "port: ${PORT}\\ndebug: ${DEBUG}\\n")
    cfg = load(tmp_path / "app.yaml", env={"PORT": "8080", "DEBUG": "yes"})
    assert cfg == {"port": 8080, "debug": True}
"""


def codeact_view_file_ranges():
    """Interpolation default with a ':' inside (a URL) is left unexpanded. The agent pages
    through loader.py at many different ranges, narrows in on the regex, reproduces,
    fixes it, adds a test, and finishes. Every view is a different slice."""
    rng = random.Random(3101)
    r = Run("codeact_view_file_ranges", SHAPE, "loop-free", None)
    w = Workspace(
        r,
        "/workspace/confgrid",
        {"confgrid/loader.py": LOADER_PY, "tests/test_loader.py": LOADER_TESTS},
    )
    r.turn(
        "Issue: `url: ${DB_URL:-postgresql://localhost:5432/app}` comes back literally as the string "
        "`${DB_URL:-postgresql://localhost:5432/app}` when DB_URL is unset. Let me look at the repo."
    )
    w.bash(
        "cd /workspace/confgrid && git status --short && ls",
        "CHANGELOG.md  README.md  confgrid  pyproject.toml  tests",
    )
    w.view_dir(
        "/workspace/confgrid\n/workspace/confgrid/CHANGELOG.md\n/workspace/confgrid/README.md\n"
        "/workspace/confgrid/confgrid\n/workspace/confgrid/confgrid/__init__.py\n"
        "/workspace/confgrid/confgrid/cli.py\n/workspace/confgrid/confgrid/loader.py\n"
        "/workspace/confgrid/confgrid/schema.py\n/workspace/confgrid/pyproject.toml\n"
        "/workspace/confgrid/tests\n/workspace/confgrid/tests/test_cli.py\n"
        "/workspace/confgrid/tests/test_loader.py\n/workspace/confgrid/tests/test_schema.py"
    )
    n = len(w.lines("confgrid/loader.py"))
    r.turn("loader.py is where interpolation lives. Read it from the top.")
    w.view("confgrid/loader.py", [1, 40])
    w.view("confgrid/loader.py", [41, 80])
    r.turn("merge() and the YAML reading look fine. Continue to the interpolation part.")
    w.view("confgrid/loader.py", [81, 120])
    w.view("confgrid/loader.py", [121, 160])
    r.turn("Then the loaders and dump_resolved.")
    w.view("confgrid/loader.py", [161, 220])
    w.view("confgrid/loader.py", [161, n])
    r.turn(
        "That's the whole file. The regex is the most likely culprit; find where it's defined and used."
    )
    w.bash(
        "grep -n '_VAR_RE\\|_ESCAPE\\|_SENTINEL' confgrid/*.py",
        "\n".join(
            f"confgrid/loader.py:{i}:{ln}"
            for i, ln in enumerate(w.lines("confgrid/loader.py"), 1)
            if any(t in ln for t in ("_VAR_RE", "_ESCAPE", "_SENTINEL"))
        ),
    )
    k = w.line_of("confgrid/loader.py", "_VAR_RE = ")
    w.view("confgrid/loader.py", [k - 1, k + 3])
    r.turn(
        "`(?P<default>[^:}]*)`: the default may not contain ':'. So `${DB_URL:-postgresql://...}` "
        "never matches and the text is left alone. Check _interpolate_str to be sure nothing else rewrites it."
    )
    s = w.line_of("confgrid/loader.py", "def _interpolate_str")
    w.view("confgrid/loader.py", [s, s + 13])
    w.bash(
        "grep -n 'interpolat\\|default' tests/test_loader.py",
        "\n".join(
            f"{i}:{ln}"
            for i, ln in enumerate(w.lines("tests/test_loader.py"), 1)
            if "interpolat" in ln or "default" in ln
        ),
    )
    t = w.line_of("tests/test_loader.py", "def test_interpolation_default")
    w.view("tests/test_loader.py", [t, t + 6])
    r.turn("No test has a ':' in the default. Reproduce.")
    w.create(
        "repro.py",
        "from confgrid.loader import _interpolate\n\n"
        'print(_interpolate({"url": "${DB_URL:-postgresql://localhost:5432/app}"}, {}))\n'
        'print(_interpolate({"t": "${TIMEOUT:-30}"}, {}))\n'
        'print(_interpolate({"url": "${DB_URL:-postgresql://localhost:5432/app}"}, {"DB_URL": "sqlite://"}))\n',
    )
    w.bash(
        "python repro.py",
        "{'url': '${DB_URL:-postgresql://localhost:5432/app}'}\n{'t': '30'}\n"
        "{'url': '${DB_URL:-postgresql://localhost:5432/app}'}",
    )
    r.turn(
        "Confirmed; even when DB_URL is set it isn't substituted. Before changing the class, check how nested references rely on it: a default like `${B}` inside the default would contain '}'."
    )
    c = w.line_of("confgrid/loader.py", "for _ in range(_MAX_DEPTH)")
    w.view("confgrid/loader.py", [c - 2, c + 8])
    w.bash(
        "grep -rn 'load_layers\\|_interpolate' confgrid/cli.py confgrid/schema.py",
        "confgrid/cli.py:9:from .loader import ConfigError, dump_resolved, load_layers\n"
        "confgrid/cli.py:31:        cfg = load_layers(args.files, missing_ok=args.missing_ok)",
    )
    r.turn(
        "Inner references are resolved in later passes, and `[^}]*` stops at the first '}', so nesting in defaults already wasn't supported. Allow ':' in defaults."
    )
    w.replace(
        "confgrid/loader.py",
        "(?::-(?P<default>[^:}]*))?",
        "(?::-(?P<default>[^}]*))?",
    )
    w.bash(
        "python repro.py",
        "{'url': 'postgresql://localhost:5432/app'}\n{'t': '30'}\n{'url': 'sqlite://'}",
    )
    co = w.line_of("confgrid/loader.py", "def _coerce")
    w.view("confgrid/loader.py", [co, co + 18])
    r.turn("_coerce won't touch a URL string. Check the end-to-end path through load() too.")
    w.bash(
        "cd /tmp && printf 'db:\\n  url: ${DB_URL:-postgresql://localhost:5432/app}\\n  pool: ${POOL:-5}\\n' > app.yaml && "
        "python -c \"from confgrid.loader import load; print(load('app.yaml', env={}))\"",
        "{'db': {'url': 'postgresql://localhost:5432/app', 'pool': 5}}",
    )
    e = w.line_of("confgrid/loader.py", "value = value.replace(_ESCAPE, _SENTINEL)")
    w.view("confgrid/loader.py", [e - 3, e + 1])
    w.bash(
        "python -m pytest tests/test_loader.py -q",
        pytest_out(
            rng,
            "..............                                                           [100%]",
            "14 passed",
        ),
    )
    last = len(w.lines("tests/test_loader.py"))
    w.view("tests/test_loader.py", [last - 12, last])
    r.turn("Add a regression test for a URL default and for a set variable with such a default.")
    w.insert(
        "tests/test_loader.py",
        last,
        "\n\ndef test_interpolation_default_with_colons():\n"
        '    v = "${DB_URL:-postgresql://localhost:5432/app}"\n'
        '    assert _interpolate({"u": v}, {}) == {"u": "postgresql://localhost:5432/app"}\n'
        '    assert _interpolate({"u": v}, {"DB_URL": "sqlite://"}) == {"u": "sqlite://"}',
    )
    w.bash(
        "python -m pytest tests/test_loader.py -q",
        pytest_out(
            rng,
            "...............                                                          [100%]",
            "15 passed",
        ),
    )
    w.bash(
        "python -m pytest -q",
        pytest_out(
            rng,
            "........................................................................ [ 63%]\n"
            "..........................................                               [100%]",
            "114 passed",
            1.0,
            2.5,
        ),
    )
    r.turn("The module docstring documents the syntax; mention that defaults may contain ':'.")
    w.view("confgrid/loader.py", [1, 6])
    w.replace(
        "confgrid/loader.py",
        "Values may reference environment variables as ``${NAME}`` or ``${NAME:-default}``.",
        "Values may reference environment variables as ``${NAME}`` or ``${NAME:-default}``;\n"
        "the default runs to the first ``}`` and may contain ``:`` (e.g. URLs).",
    )
    w.bash(
        "rm repro.py && git diff --stat",
        " confgrid/loader.py    | 5 +++--\n tests/test_loader.py  | 6 ++++++\n 2 files changed, 9 insertions(+), 2 deletions(-)",
    )
    w.finish(
        "Fixed ${NAME:-default} when the default contains ':' (the default group excluded ':'). "
        "Added a regression test; full suite passes (115 tests)."
    )
    return r


# ---------------------------------------------------------------- loop-free 2

PARSE_PY = '''
"""ISO 8601 durations <-> datetime.timedelta."""

import re
from datetime import timedelta

_PATTERN = re.compile(
    r"^P"
    r"(?:(?P<days>\\d+)D)?"
    r"(?:T"
    r"(?:(?P<hours>\\d+)H)?"
    r"(?:(?P<minutes>\\d+)M)?"
    r"(?:(?P<seconds>\\d+)S)?"
    r")?$"
)


def parse_duration(text: str) -> timedelta:
    """Parse an ISO 8601 duration such as ``P3DT4H`` into a timedelta."""
    m = _PATTERN.match(text)
    if not m or text in ("P", "PT") or text.endswith("T"):
        raise ValueError(f"invalid ISO 8601 duration: {text!r}")
    parts = {k: int(v) for k, v in m.groupdict().items() if v is not None}
    return timedelta(**parts)


def format_duration(td: timedelta) -> str:
    """Format a timedelta as an ISO 8601 duration (days, hours, minutes, seconds)."""
    total = int(td.total_seconds())
    days, rem = divmod(total, 86400)
    hours, rem = divmod(rem, 3600)
    minutes, seconds = divmod(rem, 60)
    out = "P"
    if days:
        out += f"{days}D"
    time = ""
    if hours:
        time += f"{hours}H"
    if minutes:
        time += f"{minutes}M"
    if seconds or not (days or time):
        time += f"{seconds}S"
    if time:
        out += "T" + time
    return out
'''


def codeact_edit_test_new_failures():
    """Add weeks, fractional seconds and a sign to an ISO 8601 duration parser. Seven edits,
    each followed by a test run whose failure is new (different tests, different errors),
    until everything passes."""
    rng = random.Random(3102)
    r = Run("codeact_edit_test_new_failures", SHAPE, "loop-free", None)
    w = Workspace(r, "/workspace/isodur", {"isodur/parse.py": PARSE_PY})
    r.turn(
        "Task: support `P2W`, fractional seconds (`PT0.5S`, `PT1,25S`) and a leading sign (`-P1D`) in parse_duration, with format_duration round-tripping. Tests were added in tests/test_parse.py. Run them first."
    )
    w.bash(
        "cd /workspace/isodur && python -m pytest tests/test_parse.py -q",
        pytest_out(
            rng,
            "....FFFFFFF....                                                          [100%]\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_parse.py::test_weeks - ValueError: invalid ISO 8601 duration: 'P2W'\n"
            "FAILED tests/test_parse.py::test_weeks_cannot_combine - Failed: DID NOT RAISE <class 'ValueError'>\n"
            "FAILED tests/test_parse.py::test_fractional_seconds[PT0.5S-0.5] - ValueError: invalid ISO 8601 duration: 'PT0.5S'\n"
            "FAILED tests/test_parse.py::test_fractional_seconds[PT1,25S-1.25] - ValueError: invalid ISO 8601 duration: 'PT1,25S'\n"
            "FAILED tests/test_parse.py::test_roundtrip_fractional - ValueError: invalid ISO 8601 duration: 'PT1.5S'\n"
            "FAILED tests/test_parse.py::test_negative - ValueError: invalid ISO 8601 duration: '-P1D'\n"
            "FAILED tests/test_parse.py::test_negative_roundtrip - ValueError: invalid ISO 8601 duration: '-PT90M'",
            "7 failed, 8 passed",
        ),
        code=1,
    )
    w.view("isodur/parse.py")
    w.bash(
        "sed -n 1,80p tests/test_parse.py",
        "import pytest\nfrom datetime import timedelta\n\nfrom isodur.parse import format_duration, parse_duration\n\n\n"
        '@pytest.mark.parametrize("text,expected", [\n    ("P3D", timedelta(days=3)),\n    ("PT4H", timedelta(hours=4)),\n'
        '    ("P1DT2H3M4S", timedelta(days=1, hours=2, minutes=3, seconds=4)),\n    ("PT0S", timedelta(0)),\n])\n'
        "def test_basic(text, expected):\n    assert parse_duration(text) == expected\n\n\n"
        '@pytest.mark.parametrize("bad", ["P", "PT", "P1DT", "1D"])\ndef test_invalid(bad):\n'
        "    with pytest.raises(ValueError):\n        parse_duration(bad)\n\n\n"
        'def test_weeks():\n    assert parse_duration("P2W") == timedelta(weeks=2)\n\n\n'
        "def test_weeks_cannot_combine():\n    # ISO 8601: the week form stands alone\n"
        '    with pytest.raises(ValueError):\n        parse_duration("P1W2D")\n\n\n'
        '@pytest.mark.parametrize("text,secs", [("PT0.5S", 0.5), ("PT1,25S", 1.25)])\n'
        "def test_fractional_seconds(text, secs):\n    assert parse_duration(text) == timedelta(seconds=secs)\n\n\n"
        "def test_roundtrip_fractional():\n    td = timedelta(seconds=1.5)\n"
        '    assert format_duration(td) == "PT1.5S"\n    assert parse_duration(format_duration(td)) == td\n\n\n'
        'def test_negative():\n    assert parse_duration("-P1D") == -timedelta(days=1)\n\n\n'
        'def test_negative_roundtrip():\n    td = parse_duration("-PT90M")\n    assert td == -timedelta(minutes=90)\n'
        '    assert format_duration(td) == "-PT1H30M"',
    )
    w.bash(
        "grep -rn 'parse_duration\\|format_duration' --include=*.py . | grep -v '^./tests'",
        "./isodur/__init__.py:1:from .parse import format_duration, parse_duration\n"
        "./isodur/parse.py:17:def parse_duration(text: str) -> timedelta:\n"
        "./isodur/parse.py:26:def format_duration(td: timedelta) -> str:\n"
        "./isodur/cli.py:12:    td = parse_duration(args.duration)",
    )
    r.turn("Start with weeks: add a W group before days.")
    w.replace(
        "isodur/parse.py",
        '    r"^P"\n    r"(?:(?P<days>',
        '    r"^P"\n    r"(?:(?P<weeks>\\d+)W)?"\n    r"(?:(?P<days>',
    )
    w.bash(
        "python -m pytest tests/test_parse.py -q",
        pytest_out(
            rng,
            "....F..FFFFFF....                                                        [100%]\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_parse.py::test_weeks_cannot_combine - Failed: DID NOT RAISE <class 'ValueError'>\n"
            "FAILED tests/test_parse.py::test_fractional_seconds[PT0.5S-0.5] - ValueError: invalid ISO 8601 duration: 'PT0.5S'\n"
            "FAILED tests/test_parse.py::test_fractional_seconds[PT1,25S-1.25] - ValueError: invalid ISO 8601 duration: 'PT1,25S'\n"
            "FAILED tests/test_parse.py::test_roundtrip_fractional - ValueError: invalid ISO 8601 duration: 'PT1.5S'\n"
            "FAILED tests/test_parse.py::test_negative - ValueError: invalid ISO 8601 duration: '-P1D'\n"
            "FAILED tests/test_parse.py::test_negative_roundtrip - ValueError: invalid ISO 8601 duration: '-PT90M'",
            "6 failed, 10 passed",
        ),
        code=1,
    )
    r.turn(
        "test_weeks passes. Week form must stand alone: reject W combined with any other component."
    )
    w.replace(
        "isodur/parse.py",
        "    parts = {k: int(v) for k, v in m.groupdict().items() if v is not None}\n",
        "    parts = {k: int(v) for k, v in m.groupdict().items() if v is not None}\n"
        '    if "weeks" in parts and len(parts) > 1:\n'
        '        raise ValueError(f"week durations cannot be combined with other units: {text!r}")\n',
    )
    w.bash(
        "python -m pytest tests/test_parse.py -q",
        pytest_out(
            rng,
            ".......FFFFF....                                                         [100%]\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_parse.py::test_fractional_seconds[PT0.5S-0.5] - ValueError: invalid ISO 8601 duration: 'PT0.5S'\n"
            "FAILED tests/test_parse.py::test_fractional_seconds[PT1,25S-1.25] - ValueError: invalid ISO 8601 duration: 'PT1,25S'\n"
            "FAILED tests/test_parse.py::test_roundtrip_fractional - ValueError: invalid ISO 8601 duration: 'PT1.5S'\n"
            "FAILED tests/test_parse.py::test_negative - ValueError: invalid ISO 8601 duration: '-P1D'\n"
            "FAILED tests/test_parse.py::test_negative_roundtrip - ValueError: invalid ISO 8601 duration: '-PT90M'",
            "5 failed, 11 passed",
        ),
        code=1,
    )
    r.turn("Weeks done. Fractional seconds: allow a '.' or ',' decimal part in the seconds group.")
    w.view("isodur/parse.py", [6, 16])
    w.replace(
        "isodur/parse.py",
        '    r"(?:(?P<seconds>\\d+)S)?"',
        '    r"(?:(?P<seconds>\\d+(?:[.,]\\d+)?)S)?"',
    )
    w.bash(
        "python -m pytest tests/test_parse.py -q -x",
        pytest_out(
            rng,
            ".......F\n=================================== FAILURES ===================================\n"
            "_____________________ test_fractional_seconds[PT0.5S-0.5] _____________________\n\n"
            "    def parse_duration(text: str) -> timedelta:\n"
            "        ...\n>       parts = {k: int(v) for k, v in m.groupdict().items() if v is not None}\n"
            "E       ValueError: invalid literal for int() with base 10: '0.5'\n\n"
            "isodur/parse.py:23: ValueError\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_parse.py::test_fractional_seconds[PT0.5S-0.5] - ValueError: invalid literal for int() with base 10: '0.5'\n"
            "!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!",
            "1 failed, 7 passed",
        ),
        code=1,
    )
    r.turn(
        "The regex matches now; the int() conversion chokes. Seconds need float with ',' normalised."
    )
    w.replace(
        "isodur/parse.py",
        "    parts = {k: int(v) for k, v in m.groupdict().items() if v is not None}\n",
        "    parts = {}\n"
        "    for k, v in m.groupdict().items():\n"
        "        if v is None:\n"
        "            continue\n"
        '        parts[k] = float(v.replace(",", ".")) if k == "seconds" else int(v)\n',
    )
    w.bash(
        "python -m pytest tests/test_parse.py -q",
        pytest_out(
            rng,
            ".........F.FF....                                                        [100%]\n"
            "=================================== FAILURES ===================================\n"
            "__________________________ test_roundtrip_fractional ___________________________\n\n"
            "    def test_roundtrip_fractional():\n        td = timedelta(seconds=1.5)\n"
            '>       assert format_duration(td) == "PT1.5S"\n'
            "E       AssertionError: assert 'PT1S' == 'PT1.5S'\n\n"
            "tests/test_parse.py:44: AssertionError\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_parse.py::test_roundtrip_fractional - AssertionError: assert 'PT1S' == 'PT1.5S'\n"
            "FAILED tests/test_parse.py::test_negative - ValueError: invalid ISO 8601 duration: '-P1D'\n"
            "FAILED tests/test_parse.py::test_negative_roundtrip - ValueError: invalid ISO 8601 duration: '-PT90M'",
            "3 failed, 13 passed",
        ),
        code=1,
    )
    w.bash(
        "python -c \"from isodur.parse import parse_duration as p; print(repr(p('PT1,25S')), repr(p('PT0.5S')))\"",
        "datetime.timedelta(seconds=1, microseconds=250000) datetime.timedelta(microseconds=500000)",
    )
    r.turn("Parsing fractions works. format_duration truncates to int; keep the microseconds.")
    f = w.line_of("isodur/parse.py", "def format_duration")
    w.view("isodur/parse.py", [f, f + 8])
    w.replace(
        "isodur/parse.py",
        "    total = int(td.total_seconds())\n    days, rem = divmod(total, 86400)\n",
        "    total = int(td.total_seconds())\n    micros = td.microseconds\n    days, rem = divmod(total, 86400)\n",
    )
    w.replace(
        "isodur/parse.py",
        '    if seconds or not (days or time):\n        time += f"{seconds}S"\n',
        "    if micros:\n"
        '        frac = f"{micros:06d}".rstrip("0")\n'
        '        time += f"{seconds}.{frac}S"\n'
        "    elif seconds or not (days or time):\n"
        '        time += f"{seconds}S"\n',
    )
    w.bash(
        "python -m pytest tests/test_parse.py -q",
        pytest_out(
            rng,
            "...........FF....                                                        [100%]\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_parse.py::test_negative - ValueError: invalid ISO 8601 duration: '-P1D'\n"
            "FAILED tests/test_parse.py::test_negative_roundtrip - ValueError: invalid ISO 8601 duration: '-PT90M'",
            "2 failed, 15 passed",
        ),
        code=1,
    )
    r.turn("Only the sign is left. Accept an optional leading +/- and negate the result.")
    w.replace("isodur/parse.py", '    r"^P"\n', '    r"^(?P<sign>[-+])?P"\n')
    w.replace(
        "isodur/parse.py",
        "        if v is None:\n            continue\n",
        '        if v is None or k == "sign":\n            continue\n',
    )
    w.replace(
        "isodur/parse.py",
        "    return timedelta(**parts)\n",
        '    td = timedelta(**parts)\n    return -td if m["sign"] == "-" else td\n',
    )
    w.bash(
        "python -m pytest tests/test_parse.py -q",
        pytest_out(
            rng,
            "............F....                                                        [100%]\n"
            "=================================== FAILURES ===================================\n"
            "___________________________ test_negative_roundtrip ____________________________\n\n"
            "    def test_negative_roundtrip():\n"
            '        td = parse_duration("-PT90M")\n        assert td == -timedelta(minutes=90)\n'
            '>       assert format_duration(td) == "-PT1H30M"\n'
            "E       AssertionError: assert 'P-1DT22H30M' == '-PT1H30M'\n\n"
            "tests/test_parse.py:55: AssertionError\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_parse.py::test_negative_roundtrip - AssertionError: assert 'P-1DT22H30M' == '-PT1H30M'",
            "1 failed, 16 passed",
        ),
        code=1,
    )
    r.turn(
        "Parsing negatives works; formatting a negative timedelta goes through divmod on a negative total and produces P-1DT22H30M. Format abs(td) and prefix '-'."
    )
    w.replace(
        "isodur/parse.py",
        '    """Format a timedelta as an ISO 8601 duration (days, hours, minutes, seconds)."""\n',
        '    """Format a timedelta as an ISO 8601 duration (days, hours, minutes, seconds)."""\n'
        "    if td < timedelta(0):\n"
        '        return "-" + format_duration(-td)\n',
    )
    w.bash(
        "python -m pytest tests/test_parse.py -q",
        pytest_out(
            rng,
            ".................                                                        [100%]",
            "17 passed",
        ),
    )
    w.bash(
        "python -m pytest -q && python -m flake8 isodur",
        pytest_out(
            rng,
            "........................................................                 [100%]",
            "56 passed",
            0.6,
            1.8,
        ),
    )
    w.view("isodur/parse.py", [1, 30])
    w.view("isodur/parse.py", [31, len(w.lines("isodur/parse.py"))])
    w.bash(
        "python -m isodur.cli P2W && python -m isodur.cli -- -PT1H30M",
        "P2W = 14 days, 0:00:00 (1209600.0 s)\n-PT1H30M = -1 day, 22:30:00 (-5400.0 s)",
    )
    w.bash(
        "git diff --stat",
        " isodur/parse.py | 27 +++++++++++++++++++++------\n 1 file changed, 21 insertions(+), 6 deletions(-)",
    )
    w.finish(
        "parse_duration now accepts PnW (standalone only), fractional seconds with '.' or ',', and a leading sign; format_duration keeps microseconds and formats negatives as -P... . All 56 tests pass."
    )
    return r


# ---------------------------------------------------------------- loop-free 3

RETRY_PY = '''
"""Retry policies for webhook delivery."""

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 8
    base_delay: float = 2.0
    max_delay: float = 900.0
    jitter: float = 0.2

    def should_retry(self, attempt: int, status: int | None) -> bool:
        if attempt >= self.max_attempts:
            return False
        return status is None or status == 429 or status >= 500

    def next_delay(self, attempt: int) -> float:
        delay = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        spread = delay * self.jitter
        return max(0.0, delay + random.uniform(-spread, spread))
'''

MODELS_PY = '''
"""Data types shared by the dispatcher and the transport."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Endpoint:
    url: str
    secret: str
    timeout: float = 10.0


@dataclass
class DeliveryResult:
    endpoint: Endpoint
    attempt: int
    status: int | None
    elapsed: float
    error: str | None = None
    body_excerpt: str = ""

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


@dataclass
class Delivery:
    event_id: str
    payload: bytes
    endpoint: Endpoint
    results: list[DeliveryResult] = field(default_factory=list)
'''

TRANSPORT_PY = '''
"""HTTP transport: sign and POST one delivery attempt."""

import hashlib
import hmac
import time

import httpx

from .models import Delivery, DeliveryResult


def _signature(secret: str, payload: bytes) -> str:
    return hmac.new(secret.encode(), payload, hashlib.sha256).hexdigest()


def send(client: httpx.Client, delivery: Delivery, attempt: int) -> DeliveryResult:
    ep = delivery.endpoint
    headers = {
        "Content-Type": "application/json",
        "X-Hookrelay-Event": delivery.event_id,
        "X-Hookrelay-Signature": _signature(ep.secret, delivery.payload),
    }
    start = time.monotonic()
    try:
        resp = client.post(ep.url, content=delivery.payload, headers=headers, timeout=ep.timeout)
    except httpx.HTTPError as exc:
        return DeliveryResult(ep, attempt, None, time.monotonic() - start, error=str(exc))
    return DeliveryResult(
        ep,
        attempt,
        resp.status_code,
        time.monotonic() - start,
        body_excerpt=resp.text[:200],
    )
'''

DISPATCHER_PY = '''
"""Deliver events to endpoints, rescheduling failed attempts."""

import logging

import httpx

from .models import Delivery
from .queue import Scheduler
from .retry import RetryPolicy
from .transport import send

log = logging.getLogger(__name__)


class Dispatcher:
    def __init__(self, scheduler: Scheduler, policy: RetryPolicy | None = None, client=None):
        self.scheduler = scheduler
        self.policy = policy or RetryPolicy()
        self.client = client or httpx.Client()

    def attempt(self, delivery: Delivery) -> None:
        attempt = len(delivery.results) + 1
        result = send(self.client, delivery, attempt)
        delivery.results.append(result)
        if result.ok:
            log.info("delivered %s to %s", delivery.event_id, delivery.endpoint.url)
            return
        if not self.policy.should_retry(attempt, result.status):
            log.warning("giving up on %s after %d attempts", delivery.event_id, attempt)
            self.scheduler.dead_letter(delivery)
            return
        delay = self.policy.next_delay(attempt)
        log.info("retrying %s in %.1fs (status %s)", delivery.event_id, delay, result.status)
        self.scheduler.schedule(delivery, delay)
'''

HTTPUTIL_PY = '''
"""Small HTTP helpers."""

from datetime import datetime
from email.utils import parsedate_to_datetime


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait according to a Retry-After header (delta-seconds or HTTP-date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    now = now or datetime.now()
    return max(0.0, (when - now).total_seconds())
'''

CONFTEST_PY = '''
import pytest

from hookrelay.models import Endpoint


class FakeScheduler:
    def __init__(self):
        self.scheduled = []
        self.dead = []

    def schedule(self, delivery, delay):
        self.scheduled.append((delivery.event_id, delay))

    def dead_letter(self, delivery):
        self.dead.append(delivery.event_id)


class FixedPolicy:
    """Deterministic policy for dispatcher tests."""

    def __init__(self, delays):
        self.delays = list(delays)

    def should_retry(self, attempt, status):
        return attempt <= len(self.delays)

    def next_delay(self, attempt):
        return self.delays[attempt - 1]


@pytest.fixture
def scheduler():
    return FakeScheduler()


@pytest.fixture
def endpoint():
    return Endpoint("https://example.test/hook", "s3cret")
'''


def codeact_grep_exploration():
    """Retry-After ignored by webhook retries. A long exploration through grep/find/sed/git
    on different symbols each time (retry, Retry-After, RetryPolicy, DeliveryResult,
    headers, git history, an unused helper), then edits across four modules, a test-double
    signature fix, a new failure in the helper, and green tests."""
    rng = random.Random(3103)
    r = Run("codeact_grep_exploration", SHAPE, "loop-free", None)
    w = Workspace(
        r,
        "/workspace/hookrelay",
        {
            "hookrelay/retry.py": RETRY_PY,
            "hookrelay/models.py": MODELS_PY,
            "hookrelay/transport.py": TRANSPORT_PY,
            "hookrelay/dispatcher.py": DISPATCHER_PY,
            "hookrelay/util/http.py": HTTPUTIL_PY,
            "tests/conftest.py": CONFTEST_PY,
        },
    )
    r.turn(
        "Bug report: when an endpoint answers 429 or 503 with `Retry-After: 120`, hookrelay retries after 2s, 4s, 8s... ignoring the header. Explore the code base first."
    )
    w.bash(
        "cd /workspace/hookrelay && ls && git log --oneline -5",
        "CHANGELOG.md  README.md  docs  hookrelay  pyproject.toml  tests\n"
        "c7e2a1d Bump httpx to 0.27\n4be21c9 Split transport out of dispatcher\n9a0f3e7 Add dead-letter queue\n"
        "2d18b54 Configurable jitter\n81c6f02 Release 1.3.0",
    )
    w.bash(
        "find hookrelay -name '*.py' | sort",
        "hookrelay/__init__.py\nhookrelay/cli.py\nhookrelay/dispatcher.py\nhookrelay/models.py\n"
        "hookrelay/queue.py\nhookrelay/retry.py\nhookrelay/transport.py\nhookrelay/util/__init__.py\n"
        "hookrelay/util/http.py\nhookrelay/util/timeparse.py",
    )
    w.bash(
        "grep -rn -i 'retry' --include=*.py hookrelay | head -30",
        "hookrelay/cli.py:14:from .retry import RetryPolicy\n"
        "hookrelay/cli.py:41:    policy = RetryPolicy(max_attempts=args.max_attempts, base_delay=args.base_delay)\n"
        "hookrelay/dispatcher.py:9:from .retry import RetryPolicy\n"
        "hookrelay/dispatcher.py:17:    def __init__(self, scheduler: Scheduler, policy: RetryPolicy | None = None, client=None):\n"
        "hookrelay/dispatcher.py:18:        self.policy = policy or RetryPolicy()\n"
        "hookrelay/dispatcher.py:28:        if not self.policy.should_retry(attempt, result.status):\n"
        'hookrelay/dispatcher.py:33:        log.info("retrying %s in %.1fs (status %s)", delivery.event_id, delay, result.status)\n'
        'hookrelay/retry.py:1:"""Retry policies for webhook delivery."""\n'
        "hookrelay/retry.py:8:class RetryPolicy:\n"
        "hookrelay/retry.py:14:    def should_retry(self, attempt: int, status: int | None) -> bool:\n"
        "hookrelay/util/http.py:7:def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:\n"
        'hookrelay/util/http.py:8:    """Seconds to wait according to a Retry-After header (delta-seconds or HTTP-date)."""',
    )
    w.bash(
        "grep -rn -i 'retry-after' . --include=*.py --include=*.md --include=*.rst",
        './hookrelay/util/http.py:8:    """Seconds to wait according to a Retry-After header (delta-seconds or HTTP-date)."""\n'
        "./CHANGELOG.md:19:- Honour `Retry-After` on 429/503 responses (#88)\n"
        "./docs/retries.rst:22:If the endpoint sends ``Retry-After``, the next attempt waits at least that long,",
    )
    r.turn(
        "Interesting: CHANGELOG says Retry-After was supported (#88), and parse_retry_after exists, but nothing in hookrelay calls it. Look at the policy."
    )
    w.bash("sed -n 1,40p hookrelay/retry.py", w.sed("hookrelay/retry.py", 1, 40))
    w.bash(
        "grep -rn 'next_delay\\|should_retry' --include=*.py .",
        "./hookrelay/dispatcher.py:28:        if not self.policy.should_retry(attempt, result.status):\n"
        "./hookrelay/dispatcher.py:32:        delay = self.policy.next_delay(attempt)\n"
        "./hookrelay/retry.py:14:    def should_retry(self, attempt: int, status: int | None) -> bool:\n"
        "./hookrelay/retry.py:19:    def next_delay(self, attempt: int) -> float:\n"
        "./tests/conftest.py:24:    def should_retry(self, attempt, status):\n"
        "./tests/conftest.py:27:    def next_delay(self, attempt):\n"
        "./tests/test_retry.py:9:    assert [p.next_delay(i) for i in range(1, 5)] == [2.0, 4.0, 8.0, 16.0]\n"
        "./tests/test_retry.py:15:    assert p.next_delay(30) == 900.0",
    )
    w.bash("sed -n 20,40p hookrelay/dispatcher.py", w.sed("hookrelay/dispatcher.py", 20, 40))
    w.bash(
        "grep -n 'class DeliveryResult' -A 12 hookrelay/models.py",
        "\n".join(
            f"{i}:{ln}"
            if i == w.line_of("hookrelay/models.py", "class DeliveryResult")
            else f"{i}-{ln}"
            for i, ln in enumerate(w.lines("hookrelay/models.py"), 1)
            if w.line_of("hookrelay/models.py", "class DeliveryResult")
            <= i
            <= w.line_of("hookrelay/models.py", "class DeliveryResult") + 12
        ),
    )
    r.turn("DeliveryResult carries no headers at all. Where is it constructed?")
    w.bash(
        "grep -rn 'DeliveryResult(' --include=*.py .",
        "./hookrelay/transport.py:27:        return DeliveryResult(ep, attempt, None, time.monotonic() - start, error=str(exc))\n"
        "./hookrelay/transport.py:28:    return DeliveryResult(\n"
        "./tests/test_dispatcher.py:12:    return DeliveryResult(endpoint, attempt, status, 0.01)\n"
        "./tests/test_models.py:8:    r = DeliveryResult(endpoint, 1, 204, 0.2)",
    )
    w.bash("sed -n 1,40p hookrelay/transport.py", w.sed("hookrelay/transport.py", 1, 40))
    w.bash(
        "git log --oneline -6 -- hookrelay/retry.py hookrelay/transport.py hookrelay/dispatcher.py",
        "4be21c9 Split transport out of dispatcher\n9a0f3e7 Add dead-letter queue\n2d18b54 Configurable jitter\n"
        "5f7b9c3 Honour Retry-After on 429/503 (#88)\n81c6f02 Release 1.3.0\n0c44ae1 Exponential backoff",
    )
    w.bash(
        "git show 4be21c9 --stat",
        "commit 4be21c9e0d7b5a1f2c3d4e5f60718293a4b5c6d7\nAuthor: M. Osei <mo@hookrelay.dev>\nDate:   Tue Feb 13 16:02:44 2024 +0100\n\n"
        "    Split transport out of dispatcher\n\n hookrelay/dispatcher.py | 58 +++++------------------\n"
        " hookrelay/transport.py  | 36 ++++++++++++++\n tests/test_dispatcher.py |  9 ++--\n 3 files changed, 55 insertions(+), 48 deletions(-)",
    )
    w.bash(
        "git show 4be21c9 -- hookrelay/dispatcher.py | grep -n -i 'retry_after\\|Retry-After'",
        "23:-from .util.http import parse_retry_after\n"
        '61:-        retry_after = parse_retry_after(resp.headers.get("Retry-After"))\n'
        "74:-        delay = max(self.policy.next_delay(attempt), retry_after or 0.0)\n"
        "75:-        delay = min(delay, self.policy.max_delay)",
    )
    r.turn(
        "Found it: the transport split dropped the Retry-After handling; the old dispatcher read the header and took max(backoff, retry_after) capped at max_delay. Check whether any test covered it."
    )
    w.bash(
        "grep -rn 'retry_after\\|Retry-After\\|429' tests",
        "tests/test_retry.py:21:    assert p.should_retry(1, 429)",
    )
    w.bash(
        "ls tests && grep -n 'def test' tests/test_dispatcher.py",
        "conftest.py  test_cli.py  test_dispatcher.py  test_models.py  test_queue.py  test_retry.py\n"
        "15:def test_delivers_on_2xx(scheduler, endpoint, monkeypatch):\n"
        "24:def test_schedules_retry_with_policy_delay(scheduler, endpoint, monkeypatch):\n"
        "36:def test_dead_letters_after_max_attempts(scheduler, endpoint, monkeypatch):",
    )
    w.bash(
        "sed -n 1,45p tests/test_dispatcher.py",
        "from hookrelay import dispatcher as dispatcher_mod\nfrom hookrelay.dispatcher import Dispatcher\n"
        "from hookrelay.models import Delivery, DeliveryResult\n\nfrom .conftest import FixedPolicy\n\n\n"
        "def fake_send(status):\n    def _send(client, delivery, attempt):\n"
        "        endpoint = delivery.endpoint\n        return DeliveryResult(endpoint, attempt, status, 0.01)\n    return _send\n\n\n"
        "def test_delivers_on_2xx(scheduler, endpoint, monkeypatch):\n"
        '    monkeypatch.setattr(dispatcher_mod, "send", fake_send(204))\n'
        '    Dispatcher(scheduler).attempt(Delivery("e1", b"{}", endpoint))\n'
        "    assert scheduler.scheduled == [] and scheduler.dead == []\n\n\n"
        "def test_schedules_retry_with_policy_delay(scheduler, endpoint, monkeypatch):\n"
        '    monkeypatch.setattr(dispatcher_mod, "send", fake_send(503))\n'
        '    Dispatcher(scheduler, policy=FixedPolicy([7.0])).attempt(Delivery("e2", b"{}", endpoint))\n'
        '    assert scheduler.scheduled == [("e2", 7.0)]',
    )
    w.bash(
        "python -m pytest tests/test_retry.py tests/test_dispatcher.py -q",
        pytest_out(
            rng,
            "..........                                                               [100%]",
            "10 passed",
        ),
    )
    w.bash("sed -n 1,25p hookrelay/util/http.py", w.sed("hookrelay/util/http.py", 1, 25))
    w.bash(
        "grep -rn 'max_delay' --include=*.py --include=*.rst hookrelay docs",
        "hookrelay/retry.py:11:    max_delay: float = 900.0\n"
        "hookrelay/retry.py:20:        delay = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))\n"
        "docs/retries.rst:23:but never longer than ``max_delay`` (default 15 minutes).",
    )
    r.turn(
        "Plan: DeliveryResult gets `retry_after: float | None`; transport fills it from the header; RetryPolicy gets `delay_for(attempt, retry_after)` doing max(backoff, retry_after) capped at max_delay; dispatcher uses it."
    )
    w.view("hookrelay/models.py", [14, 26])
    w.replace(
        "hookrelay/models.py",
        '    error: str | None = None\n    body_excerpt: str = ""\n',
        '    error: str | None = None\n    body_excerpt: str = ""\n    retry_after: float | None = None\n',
    )
    w.replace(
        "hookrelay/transport.py",
        "from .models import Delivery, DeliveryResult\n",
        "from .models import Delivery, DeliveryResult\nfrom .util.http import parse_retry_after\n",
    )
    w.replace(
        "hookrelay/transport.py",
        "        body_excerpt=resp.text[:200],\n    )",
        "        body_excerpt=resp.text[:200],\n"
        '        retry_after=parse_retry_after(resp.headers.get("Retry-After")),\n    )',
    )
    w.replace(
        "hookrelay/retry.py",
        "        return max(0.0, delay + random.uniform(-spread, spread))\n",
        "        return max(0.0, delay + random.uniform(-spread, spread))\n\n"
        "    def delay_for(self, attempt: int, retry_after: float | None = None) -> float:\n"
        '        """Backoff delay, raised to the server\'s Retry-After and capped at max_delay."""\n'
        "        delay = self.next_delay(attempt)\n"
        "        if retry_after is not None:\n"
        "            delay = max(delay, retry_after)\n"
        "        return min(delay, self.max_delay)\n",
    )
    w.replace(
        "hookrelay/dispatcher.py",
        "        delay = self.policy.next_delay(attempt)\n",
        "        delay = self.policy.delay_for(attempt, result.retry_after)\n",
    )
    w.bash(
        "python -m pytest -q",
        pytest_out(
            rng,
            "...........F.F..........................                                 [100%]\n"
            "=================================== FAILURES ===================================\n"
            "___________________ test_schedules_retry_with_policy_delay _____________________\n"
            "hookrelay/dispatcher.py:32: in attempt\n"
            "    delay = self.policy.delay_for(attempt, result.retry_after)\n"
            "E   AttributeError: 'FixedPolicy' object has no attribute 'delay_for'\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_dispatcher.py::test_schedules_retry_with_policy_delay - AttributeError: 'FixedPolicy' object has no attribute 'delay_for'\n"
            "FAILED tests/test_dispatcher.py::test_dead_letters_after_max_attempts - AttributeError: 'FixedPolicy' object has no attribute 'delay_for'",
            "2 failed, 38 passed",
        ),
        code=1,
    )
    r.turn(
        "The test double implements the old protocol. Give FixedPolicy a delay_for mirroring the real one."
    )
    w.replace(
        "tests/conftest.py",
        "    def next_delay(self, attempt):\n        return self.delays[attempt - 1]\n",
        "    def next_delay(self, attempt):\n        return self.delays[attempt - 1]\n\n"
        "    def delay_for(self, attempt, retry_after=None):\n"
        "        delay = self.next_delay(attempt)\n"
        "        return delay if retry_after is None else max(delay, retry_after)\n",
    )
    w.bash(
        "python -m pytest -q",
        pytest_out(
            rng,
            "........................................                                 [100%]",
            "40 passed",
        ),
    )
    r.turn("Now tests for the actual behaviour: delta-seconds, HTTP-date, and the max_delay cap.")
    w.create(
        "tests/test_retry_after.py",
        "from datetime import datetime, timedelta, timezone\n\n"
        "from hookrelay.retry import RetryPolicy\nfrom hookrelay.util.http import parse_retry_after\n\n\n"
        "def test_delta_seconds_raises_delay():\n    p = RetryPolicy(jitter=0.0)\n"
        "    assert p.delay_for(1, retry_after=120.0) == 120.0\n\n\n"
        "def test_capped_at_max_delay():\n    p = RetryPolicy(jitter=0.0, max_delay=60.0)\n"
        "    assert p.delay_for(1, retry_after=3600.0) == 60.0\n\n\n"
        "def test_http_date():\n    now = datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc)\n"
        '    value = "Fri, 01 Mar 2024 12:02:00 GMT"\n'
        "    assert parse_retry_after(value, now=now) == 120.0\n\n\n"
        "def test_http_date_without_now():\n"
        "    value = (datetime.now(timezone.utc) + timedelta(seconds=30)).strftime('%a, %d %b %Y %H:%M:%S GMT')\n"
        "    assert 0 < parse_retry_after(value) <= 30\n",
    )
    w.bash(
        "python -m pytest tests/test_retry_after.py -q",
        pytest_out(
            rng,
            "...F                                                                     [100%]\n"
            "=================================== FAILURES ===================================\n"
            "_________________________ test_http_date_without_now ___________________________\n"
            "hookrelay/util/http.py:20: in parse_retry_after\n"
            "    return max(0.0, (when - now).total_seconds())\n"
            "E   TypeError: can't subtract offset-naive and offset-aware datetimes\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_retry_after.py::test_http_date_without_now - TypeError: can't subtract offset-naive and offset-aware datetimes",
            "1 failed, 3 passed",
        ),
        code=1,
    )
    r.turn(
        "A latent bug in the helper: datetime.now() is naive while the parsed HTTP-date is aware. Use UTC."
    )
    w.view("hookrelay/util/http.py", [1, 8])
    w.replace(
        "hookrelay/util/http.py",
        "from datetime import datetime\n",
        "from datetime import datetime, timezone\n",
    )
    w.replace(
        "hookrelay/util/http.py",
        "    now = now or datetime.now()\n",
        "    now = now or datetime.now(timezone.utc)\n",
    )
    w.bash(
        "python -m pytest tests/test_retry_after.py -q",
        pytest_out(
            rng,
            "....                                                                     [100%]",
            "4 passed",
        ),
    )
    w.bash(
        "python -m pytest -q",
        pytest_out(
            rng,
            "............................................                             [100%]",
            "44 passed",
        ),
    )
    w.bash(
        "git diff --stat",
        " hookrelay/dispatcher.py  | 2 +-\n hookrelay/models.py      | 1 +\n hookrelay/retry.py       | 8 ++++++++\n"
        " hookrelay/transport.py   | 2 ++\n hookrelay/util/http.py   | 4 ++--\n tests/conftest.py        | 4 ++++\n"
        " 6 files changed, 19 insertions(+), 3 deletions(-)",
    )
    w.finish(
        "Retry-After is honoured again: the transport split (4be21c9) had dropped it. The transport now records the parsed header on DeliveryResult.retry_after, RetryPolicy.delay_for takes max(backoff, retry_after) capped at max_delay, and the dispatcher uses it. Fixed a naive/aware datetime bug in parse_retry_after; added tests/test_retry_after.py. 44 tests pass."
    )
    return r


# ---------------------------------------------------------------- loop-free 4

UTILS_PY = '''
"""Assorted helpers."""

import re
import unicodedata
from datetime import datetime

_WS = re.compile(r"\\s+")


def collapse_ws(text: str) -> str:
    return _WS.sub(" ", text).strip()


def slugify(text: str) -> str:
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^a-zA-Z0-9]+", "-", text).strip("-")
    return text.lower()


def truncate_words(text: str, limit: int, ellipsis: str = "…") -> str:
    words = collapse_ws(text).split(" ")
    if len(words) <= limit:
        return " ".join(words)
    return " ".join(words[:limit]) + ellipsis


def format_date(dt: datetime, fmt: str = "%d %B %Y") -> str:
    return dt.strftime(fmt)
'''

REFACTOR_FILES = {
    "inkpot/utils.py": UTILS_PY,
    "inkpot/render.py": '''
"""Render pages to HTML."""

from pathlib import Path

from jinja2 import Environment, FileSystemLoader

from .utils import format_date, slugify, truncate_words


def make_env(templates: Path) -> Environment:
    env = Environment(loader=FileSystemLoader(templates), autoescape=True)
    env.filters["slug"] = slugify
    env.filters["excerpt"] = truncate_words
    env.filters["date"] = format_date
    return env
''',
    "inkpot/cli.py": '''
"""Command line entry point."""

import argparse
from pathlib import Path

from .pages import load_pages
from .utils import slugify


def main(argv=None):
    parser = argparse.ArgumentParser(prog="inkpot")
    sub = parser.add_subparsers(dest="cmd", required=True)
    new = sub.add_parser("new")
    new.add_argument("title")
    args = parser.parse_args(argv)
    if args.cmd == "new":
        path = Path("content") / f"{slugify(args.title)}.md"
        path.write_text(f"# {args.title}\\n")
        print(path)
''',
    "inkpot/pages.py": '''
"""Load markdown pages with front matter."""

from dataclasses import dataclass
from pathlib import Path

from . import utils
from .utils import slugify


@dataclass
class Page:
    title: str
    slug: str
    body: str


def load_pages(root: Path) -> list[Page]:
    pages = []
    for path in sorted(root.glob("*.md")):
        title = path.read_text().splitlines()[0].lstrip("# ")
        pages.append(Page(title, slugify(title), path.read_text()))
    return pages
''',
    "inkpot/feeds/rss.py": '''
"""RSS 2.0 feed."""

from xml.sax.saxutils import escape

from ..utils import format_date, truncate_words


def item(page, base_url):
    return (
        f"<item><title>{escape(page.title)}</title>"
        f"<link>{base_url}/{page.slug}/</link>"
        f"<description>{escape(truncate_words(page.body, 40))}</description></item>"
    )
''',
    "inkpot/feeds/atom.py": '''
"""Atom feed."""

from xml.sax.saxutils import escape

from .. import utils


def entry(page, base_url, updated):
    summary = utils.truncate_words(page.body, 60)
    return (
        f"<entry><title>{escape(page.title)}</title>"
        f"<id>{base_url}/{utils.slugify(page.title)}/</id>"
        f"<updated>{utils.format_date(updated, '%Y-%m-%dT%H:%M:%SZ')}</updated>"
        f"<summary>{escape(summary)}</summary></entry>"
    )
''',
    "inkpot/search/index.py": '''
"""Build the client-side search index."""

import json

from ..utils import collapse_ws, truncate_words


def build(pages):
    return json.dumps(
        [{"t": p.title, "u": f"/{p.slug}/", "x": truncate_words(collapse_ws(p.body), 30)} for p in pages]
    )
''',
    "tests/test_utils.py": """
from datetime import datetime

from inkpot.utils import collapse_ws, format_date, slugify, truncate_words


def test_collapse_ws():
    assert collapse_ws("  a \\n b  ") == "a b"


def test_format_date():
    assert format_date(datetime(2024, 1, 5)) == "05 January 2024"


def test_slugify_ascii():
    assert slugify("Hello, World!") == "hello-world"


def test_slugify_accents():
    assert slugify("Crème brûlée") == "creme-brulee"


def test_truncate_words():
    assert truncate_words("one two three", 2) == "one two…"
""",
    "docs/api.rst": """
API
===

Text helpers
------------

.. autofunction:: inkpot.utils.slugify

.. autofunction:: inkpot.utils.truncate_words

Dates
-----

.. autofunction:: inkpot.utils.format_date
""",
}


def codeact_move_helpers_refactor():
    """Refactor: move slugify/truncate_words from inkpot/utils.py into a new inkpot/text.py
    with a deprecation shim, updating imports in six modules, tests and docs. Each test or
    lint run after an edit surfaces a different problem (warnings-as-errors in the old test
    module, a missed attribute-style use in atom.py, an unused import) until clean."""
    rng = random.Random(3104)
    r = Run("codeact_move_helpers_refactor", SHAPE, "loop-free", None)
    w = Workspace(r, "/workspace/inkpot", REFACTOR_FILES)
    r.turn(
        "Task: move the text helpers `slugify` and `truncate_words` out of inkpot/utils.py into a new inkpot/text.py; importing them from inkpot.utils should keep working for one release with a DeprecationWarning. Find all users."
    )
    w.bash(
        "cd /workspace/inkpot && grep -rn 'slugify\\|truncate_words' --include=*.py --include=*.rst .",
        "./inkpot/utils.py:15:def slugify(text: str) -> str:\n"
        './inkpot/utils.py:21:def truncate_words(text: str, limit: int, ellipsis: str = "…") -> str:\n'
        "./inkpot/render.py:7:from .utils import format_date, slugify, truncate_words\n"
        './inkpot/render.py:12:    env.filters["slug"] = slugify\n'
        './inkpot/render.py:13:    env.filters["excerpt"] = truncate_words\n'
        "./inkpot/cli.py:7:from .utils import slugify\n"
        './inkpot/cli.py:17:        path = Path("content") / f"{slugify(args.title)}.md"\n'
        "./inkpot/pages.py:7:from .utils import slugify\n"
        "./inkpot/pages.py:21:        pages.append(Page(title, slugify(title), path.read_text()))\n"
        "./inkpot/feeds/rss.py:5:from ..utils import format_date, truncate_words\n"
        './inkpot/feeds/rss.py:12:        f"<description>{escape(truncate_words(page.body, 40))}</description></item>"\n'
        "./inkpot/search/index.py:5:from ..utils import collapse_ws, truncate_words\n"
        './inkpot/search/index.py:10:        [{"t": p.title, "u": f"/{p.slug}/", "x": truncate_words(collapse_ws(p.body), 30)} for p in pages]\n'
        "./tests/test_utils.py:3:from inkpot.utils import collapse_ws, format_date, slugify, truncate_words\n"
        "./docs/api.rst:8:.. autofunction:: inkpot.utils.slugify\n"
        "./docs/api.rst:10:.. autofunction:: inkpot.utils.truncate_words",
    )
    w.view("inkpot/utils.py")
    r.turn(
        "truncate_words uses collapse_ws, which stays in utils. text.py can import it from there."
    )
    w.create(
        "inkpot/text.py",
        '"""Text helpers: slugs and excerpts."""\n\nimport re\nimport unicodedata\n\nfrom .utils import collapse_ws\n\n'
        '__all__ = ["slugify", "truncate_words"]\n\n\n'
        "def slugify(text: str) -> str:\n"
        '    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()\n'
        '    text = re.sub(r"[^a-zA-Z0-9]+", "-", text).strip("-")\n    return text.lower()\n\n\n'
        'def truncate_words(text: str, limit: int, ellipsis: str = "…") -> str:\n'
        '    words = collapse_ws(text).split(" ")\n    if len(words) <= limit:\n        return " ".join(words)\n'
        '    return " ".join(words[:limit]) + ellipsis\n',
    )
    w.replace(
        "inkpot/utils.py",
        "\n".join(w.lines("inkpot/utils.py")[13:26]) + "\n",
        '_MOVED = {"slugify", "truncate_words"}\n\n\n'
        "def __getattr__(name):\n    if name in _MOVED:\n        import warnings\n\n        from . import text\n\n"
        "        warnings.warn(\n"
        '            f"inkpot.utils.{name} is deprecated; import it from inkpot.text",\n'
        "            DeprecationWarning,\n            stacklevel=2,\n        )\n"
        "        return getattr(text, name)\n"
        '    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")\n\n\n',
    )
    w.replace(
        "inkpot/utils.py",
        "import re\nimport unicodedata\nfrom datetime",
        "import re\nfrom datetime",
    )
    r.turn("Now the importers, one by one.")
    w.view("inkpot/render.py", [1, 10])
    w.replace(
        "inkpot/render.py",
        "from .utils import format_date, slugify, truncate_words\n",
        "from .text import slugify, truncate_words\nfrom .utils import format_date\n",
    )
    w.view("inkpot/cli.py", [1, 10])
    w.replace("inkpot/cli.py", "from .utils import slugify\n", "from .text import slugify\n")
    w.view("inkpot/pages.py", [1, 10])
    w.replace("inkpot/pages.py", "from .utils import slugify\n", "from .text import slugify\n")
    w.view("inkpot/feeds/rss.py", [1, 8])
    w.replace(
        "inkpot/feeds/rss.py",
        "from ..utils import format_date, truncate_words\n",
        "from ..text import truncate_words\nfrom ..utils import format_date\n",
    )
    w.view("inkpot/search/index.py", [1, 8])
    w.replace(
        "inkpot/search/index.py",
        "from ..utils import collapse_ws, truncate_words\n",
        "from ..text import truncate_words\nfrom ..utils import collapse_ws\n",
    )
    w.bash(
        "python -m pytest -q",
        pytest_out(
            rng,
            "==================================== ERRORS ====================================\n"
            "____________________ ERROR collecting tests/test_utils.py ______________________\n"
            "tests/test_utils.py:3: in <module>\n    from inkpot.utils import collapse_ws, format_date, slugify, truncate_words\n"
            "inkpot/utils.py:24: in __getattr__\n    warnings.warn(\n"
            "E   DeprecationWarning: inkpot.utils.slugify is deprecated; import it from inkpot.text\n"
            "=========================== short test summary info ============================\n"
            "ERROR tests/test_utils.py - DeprecationWarning: inkpot.utils.slugify is deprecated; import it from inkpot.text\n"
            "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!",
            "1 error",
        ),
        code=2,
    )
    r.turn(
        "The shim works, and pytest runs with filterwarnings=error, so the old test imports fail. Point the test module at inkpot.text."
    )
    w.view("tests/test_utils.py", [1, 5])
    w.replace(
        "tests/test_utils.py",
        "from inkpot.utils import collapse_ws, format_date, slugify, truncate_words\n",
        "from inkpot.text import slugify, truncate_words\nfrom inkpot.utils import collapse_ws, format_date\n",
    )
    w.bash(
        "python -m pytest -q",
        pytest_out(
            rng,
            "...................................F.............................        [100%]\n"
            "=================================== FAILURES ===================================\n"
            "________________________________ test_atom_entry _______________________________\n"
            "inkpot/feeds/atom.py:9: in entry\n    summary = utils.truncate_words(page.body, 60)\n"
            "inkpot/utils.py:24: in __getattr__\n    warnings.warn(\n"
            "E   DeprecationWarning: inkpot.utils.truncate_words is deprecated; import it from inkpot.text\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_feeds.py::test_atom_entry - DeprecationWarning: inkpot.utils.truncate_words is deprecated; import it from inkpot.text",
            "1 failed, 64 passed",
        ),
        code=1,
    )
    r.turn(
        "atom.py uses `utils.truncate_words` as an attribute, which my import grep missed. Search for that form everywhere."
    )
    w.bash(
        "grep -rn 'utils\\.\\(slugify\\|truncate_words\\)' --include=*.py .",
        "./inkpot/feeds/atom.py:9:    summary = utils.truncate_words(page.body, 60)\n"
        './inkpot/feeds/atom.py:12:        f"<id>{base_url}/{utils.slugify(page.title)}/</id>"',
    )
    w.view("inkpot/feeds/atom.py")
    w.replace("inkpot/feeds/atom.py", "from .. import utils\n", "from .. import text, utils\n")
    w.replace(
        "inkpot/feeds/atom.py",
        "    summary = utils.truncate_words(page.body, 60)\n",
        "    summary = text.truncate_words(page.body, 60)\n",
    )
    w.replace("inkpot/feeds/atom.py", "{utils.slugify(page.title)}", "{text.slugify(page.title)}")
    w.bash(
        "python -m pytest -q",
        pytest_out(
            rng,
            ".................................................................        [100%]",
            "65 passed",
        ),
    )
    w.bash(
        "python -m flake8 inkpot tests",
        "./inkpot/pages.py:6:1: F401 '.utils' imported but unused",
        code=1,
    )
    w.view("inkpot/pages.py", [1, 10])
    w.replace(
        "inkpot/pages.py",
        "from . import utils\nfrom .text import slugify\n",
        "from .text import slugify\n",
    )
    w.bash("python -m flake8 inkpot tests", "")
    r.turn("Docs still point at inkpot.utils; and a test that the shim warns.")
    w.view("docs/api.rst")
    w.replace(
        "docs/api.rst",
        ".. autofunction:: inkpot.utils.slugify\n\n.. autofunction:: inkpot.utils.truncate_words\n",
        ".. autofunction:: inkpot.text.slugify\n\n.. autofunction:: inkpot.text.truncate_words\n\n"
        ".. deprecated:: 2.4\n   Importing these from ``inkpot.utils`` still works but warns.\n",
    )
    w.create(
        "tests/test_utils_deprecation.py",
        "import pytest\n\nimport inkpot.text\nimport inkpot.utils\n\n\n"
        '@pytest.mark.parametrize("name", ["slugify", "truncate_words"])\n'
        "def test_old_location_warns(name):\n"
        "    with pytest.deprecated_call():\n"
        "        fn = getattr(inkpot.utils, name)\n"
        "    assert fn is getattr(inkpot.text, name)\n\n\n"
        "def test_unknown_attribute():\n    with pytest.raises(AttributeError):\n        inkpot.utils.nope\n",
    )
    w.bash(
        "python -m pytest -q",
        pytest_out(
            rng,
            "....................................................................     [100%]",
            "68 passed",
        ),
    )
    w.bash(
        "git status --short",
        " M docs/api.rst\n M inkpot/cli.py\n M inkpot/feeds/atom.py\n M inkpot/feeds/rss.py\n M inkpot/pages.py\n"
        " M inkpot/render.py\n M inkpot/search/index.py\n M inkpot/utils.py\n M tests/test_utils.py\n"
        "?? inkpot/text.py\n?? tests/test_utils_deprecation.py",
    )
    w.finish(
        "Moved slugify and truncate_words to inkpot/text.py; inkpot.utils re-exports them via __getattr__ with a DeprecationWarning. Updated render, cli, pages, feeds/rss, feeds/atom (attribute-style uses), search/index, tests and docs. 68 tests pass, flake8 clean."
    )
    return r


# ---------------------------------------------------------------- loop 1

SLUG_PY = '''
"""Slug generation."""

import re
import unicodedata

_SEP = "-"


def _ascii_fold(text: str) -> str:
    """Map accented characters to their ASCII base letters."""
    text = unicodedata.normalize("NFC", text)
    return "".join(ch for ch in text if not unicodedata.combining(ch))


def slugify(text: str, max_length: int = 80) -> str:
    text = _ascii_fold(text).lower()
    text = re.sub(r"[^a-z0-9]+", "-", text)
    text = text.strip("-")
    return text[:max_length].rstrip("-")
'''

SLUG_BLOCKS = [
    '    text = re.sub(r"[^a-z0-9]+", "-", text)\n    text = text.strip("-")\n',
    '    text = re.sub(r"[^a-z0-9]+", _SEP, text).strip(_SEP)\n',
    '    text = "-".join(re.findall(r"[a-z0-9]+", text))\n',
    '    text = re.sub(r"[^0-9a-z]+", "-", text)\n    text = re.sub(r"-{2,}", "-", text).strip("-")\n',
    '    text = re.compile(r"[^a-z0-9]+").sub("-", text).strip("-")\n',
    '    text = re.sub(r"[^a-z0-9]", "-", text)\n    text = re.sub(r"-+", "-", text).strip("-")\n',
    '    text = "".join(c if c.isascii() and c.isalnum() else "-" for c in text)\n'
    '    text = re.sub(r"-+", "-", text).strip("-")\n',
    '    text = re.sub(r"(?i)[^a-z0-9]+", "-", text).strip("-")\n',
    '    parts = [p for p in re.split(r"[^a-z0-9]+", text) if p]\n    text = _SEP.join(parts)\n',
    '    text = re.sub(r"[^a-z0-9]+", "-", text, flags=re.ASCII).strip("-")\n',
    '    text = re.sub(r"[\\W_]+", "-", text, flags=re.ASCII).strip("-")\n',
    '    text = re.sub(r"[^a-z\\d]+", "-", text).strip("-")\n',
]


def codeact_slugify_same_block():
    """slugify("Crème Brûlée") gives "cr-me-br-l-e" because _ascii_fold normalises to NFC
    (so nothing is decomposed). The agent keeps rewriting the same three-line regex block
    in slugify() with equivalent formulations and re-running the same repro, which prints
    the same output every time, until the step cap. It never looks at _ascii_fold."""
    rng = random.Random(3105)
    r = Run("codeact_slugify_same_block", SHAPE, "loop", 8)
    w = Workspace(r, "/workspace/slugkit", {"slugkit/core.py": SLUG_PY})
    r.turn(
        "Issue: accented characters are dropped from slugs instead of folded ('Crème Brûlée' -> 'cr-me-br-l-e'). Look at the code."
    )
    w.bash(
        "cd /workspace/slugkit && ls slugkit tests",
        "slugkit:\n__init__.py  core.py  py.typed\n\ntests:\ntest_core.py",
    )
    w.view("slugkit/core.py")
    w.bash(
        "python -m pytest tests -q",
        pytest_out(
            rng,
            "....F...                                                                 [100%]\n"
            "=================================== FAILURES ===================================\n"
            "________________________________ test_accents __________________________________\n\n"
            "    def test_accents():\n"
            '>       assert slugify("Crème Brûlée") == "creme-brulee"\n'
            "E       AssertionError: assert 'cr-me-br-l-e' == 'creme-brulee'\n\n"
            "tests/test_core.py:14: AssertionError\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_core.py::test_accents - AssertionError: assert 'cr-me-br-l-e' == 'creme-brulee'",
            "1 failed, 7 passed",
        ),
        code=1,
    )
    w.create(
        "repro.py",
        "from slugkit.core import slugify\n\n"
        'for s in ["Crème Brûlée", "naïve café", "Hello, World!", "Ærøskøbing"]:\n'
        "    print(repr(s), '->', repr(slugify(s)))\n",
    )
    repro_out = (
        "'Crème Brûlée' -> 'cr-me-br-l-e'\n'naïve café' -> 'na-ve-caf'\n"
        "'Hello, World!' -> 'hello-world'\n'Ærøskøbing' -> 'r-sk-bing'"
    )
    w.bash("python repro.py", repro_out)
    k = w.line_of("slugkit/core.py", "def slugify")
    w.view("slugkit/core.py", [k, len(w.lines("slugkit/core.py"))])
    r.turn(
        "The substitution replaces the accented letters with dashes. The regex block must be too aggressive; rewrite it."
    )
    thoughts = [
        None,
        "Same output. Maybe the strip and the substitution interact; fold them into one expression.",
        "Still dashes. Perhaps matching the runs I want to keep is cleaner than replacing what I don't.",
        "No change. Maybe the character class order matters; collapse repeated dashes explicitly.",
        "Same. Compile the pattern explicitly.",
        "Still 'cr-me-br-l-e'. Replace per character, then collapse.",
        "Same result. Do it without regex for the class test.",
        "Unchanged. Try a case-insensitive class.",
        "Same. Split and join instead.",
        "Still the same. Force ASCII semantics in the regex.",
        "No difference. Try \\W with ASCII flag.",
        "Same again. Use \\d in the class.",
    ]
    for i in range(1, len(SLUG_BLOCKS)):
        if i == 2:
            assert r.ncalls == 8
        if thoughts[i - 1]:
            r.turn(thoughts[i - 1])
        w.replace("slugkit/core.py", SLUG_BLOCKS[i - 1], SLUG_BLOCKS[i])
        w.bash("python repro.py", repro_out, dur=rng.uniform(0.3, 0.6))
    r.turn("Let me run the tests again with this version.")
    w.bash(
        "python -m pytest tests -q",
        pytest_out(
            rng,
            "....F...                                                                 [100%]\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_core.py::test_accents - AssertionError: assert 'cr-me-br-l-e' == 'creme-brulee'",
            "1 failed, 7 passed",
        ),
        code=1,
    )
    r.turn("Still failing. One more rewrite of the substitution.")
    w.replace("slugkit/core.py", SLUG_BLOCKS[-1], SLUG_BLOCKS[0])
    w.bash("python repro.py", repro_out, dur=0.4)
    w.replace("slugkit/core.py", SLUG_BLOCKS[0], SLUG_BLOCKS[2])
    w.bash("python repro.py", repro_out, dur=0.4)
    return r


# ---------------------------------------------------------------- loop 2

LEGACY_PY = (
    '"""Endpoint parsing kept for the 1.x config format."""\n\n'
    "DEFAULT_PORT = 5432\n\n\n"
    "def parse_endpoint(spec):\n"
    '\t"""Parse \'host[:port]\' into (host, port). Port 0 means pick an ephemeral port."""\n'
    "\thost, _, port = spec.partition(':')\n"
    "\tport = int(port) if port else None\n"
    "\tif not port:\n"
    "\t\tport = DEFAULT_PORT\n"
    "\treturn host.strip(), port\n\n\n"
    "def parse_endpoints(specs):\n"
    "\tresult = []\n"
    "\tfor spec in specs.split(','):\n"
    "\t\tspec = spec.strip()\n"
    "\t\tif not spec:\n"
    "\t\t\tcontinue\n"
    "\t\tresult.append(parse_endpoint(spec))\n"
    "\treturn result\n\n\n"
    "def format_endpoint(host, port):\n"
    "\tif port == DEFAULT_PORT:\n"
    "\t\treturn host\n"
    "\treturn '%s:%d' % (host, port)\n"
)


def codeact_old_str_tabs():
    """netcfg/legacy.py is indented with tabs. The one-line fix (`if not port:` -> `if port
    is None:`) is attempted with str_replace using space indentation; old_str never appears
    verbatim. The agent retries with tiny variations (4/8 spaces, one or two lines,
    quote/colon tweaks) and re-views the same range, until the step cap."""
    rng = random.Random(3106)
    r = Run("codeact_old_str_tabs", SHAPE, "loop", 8)
    w = Workspace(r, "/workspace/netcfg", {"netcfg/legacy.py": LEGACY_PY})
    r.turn(
        "Bug: `db.local:0` should keep port 0 (ephemeral) but resolves to 5432. Find the parser."
    )
    w.bash(
        "cd /workspace/netcfg && grep -rn 'DEFAULT_PORT' --include=*.py .",
        "./netcfg/legacy.py:3:DEFAULT_PORT = 5432\n./netcfg/legacy.py:11:\t\tport = DEFAULT_PORT\n"
        "./netcfg/legacy.py:26:\tif port == DEFAULT_PORT:\n./netcfg/endpoints.py:4:from .legacy import DEFAULT_PORT, parse_endpoint",
    )
    w.view("netcfg/legacy.py")
    w.bash(
        "python -c \"from netcfg.legacy import parse_endpoint; print(parse_endpoint('db.local:0'), parse_endpoint('db.local'), parse_endpoint('db.local:6543'))\"",
        "('db.local', 5432) ('db.local', 5432) ('db.local', 6543)",
    )
    w.bash(
        "python -m pytest tests/test_legacy.py -q",
        pytest_out(
            rng,
            "..F..                                                                    [100%]\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_legacy.py::test_port_zero_is_ephemeral - AssertionError: assert ('db.local', 5432) == ('db.local', 0)",
            "1 failed, 4 passed",
        ),
        code=1,
    )
    w.bash(
        "git log --oneline -3 -- netcfg/legacy.py",
        "e19a4b2 Port 0 means ephemeral (docs only)\n6c0d3f8 Strip whitespace around hosts\n11b2a90 Import 1.x parser",
    )
    w.bash(
        "grep -rn 'parse_endpoint(' --include=*.py netcfg",
        "netcfg/legacy.py:6:def parse_endpoint(spec):\nnetcfg/legacy.py:21:\t\tresult.append(parse_endpoint(spec))\n"
        "netcfg/endpoints.py:19:        host, port = parse_endpoint(raw)",
    )
    r.turn("`if not port:` treats 0 as missing. Change it to `if port is None:`.")
    w.view("netcfg/legacy.py", [6, 12])
    attempts = [
        (
            "    if not port:\n        port = DEFAULT_PORT",
            "    if port is None:\n        port = DEFAULT_PORT",
        ),
        (
            "        if not port:\n            port = DEFAULT_PORT",
            "        if port is None:\n            port = DEFAULT_PORT",
        ),
        ("    if not port:", "    if port is None:"),
        (None, [9, 11]),
        (
            "    port = int(port) if port else None\n    if not port:",
            "    port = int(port) if port else None\n    if port is None:",
        ),
        (
            "    if not port :\n        port = DEFAULT_PORT",
            "    if port is None:\n        port = DEFAULT_PORT",
        ),
        (
            "    if not port:\n        port = DEFAULT_PORT\n",
            "    if port is None:\n        port = DEFAULT_PORT\n",
        ),
        ("  if not port:\n    port = DEFAULT_PORT", "  if port is None:\n    port = DEFAULT_PORT"),
        (None, [6, 12]),
        (
            "    if not port:\n        port = DEFAULT_PORT\n    return host.strip(), port",
            "    if port is None:\n        port = DEFAULT_PORT\n    return host.strip(), port",
        ),
        (
            "    if (not port):\n        port = DEFAULT_PORT",
            "    if port is None:\n        port = DEFAULT_PORT",
        ),
        (
            "    if not port:\n        port = DEFAULT_PORT  ",
            "    if port is None:\n        port = DEFAULT_PORT",
        ),
        ("        if not port:", "        if port is None:"),
        (None, [9, 11]),
        (
            "    if not port:\r\n        port = DEFAULT_PORT",
            "    if port is None:\r\n        port = DEFAULT_PORT",
        ),
        (
            "    if not port:\n         port = DEFAULT_PORT",
            "    if port is None:\n         port = DEFAULT_PORT",
        ),
        (
            "    host, _, port = spec.partition(':')\n    port = int(port) if port else None\n    if not port:",
            "    host, _, port = spec.partition(':')\n    port = int(port) if port else None\n    if port is None:",
        ),
        (
            "    if not port:\n        port = DEFAULT_PORT",
            "    if port is None:\n        port = DEFAULT_PORT",
        ),
        (
            "   if not port:\n       port = DEFAULT_PORT",
            "   if port is None:\n       port = DEFAULT_PORT",
        ),
        (None, [6, 12]),
        (
            "    if not port:\n        port = DEFAULT_PORT",
            "    if port is None:  # 0 is a valid port\n        port = DEFAULT_PORT",
        ),
        (
            "    if not port:\n        port = DEFAULT_PORT\n\n",
            "    if port is None:\n        port = DEFAULT_PORT\n\n",
        ),
        ("    if not port:\n", "    if port is None:\n"),
        (
            "    if not port:\n        port = DEFAULT_PORT",
            "    if port is None:\n        port = DEFAULT_PORT",
        ),
    ]
    thoughts = [
        None,
        "It didn't match; maybe the function body is indented deeper than I thought.",
        "Try just the condition line.",
        "Let me look at the lines again.",
        "It looks like 4-space indentation. Include the line before to anchor the match.",
        "Maybe there's a stray space before the colon.",
        "Perhaps the trailing newline matters.",
        "Try two-space indentation.",
        "View the function again.",
        "Include the return line as well.",
        "Maybe the condition is parenthesised.",
        "Perhaps trailing whitespace on the assignment.",
        "Try 8 spaces on the condition only.",
        "Look once more.",
        "Maybe Windows line endings.",
        "Perhaps the assignment has an extra space.",
        "Anchor on the first lines of the body.",
        "Retry the original form.",
        "Three spaces?",
        "View again.",
        "Retry with a comment in the new text.",
        "Include the blank line after.",
        "Just the condition line with its newline.",
        "Try the two-line form once more.",
    ]
    for i, (old, new) in enumerate(attempts):
        if i == 1:
            assert r.ncalls == 8
        if thoughts[i]:
            r.turn(thoughts[i])
        if old is None:
            w.view("netcfg/legacy.py", new)
        else:
            w.replace("netcfg/legacy.py", old, new)
    return r


# ---------------------------------------------------------------- loop 3

MODELS_SHELF = '''
"""ORM models."""

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    pass


class Author(Base):
    __tablename__ = "author"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    books: Mapped[list["Book"]] = relationship(back_populates="author")


class Book(Base):
    __tablename__ = "book"

    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(300))
    isbn: Mapped[str | None] = mapped_column(String(17), unique=True)
    summary: Mapped[str] = mapped_column(Text, default="")
    author_id: Mapped[int] = mapped_column(ForeignKey("author.id"))
    author: Mapped[Author] = relationship(back_populates="books")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    published_on: Mapped[datetime | None] = mapped_column("published_at", DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
'''

SERIALIZERS_SHELF = '''
"""Pydantic schemas for the API."""

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class AuthorOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str


class BookIn(BaseModel):
    title: str = Field(min_length=1, max_length=300)
    isbn: str | None = None
    summary: str = ""
    author_id: int
    published_at: datetime | None = None


class BookOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    title: str
    isbn: str | None
    summary: str
    author: AuthorOut
    created_at: datetime
    published_at: datetime | None = None
    updated_at: datetime


class BookPage(BaseModel):
    items: list[BookOut]
    next_cursor: str | None = None
'''


def codeact_view_pingpong():
    """GET /books returns published_at: null although the row has a date (the ORM attribute
    is `published_on`, mapped to column "published_at"; the schema reads the attribute
    `published_at`). After some real exploration the agent alternates between the same
    range of models.py and the same range of serializers.py, ten laps, no edit."""
    rng = random.Random(3107)
    r = Run("codeact_view_pingpong", SHAPE, "loop", 13)
    w = Workspace(
        r,
        "/workspace/shelfapi",
        {"shelfapi/models.py": MODELS_SHELF, "shelfapi/serializers.py": SERIALIZERS_SHELF},
    )
    r.turn(
        "Bug: GET /books/{id} returns `published_at: null` for books that have a publication date in the database. Explore."
    )
    w.bash(
        "cd /workspace/shelfapi && find shelfapi -name '*.py' | sort",
        "shelfapi/__init__.py\nshelfapi/api.py\nshelfapi/db.py\nshelfapi/models.py\nshelfapi/serializers.py\nshelfapi/settings.py",
    )
    w.bash(
        "grep -rn 'published' --include=*.py shelfapi tests",
        f"shelfapi/models.py:{w.line_of('shelfapi/models.py', 'published_on')}:"
        '    published_on: Mapped[datetime | None] = mapped_column("published_at", DateTime(timezone=True))\n'
        f"shelfapi/serializers.py:{w.line_of('shelfapi/serializers.py', 'published_at')}:    published_at: datetime | None = None\n"
        f"shelfapi/serializers.py:{w.line_of('shelfapi/serializers.py', 'published_at', 2)}:    published_at: datetime | None = None\n"
        'shelfapi/api.py:44:        book = Book(**data.model_dump(exclude={"published_at"}), published_on=data.published_at)\n'
        'tests/test_api.py:58:    assert body["published_at"] == "2021-05-04T00:00:00Z"',
    )
    w.view("shelfapi/models.py")
    w.view("shelfapi/serializers.py")
    w.bash(
        "python -m pytest tests/test_api.py -q",
        pytest_out(
            rng,
            ".......F..                                                               [100%]\n"
            "=================================== FAILURES ===================================\n"
            "___________________________ test_get_book_published ____________________________\n\n"
            "    def test_get_book_published(client, book_factory):\n"
            "        b = book_factory(published_on=datetime(2021, 5, 4, tzinfo=timezone.utc))\n"
            '        body = client.get(f"/books/{b.id}").json()\n'
            '>       assert body["published_at"] == "2021-05-04T00:00:00Z"\n'
            "E       AssertionError: assert None == '2021-05-04T00:00:00Z'\n\n"
            "tests/test_api.py:58: AssertionError\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_api.py::test_get_book_published - AssertionError: assert None == '2021-05-04T00:00:00Z'",
            "1 failed, 9 passed",
            1.0,
            2.2,
        ),
        code=1,
    )
    w.bash(
        "sed -n 35,60p shelfapi/api.py",
        '@router.post("/books", response_model=BookOut, status_code=201)\n'
        "def create_book(data: BookIn, session: Session = Depends(get_session)):\n"
        '    book = Book(**data.model_dump(exclude={"published_at"}), published_on=data.published_at)\n'
        "    session.add(book)\n    session.commit()\n    session.refresh(book)\n    return book\n\n\n"
        '@router.get("/books/{book_id}", response_model=BookOut)\n'
        "def get_book(book_id: int, session: Session = Depends(get_session)):\n"
        "    book = session.get(Book, book_id)\n    if book is None:\n"
        '        raise HTTPException(404, "book not found")\n    return book',
    )
    w.bash(
        "python - <<'EOF'\nfrom shelfapi.db import SessionLocal\nfrom shelfapi.models import Book\n"
        "with SessionLocal() as s:\n    b = s.get(Book, 1)\n    print(b.published_on, getattr(b, 'published_at', 'MISSING'))\nEOF",
        "2021-05-04 00:00:00+00:00 MISSING",
    )
    w.bash(
        "pip show pydantic sqlalchemy | grep -E '^(Name|Version)'",
        "Name: pydantic\nVersion: 2.6.3\nName: SQLAlchemy\nVersion: 2.0.28",
    )
    w.bash(
        "grep -rn 'from_attributes\\|validation_alias\\|AliasChoices' --include=*.py shelfapi",
        "shelfapi/serializers.py:9:    model_config = ConfigDict(from_attributes=True)\n"
        "shelfapi/serializers.py:25:    model_config = ConfigDict(from_attributes=True)",
    )
    w.bash(
        "git log --oneline -4 -- shelfapi/models.py shelfapi/serializers.py",
        "b3a9e12 Rename Book.published_at attribute to published_on\n7f10c44 Add cursor pagination\n"
        "2e8d6a1 BookOut includes author\n90ab3c7 Initial models",
    )
    w.bash(
        "git show b3a9e12 --stat",
        "commit b3a9e12f4c7d8e9a0b1c2d3e4f5a6b7c8d9e0f1a\n\n    Rename Book.published_at attribute to published_on\n\n"
        " shelfapi/api.py    | 2 +-\n shelfapi/models.py | 2 +-\n 2 files changed, 2 insertions(+), 2 deletions(-)",
    )
    r.turn(
        "The attribute was renamed to published_on (column name unchanged) and the serializer wasn't touched. Let me compare the two definitions carefully before deciding where to fix it."
    )
    mb = w.line_of("shelfapi/models.py", "class Book(Base)")
    sb = w.line_of("shelfapi/serializers.py", "class BookOut(BaseModel)")
    a_range = [mb, len(w.lines("shelfapi/models.py"))]
    b_range = [sb, sb + 11]
    w.view("shelfapi/models.py", a_range)
    w.view("shelfapi/serializers.py", b_range)
    thoughts = [
        (
            "Model has published_on mapped to column published_at. Check the schema again.",
            "Schema reads published_at from attributes.",
        ),
        ("Let me re-read the model column definition.", "And the schema field once more."),
        (
            "Is the mapped_column name what pydantic sees? Back to the model.",
            "Compare with BookOut.",
        ),
        ("Re-check the model.", "Re-check the schema."),
        ("Look at the model definition again.", "And BookOut again."),
        ("Maybe I misread the column; view the model.", "Then the serializer."),
        ("Once more, the model.", "And the serializer."),
        ("Check the model one more time.", "And BookOut."),
        ("The model again.", "The schema again."),
    ]
    for i, (ta, tb) in enumerate(thoughts):
        if i == 0:
            assert r.ncalls == 13
        r.turn(ta)
        w.view("shelfapi/models.py", a_range)
        r.turn(tb)
        w.view("shelfapi/serializers.py", b_range)
    return r


# ---------------------------------------------------------------- loop 4

CODEC_PY = '''
"""Encode/decode tick timestamps."""

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def encode(ts: datetime) -> dict:
    if ts.tzinfo is None:
        raise ValueError("naive datetime")
    return {"us": int((ts - EPOCH).total_seconds() * 1_000_000), "tz": ts.tzname()}


def decode(obj: dict) -> datetime:
    utc = EPOCH + timedelta(microseconds=obj["us"])
    return utc.replace(tzinfo=ZoneInfo(obj["tz"]))
'''


def codeact_rerun_same_test():
    """A tz round-trip test. Two genuine edits each change the failure; then the agent
    decides the remaining failure (CEST stored as an abbreviation, so the offset is wrong)
    must be flaky and re-runs the identical pytest command over and over with no edit in
    between, getting the same assertion every time, until the step cap."""
    rng = random.Random(3108)
    r = Run("codeact_rerun_same_test", SHAPE, "loop", 13)
    w = Workspace(r, "/workspace/tickstore", {"tickstore/codec.py": CODEC_PY})
    r.turn("Task: tests/test_codec.py::test_roundtrip_dst fails on main. Run it.")
    cmd = "cd /workspace/tickstore && python -m pytest tests/test_codec.py::test_roundtrip_dst -q"
    w.bash(
        cmd,
        pytest_out(
            rng,
            "F                                                                        [100%]\n"
            "=================================== FAILURES ===================================\n"
            "______________________________ test_roundtrip_dst _____________________________\n"
            'tickstore/codec.py:17: in decode\n    utc = EPOCH + timedelta(microseconds=obj["us"])\n'
            "E   NameError: name 'timedelta' is not defined\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_codec.py::test_roundtrip_dst - NameError: name 'timedelta' is not defined",
            "1 failed",
        ),
        code=1,
    )
    w.view("tickstore/codec.py")
    w.replace(
        "tickstore/codec.py",
        "from datetime import datetime, timezone\n",
        "from datetime import datetime, timedelta, timezone\n",
    )
    w.bash(
        cmd,
        pytest_out(
            rng,
            "F                                                                        [100%]\n"
            "=================================== FAILURES ===================================\n"
            "______________________________ test_roundtrip_dst _____________________________\n"
            'tickstore/codec.py:18: in decode\n    return utc.replace(tzinfo=ZoneInfo(obj["tz"]))\n'
            "E   zoneinfo._common.ZoneInfoNotFoundError: 'No time zone found with key CEST'\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_codec.py::test_roundtrip_dst - zoneinfo._common.ZoneInfoNotFoundError: 'No time zone found with key CEST'",
            "1 failed",
        ),
        code=1,
    )
    r.turn(
        "New failure: tzname() gives the abbreviation 'CEST', which isn't a zone key. Look at the test."
    )
    w.bash(
        "sed -n 1,30p tests/test_codec.py",
        "from datetime import datetime\nfrom zoneinfo import ZoneInfo\n\nfrom tickstore.codec import decode, encode\n\n\n"
        'def test_roundtrip_utc():\n    ts = datetime(2024, 1, 2, 3, 4, 5, tzinfo=ZoneInfo("UTC"))\n'
        "    assert decode(encode(ts)) == ts\n\n\n"
        'def test_roundtrip_dst():\n    ts = datetime(2024, 7, 1, 12, 0, tzinfo=ZoneInfo("Europe/Berlin"))\n'
        "    out = decode(encode(ts))\n    assert out == ts\n    assert out.utcoffset() == ts.utcoffset()",
    )
    w.bash(
        "grep -rn 'tzname\\|ZoneInfo\\|\"tz\"' --include=*.py tickstore",
        'tickstore/codec.py:13:    return {"us": int((ts - EPOCH).total_seconds() * 1_000_000), "tz": ts.tzname()}\n'
        'tickstore/codec.py:18:    return utc.replace(tzinfo=ZoneInfo(obj["tz"]))\n'
        'tickstore/store.py:41:        rows.append((symbol, enc["us"], enc["tz"], price))',
    )
    r.turn(
        "Fall back to a fixed offset when the name is not a zone key, and convert instead of replace."
    )
    w.replace(
        "tickstore/codec.py",
        '    return utc.replace(tzinfo=ZoneInfo(obj["tz"]))\n',
        "    try:\n"
        '        tz = ZoneInfo(obj["tz"])\n'
        "    except Exception:\n"
        "        tz = timezone.utc\n"
        "    return utc.astimezone(tz)\n",
    )
    fail = pytest_out(
        rng,
        "F                                                                        [100%]\n"
        "=================================== FAILURES ===================================\n"
        "______________________________ test_roundtrip_dst _____________________________\n\n"
        "    def test_roundtrip_dst():\n"
        '        ts = datetime(2024, 7, 1, 12, 0, tzinfo=ZoneInfo("Europe/Berlin"))\n'
        "        out = decode(encode(ts))\n        assert out == ts\n"
        ">       assert out.utcoffset() == ts.utcoffset()\n"
        "E       assert datetime.timedelta(0) == datetime.timedelta(seconds=7200)\n"
        "E        +  where datetime.timedelta(0) = <built-in method utcoffset of datetime.datetime object at 0x7f3a2c1e9b70>()\n\n"
        "tests/test_codec.py:15: AssertionError\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_codec.py::test_roundtrip_dst - assert datetime.timedelta(0) == datetime.timedelta(seconds=7200)",
        "1 failed",
    )
    w.bash(cmd, fail, code=1)
    r.turn(
        "Instants now compare equal; only the offset differs (0 vs 2h) because 'CEST' falls back to UTC."
    )
    w.bash(
        'python -c "import zoneinfo; print(len(zoneinfo.available_timezones()))"',
        "597",
    )
    w.view("tickstore/codec.py", [10, 14])
    w.bash(
        "python -m pytest tests/test_codec.py -q",
        pytest_out(
            rng,
            ".F..                                                                     [100%]\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_codec.py::test_roundtrip_dst - assert datetime.timedelta(0) == datetime.timedelta(seconds=7200)",
            "1 failed, 3 passed",
        ),
        code=1,
    )
    w.bash("git stash list && git status --short", " M tickstore/codec.py")
    w.bash(
        "cat pytest.ini 2>/dev/null || sed -n '/tool.pytest/,/^$/p' pyproject.toml",
        '[tool.pytest.ini_options]\naddopts = "-p no:randomly"\ntestpaths = ["tests"]',
    )
    r.turn("Nothing odd in the config. Maybe the zoneinfo cache made this flaky. Run it again.")
    assert r.ncalls == 13
    thoughts = [
        None,
        "Same. Possibly flaky; rerun.",
        "Still failing. Possibly a stale import; rerun.",
        "It might pass on a fresh run.",
        "Let me try once more; tz data can be cached per process.",
        "Again.",
        "Rerun to confirm.",
        "Try again.",
        "Rerun the test.",
        "Check once more whether it's intermittent.",
        "Run it again.",
        "One more time.",
        "Rerun.",
        "Again, to be sure.",
        "Maybe this time.",
        "Rerun.",
        "Once more.",
        "Rerun it.",
    ]
    for t in thoughts:
        if t:
            r.turn(t)
        addr = f"0x7f3a{rng.randrange(16**6):06x}"
        w.bash(cmd, fail.replace("0x7f3a2c1e9b70", addr), code=1, dur=rng.uniform(0.6, 1.1))
    return r


RUNS = [
    codeact_view_file_ranges,
    codeact_edit_test_new_failures,
    codeact_grep_exploration,
    codeact_move_helpers_refactor,
    codeact_slugify_same_block,
    codeact_old_str_tabs,
    codeact_view_pingpong,
    codeact_rerun_same_test,
]
