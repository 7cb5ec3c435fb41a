"""Test helpers for grafana/: find promtool, run a real Prometheus, list the dashboard's queries.

Independent of otel_cycleguard, so the same helpers can later scrape the demo agent process.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

GRAFANA_DIR = Path(__file__).resolve().parents[2] / "grafana"
RULES_DIR = GRAFANA_DIR / "prometheus"
RECORDING_RULES = RULES_DIR / "recording_rules.yml"
ALERT_RULES = RULES_DIR / "alert_rules.yml"
RULE_FILES = (RECORDING_RULES, ALERT_RULES)
RULE_TESTS = sorted((RULES_DIR / "tests").glob("*.yml"))
DASHBOARD = GRAFANA_DIR / "dashboards" / "cycleguard.json"

INSTALL_HINT = (
    "The test command installs it (Debian: `apt-get install -y prometheus`, which provides "
    "`prometheus` and `promtool`); install it that way or put it on PATH."
)

# What Grafana would put in place of its variables, for running panel queries outside Grafana.
TEMPLATE_VALUES = {
    "agent": ".*",
    "__rate_interval": "1m",
    "__interval": "15s",
    "__range": "1h",
}
_VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)")


def find_tool(name: str) -> str:
    """The path of a Prometheus binary, or a test failure saying how to get it (never a skip)."""
    found = shutil.which(name) or next(
        (str(p) for p in (Path("/usr/bin") / name,) if p.exists()), None
    )
    if found is None:
        pytest.fail(f"{name} not found on PATH or in /usr/bin. {INSTALL_HINT}", pytrace=False)
    return found


def promtool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run promtool, capturing its output for assertion messages."""
    return subprocess.run(
        [find_tool("promtool"), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def substitute(expr: str) -> str:
    """Replace Grafana template variables with the values Grafana would use."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name not in TEMPLATE_VALUES:
            raise KeyError(f"no test value for template variable ${name} in {expr!r}")
        return TEMPLATE_VALUES[name]

    return _VARIABLE.sub(value, expr)


@dataclass(frozen=True)
class PanelQuery:
    panel: str
    ref_id: str
    expr: str

    @property
    def resolved(self) -> str:
        return substitute(self.expr)


def load_dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text())


def dashboard_queries(dashboard: dict[str, Any] | None = None) -> list[PanelQuery]:
    """Every PromQL expression of every panel, in panel order."""
    dashboard = dashboard if dashboard is not None else load_dashboard()
    return [
        PanelQuery(panel["title"], target.get("refId", ""), target.get("expr", ""))
        for panel in dashboard.get("panels", [])
        for target in panel.get("targets", [])
    ]


def recording_rule_names() -> list[str]:
    import yaml

    groups = yaml.safe_load(RECORDING_RULES.read_text())["groups"]
    return [rule["record"] for group in groups for rule in group["rules"]]


def free_port() -> int:
    """A loopback port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrometheusServer:
    """A real Prometheus on loopback that scrapes one target every second with our rules loaded.

    Use as a context manager; ``query(expr)`` returns the result list of an instant query.
    """

    def __init__(
        self, target: str, *, interval: str = "1s", rule_files: tuple[Path, ...] = RULE_FILES
    ) -> None:
        self.target = target
        self.interval = interval
        self.rule_files = tuple(Path(p).resolve() for p in rule_files)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def __enter__(self) -> PrometheusServer:
        self._tmp = tempfile.TemporaryDirectory(prefix="cycleguard-prom-")
        tmp = Path(self._tmp.name)
        config = tmp / "prometheus.yml"
        config.write_text(
            json.dumps(  # JSON is YAML: no YAML writer needed
                {
                    "global": {
                        "scrape_interval": self.interval,
                        "evaluation_interval": self.interval,
                    },
                    "rule_files": [str(p) for p in self.rule_files],
                    "scrape_configs": [
                        {
                            "job_name": "cycleguard",
                            "static_configs": [{"targets": [self.target]}],
                        }
                    ],
                }
            )
        )
        self._log = (tmp / "prometheus.log").open("wb")
        self._process = subprocess.Popen(
            [
                find_tool("prometheus"),
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        try:
            self._wait_ready()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def log(self) -> str:
        assert self._tmp is not None
        return (Path(self._tmp.name) / "prometheus.log").read_text(errors="replace")[-4000:]

    def _wait_ready(self, deadline: float = 60.0) -> None:
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            assert self._process is not None
            if self._process.poll() is not None:
                raise RuntimeError(f"prometheus exited early:\n{self.log()}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"prometheus not ready after {deadline}s:\n{self.log()}")

    def api(self, path: str, **params: str) -> Any:
        """GET an /api/v1 endpoint and return its ``data``, raising on an API error."""
        url = f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                body = json.load(response)
        except urllib.error.HTTPError as error:
            body = json.load(error)
        if body.get("status") != "success":
            raise RuntimeError(f"{path} {params}: {body.get('errorType')}: {body.get('error')}")
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """Instant query at the current time: the list of result samples."""
        return self.api("query", query=expr)["result"]

    def wait_for(self, expr: str, deadline: float = 60.0) -> list[dict[str, Any]]:
        """Poll ``expr`` until it returns data, or return the last (empty) result."""
        end = time.monotonic() + deadline
        result = self.query(expr)
        while not result and time.monotonic() < end:
            time.sleep(0.5)
            result = self.query(expr)
        return result

    def rules(self) -> Iterator[dict[str, Any]]:
        for group in self.api("rules")["groups"]:
            yield from group["rules"]
