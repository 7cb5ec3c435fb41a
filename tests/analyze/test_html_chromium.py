"""The HTML report in a real browser: headless Chromium renders it without console errors.

Needs Chromium: ``apt-get update && apt-get install -y chromium``. A missing browser FAILS
this test (it is not skipped), so a CI image without it is noticed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from otel_cycleguard.cli import main

pytestmark = pytest.mark.slow

INSTALL = "apt-get update && apt-get install -y chromium"
T0 = 1_704_067_200_000_000_000


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(f"headless Chromium is needed for this test and is missing; install it: {INSTALL}")


def run_chromium(page: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    """Load ``page`` headless (no network), with console messages logged to stderr."""
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    return subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,1600",
            *extra,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def console_messages(stderr: str) -> list[str]:
    """What the page wrote to its console (errors, uncaught exceptions, logs)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def _attr(key: str, value: str) -> dict:
    return {"key": key, "value": {"stringValue": value}}


def trace_line(index: int, calls: list[tuple[str, str]]) -> str:
    trace, root = f"{index:032x}", f"{index:08x}00000000"
    spans = [
        {
            "traceId": trace,
            "spanId": root,
            "name": "invoke_agent demo",
            "startTimeUnixNano": str(T0),
            "endTimeUnixNano": str(T0 + 10**12),
            "attributes": [
                _attr("gen_ai.operation.name", "invoke_agent"),
                _attr("gen_ai.conversation.id", f"run-{index}"),
            ],
        }
    ]
    for i, (tool, args) in enumerate(calls):
        spans.append(
            {
                "traceId": trace,
                "spanId": f"{index:08x}{i + 1:08x}",
                "parentSpanId": root,
                "name": f"execute_tool {tool}",
                "startTimeUnixNano": str(T0 + i * 10**9),
                "endTimeUnixNano": str(T0 + i * 10**9 + 10**8),
                "attributes": [
                    _attr("gen_ai.operation.name", "execute_tool"),
                    _attr("gen_ai.tool.name", tool),
                    _attr("gen_ai.tool.call.arguments", args),
                    _attr("gen_ai.tool.call.result", "same"),
                ],
            }
        )
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})


@pytest.fixture(name="report")
def fixture_report(tmp_path) -> Path:
    """An HTML report of 60 sessions: one loops to termination, the rest are clean."""
    lines = [trace_line(1, [("read", '{"p": 1}'), ("edit", '{"p": 1}')] + [("grep", "{}")] * 14)]
    lines += [trace_line(i, [("read", f'{{"p": {j}}}') for j in range(4)]) for i in range(2, 61)]
    source = tmp_path / "traces.jsonl"
    source.write_text("\n".join(lines) + "\n")
    target = tmp_path / "report.html"
    assert main(["analyze", str(source), "--format", "html", "-o", str(target)]) == 0
    return target


class TestChromium:
    """Screenshot, no console errors, and the page script really ran."""

    def test_screenshot_without_console_errors(self, report, tmp_path):
        png = tmp_path / "report.png"
        done = run_chromium(report, tmp_path, f"--screenshot={png}")
        assert done.returncode == 0, done.stderr[-2000:]
        assert png.exists() and png.stat().st_size > 10_000
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert console_messages(done.stderr) == []

    def test_script_ran(self, report, tmp_path):
        """The 'only sessions with signals' filter hid the 59 clean sessions."""
        done = run_chromium(report, tmp_path, "--dump-dom")
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.count("sess clean hidden") == 59
        assert "terminated" in done.stdout
        assert console_messages(done.stderr) == []

    def test_console_errors_would_be_seen(self, tmp_path):
        """Control: a page that throws is caught by the same check."""
        page = tmp_path / "bad.html"
        page.write_text("<html><body><script>notDefined();</script></body></html>")
        done = run_chromium(page, tmp_path, "--dump-dom")
        assert any("notDefined" in line for line in console_messages(done.stderr))
