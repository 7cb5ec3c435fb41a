"""``cycleguard analyze``: exit codes, messages, bad input, formats, and the whole corpus."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from _corpus import CORPUS

from otel_cycleguard.analyze import schema
from otel_cycleguard.cli import main

T0 = 1_704_067_200_000_000_000


def _attr(key: str, value) -> dict:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def otlp_line(run: str, calls: list[tuple[str, str, str]], trace_index: int = 1) -> str:
    """One OTLP JSON line: an agent span and its tool calls (hex ids, like the corpus)."""
    trace = f"{trace_index:032x}"
    root = f"{trace_index:08x}00000000"
    spans = [
        {
            "traceId": trace,
            "spanId": root,
            "name": "invoke_agent demo",
            "startTimeUnixNano": str(T0),
            "endTimeUnixNano": str(T0 + (len(calls) + 1) * 10**9),
            "attributes": [
                _attr("gen_ai.operation.name", "invoke_agent"),
                _attr("gen_ai.conversation.id", run),
            ],
        }
    ]
    for i, (tool, args, result) in enumerate(calls):
        spans.append(
            {
                "traceId": trace,
                "spanId": f"{trace_index:08x}{i + 1:08x}",
                "parentSpanId": root,
                "name": f"execute_tool {tool}",
                "startTimeUnixNano": str(T0 + i * 10**9),
                "endTimeUnixNano": str(T0 + i * 10**9 + 5 * 10**8),
                "attributes": [
                    _attr("gen_ai.operation.name", "execute_tool"),
                    _attr("gen_ai.tool.name", tool),
                    _attr("gen_ai.tool.call.arguments", args),
                    _attr("gen_ai.tool.call.result", result),
                ],
            }
        )
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})


LOOP = [("grep", '{"q": "x"}', "nothing")] * 12
CLEAN = [("read", f'{{"path": "{i}"}}', f"text {i}") for i in range(5)]


@pytest.fixture(name="loop_file")
def fixture_loop_file(tmp_path) -> Path:
    path = tmp_path / "loop.jsonl"
    path.write_text(otlp_line("looping", LOOP, 1) + "\n" + otlp_line("fine", CLEAN, 2) + "\n")
    return path


@pytest.fixture(name="clean_file")
def fixture_clean_file(tmp_path) -> Path:
    path = tmp_path / "clean.jsonl"
    path.write_text(otlp_line("fine", CLEAN, 2) + "\n")
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


class TestExitCodes:
    """0 clean, 1 loops with --fail-on-loop, 2 usage and input errors."""

    def test_clean_is_zero(self, capsys, clean_file):
        code, out, _ = run(capsys, "analyze", str(clean_file), "--fail-on-loop")
        assert code == 0
        assert "No loop signals" in out

    def test_loop_without_flag_is_zero(self, capsys, loop_file):
        assert run(capsys, "analyze", str(loop_file))[0] == 0

    def test_fail_on_loop(self, capsys, loop_file):
        code, out, _ = run(capsys, "analyze", str(loop_file), "--fail-on-loop")
        assert code == 1
        assert "looping" in out and "identical_call" in out

    def test_missing_file(self, capsys, tmp_path):
        code, _, err = run(capsys, "analyze", str(tmp_path / "nope.json"))
        assert code == 2
        assert "no such file or directory" in err
        assert err.count("\n") == 1

    def test_unknown_format_names_the_formats(self, capsys, tmp_path):
        path = tmp_path / "weird.json"
        path.write_text('{"hello": "world"}\n')
        code, _, err = run(capsys, "analyze", str(path))
        assert code == 2
        assert err.startswith("cycleguard analyze: error:")
        assert "OTLP JSON" in err and "Jaeger" in err and "Tempo" in err
        assert err.count("\n") == 1

    def test_usage_error(self, capsys):
        with pytest.raises(SystemExit) as caught:
            main(["analyze", "x", "--hitl", "maybe"])
        assert caught.value.code == 2
        assert "invalid choice" in capsys.readouterr().err

    def test_bad_override(self, capsys, loop_file):
        code, _, err = run(capsys, "analyze", str(loop_file), "--set", "identical_call.warn=99")
        assert code == 2
        assert "warn" in err and err.count("\n") == 1

    def test_unknown_profile(self, capsys, loop_file):
        code, _, err = run(capsys, "analyze", str(loop_file), "--profile", "nosuch")
        assert code == 2
        assert "nosuch" in err


class TestBadInput:
    """Skipped input is reported with its line and counted; good lines are still analysed."""

    def test_invalid_line_counted(self, capsys, tmp_path):
        path = tmp_path / "mixed.jsonl"
        path.write_text(otlp_line("a", LOOP, 1) + "\n{broken\n" + otlp_line("b", CLEAN, 2) + "\n")
        code, out, err = run(capsys, "analyze", str(path), "--format", "json")
        assert code == 0
        assert f"{path}:2: invalid JSON line" in err
        report = json.loads(out)
        assert report["summary"]["input_problems"] == 1
        assert report["summary"]["input_problems_by_kind"] == {"invalid_json": 1}
        assert report["problems"][0]["line"] == 2
        assert report["summary"]["sessions"] == 2
        jsonschema.validate(report, schema())

    def test_truncated_gzip(self, capsys, tmp_path):
        lines = "".join(otlp_line(f"r{i}", CLEAN, i + 1) + "\n" for i in range(200))
        data = gzip.compress(lines.encode())
        path = tmp_path / "cut.jsonl.gz"
        path.write_bytes(data[: len(data) * 2 // 3])
        code, out, err = run(capsys, "analyze", str(path), "--format", "json")
        assert code == 0
        assert "gzip" in err
        report = json.loads(out)
        assert report["summary"]["input_problems_by_kind"] == {"truncated": 1}
        assert 0 < report["summary"]["sessions"] < 200

    def test_directory_skips_unknown_files(self, capsys, tmp_path, loop_file):
        (tmp_path / "README.md").write_text("# notes\n")
        code, out, _ = run(capsys, "analyze", str(tmp_path), "--format", "json")
        assert code == 0
        report = json.loads(out)
        assert report["summary"]["input_problems_by_kind"] == {"unknown_format": 1}
        assert report["summary"]["sessions"] == 2

    def test_stdin(self, capsys, monkeypatch, loop_file):
        import io

        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(loop_file.read_bytes())))
        code, out, _ = run(capsys, "analyze", "-", "--format", "json")
        assert code == 0
        assert json.loads(out)["summary"]["sessions_with_loops"] == 1


class TestOptions:
    """Profiles, overrides, hitl and output files reach the report."""

    def test_set_override_changes_thresholds(self, capsys, loop_file):
        _, out, _ = run(
            capsys,
            "analyze",
            str(loop_file),
            "--format",
            "json",
            "--set",
            "identical_call.warn=2",
            "--set",
            "identical_call.term=3",
        )
        session = next(s for s in json.loads(out)["sessions"] if s["session"] == "looping")
        terms = [s["tool_call_index"] for s in session["signals"] if s["level"] == "term"]
        assert terms[0] == 2

    def test_profile_coding(self, capsys, loop_file):
        _, out, _ = run(
            capsys, "analyze", str(loop_file), "--format", "json", "--profile", "coding"
        )
        report = json.loads(out)
        assert report["settings"]["profile"] == "coding"
        session = next(s for s in report["sessions"] if s["session"] == "looping")
        assert session["profile"] == "coding"
        assert next(s["tool_call_index"] for s in session["signals"] if s["level"] == "term") == 6

    def test_hitl_continue(self, capsys, loop_file):
        _, out, _ = run(capsys, "analyze", str(loop_file), "--format", "json", "--hitl", "continue")
        report = json.loads(out)
        assert report["settings"]["hitl"] == "continue"
        assert report["summary"]["terminated"] == 0
        assert report["summary"]["escalations"]["hitl"] >= 1

    @pytest.mark.parametrize("fmt", ["text", "json", "markdown", "html"])
    def test_output_file(self, capsys, loop_file, tmp_path, fmt):
        target = tmp_path / f"report.{fmt}"
        code, out, _ = run(capsys, "analyze", str(loop_file), "--format", fmt, "-o", str(target))
        assert code == 0 and out == ""
        text = target.read_text()
        assert "looping" in text
        if fmt == "json":
            jsonschema.validate(json.loads(text), schema())
        if fmt == "markdown":
            assert text.startswith("# Agent loop analysis")
            assert "terminated" in text
        if fmt == "html":
            assert text.startswith("<!DOCTYPE html>")
            assert "http://" not in text and "https://" not in text
            assert "terminated" in text and "self-heal" in text

    def test_help_has_examples(self, capsys):
        with pytest.raises(SystemExit) as caught:
            main(["analyze", "--help"])
        assert caught.value.code == 0
        out = capsys.readouterr().out
        for text in ("--fail-on-loop", "--hitl", "examples:", "exit codes", "Jaeger"):
            assert text in out

    def test_console_script(self, loop_file):
        """The installed entry point runs (subprocess), with the documented exit code."""
        exe = shutil.which("cycleguard", path=str(Path(sys.executable).parent))
        assert exe is not None, "cycleguard console script not installed in the venv"
        done = subprocess.run(
            [exe, "analyze", str(loop_file), "--fail-on-loop", "--no-progress"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 1, done.stderr
        assert "loop episodes" in done.stdout


LONG_SESSION = "looping-session-with-a-really-long-identifier-0123456789abcdef"
HEADERS = ("session", "dimension", "level", "from", "to", "tool", "ended by",
           "wasted calls / s / tokens")  # fmt: skip


def _console_script() -> str:
    exe = shutil.which("cycleguard", path=str(Path(sys.executable).parent))
    assert exe is not None, "cycleguard console script not installed in the venv"
    return exe


def _cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real console script, stdout and stderr to pipes."""
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")}
    return subprocess.run(
        [_console_script(), *argv], capture_output=True, text=True, timeout=60,
        env={**base, **(env or {})},
    )  # fmt: skip


@pytest.fixture(name="long_file")
def fixture_long_file(tmp_path) -> Path:
    path = tmp_path / "long.jsonl"
    path.write_text(otlp_line(LONG_SESSION, LOOP, 1) + "\n" + otlp_line("fine", CLEAN, 2) + "\n")
    return path


BLOCK_RICH = """\
raise ModuleNotFoundError("No module named 'rich'", name="rich")
"""


class TestCoreInstall:
    """The text report and the progress line need nothing beyond the core install."""

    def test_console_script_without_rich_prints_the_report(self, tmp_path, long_file):
        shim = tmp_path / "shim"
        shim.mkdir()
        (shim / "rich.py").write_text(BLOCK_RICH)  # shadows the real one: `import rich` fails
        done = _cli("analyze", str(long_file), env={"PYTHONPATH": str(shim)})
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr and done.stderr == ""
        assert "loop episodes" in done.stdout and LONG_SESSION in done.stdout

    def test_progress_line_without_rich(self, tmp_path, long_file):
        shim = tmp_path / "shim"
        shim.mkdir()
        (shim / "rich.py").write_text(BLOCK_RICH)
        code = (
            "import sys; from otel_cycleguard import cli; cli._PROGRESS_DELAY_S = 0; "
            "from otel_cycleguard.analyze import replay; replay.PROGRESS_EVERY = 1; "
            f"sys.exit(cli.main(['analyze', {str(long_file)!r}, '--progress']))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
            env={**os.environ, "PYTHONPATH": str(shim)},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "analyzing: " in done.stderr and "spans" in done.stderr
        assert "Traceback" not in done.stderr

    def test_a_missing_extra_is_one_line_naming_it(self, tmp_path, loop_file):
        shim = tmp_path / "shim"
        shim.mkdir()
        (shim / "yaml.py").write_text(BLOCK_RICH.replace("rich", "yaml"))
        config = tmp_path / "cycleguard.yaml"
        config.write_text("profile: coding\n")
        done = _cli(
            "analyze", str(loop_file), "--config", str(config), env={"PYTHONPATH": str(shim)}
        )
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and "otel-cycleguard[yaml]" in done.stderr

    def test_any_missing_module_is_one_line_not_a_traceback(self, capsys, monkeypatch, loop_file):
        from otel_cycleguard import cli

        def missing(*args):
            raise ModuleNotFoundError("No module named 'google.protobuf'", name="google.protobuf")

        monkeypatch.setattr(cli, "_write_report", missing)
        code, _, err = run(capsys, "analyze", str(loop_file))
        assert code == 2
        assert err == (
            "cycleguard analyze: error: this needs the 'service' extra (google.protobuf is not "
            "installed): pip install 'otel-cycleguard[service]'\n"
        )


class TestWidth:
    """Reports into a pipe or file keep every column; COLUMNS fits them without dropping one."""

    def test_a_pipe_gets_every_column_whole(self, long_file):
        done = _cli("analyze", str(long_file))
        assert done.returncode == 0, done.stderr
        header = next(line for line in done.stdout.splitlines() if line.startswith("session "))
        assert header.split() == " ".join(HEADERS).split()
        row = next(line for line in done.stdout.splitlines() if line.startswith(LONG_SESSION))
        assert row.endswith("7 / 7.0 / 0")

    def test_columns_is_honoured_and_no_column_is_dropped(self, long_file):
        done = _cli("analyze", str(long_file), env={"COLUMNS": "100"})
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert max(len(line) for line in lines) <= 100, "\n".join(lines)
        header = next(line for line in lines if line.startswith("session "))
        assert header.rstrip().endswith(HEADERS[-1])
        assert all(name in header for name in HEADERS)
        start = lines.index(header) + 2  # past the header and its rule of dashes
        width = len(lines[start - 1].split()[0])  # the session column's rule
        assert width < len(LONG_SESSION)  # folded onto several lines, and still whole:
        assert LONG_SESSION in "".join(line[:width].strip() for line in lines[start:])
        assert "7 / 7.0 / 0" in done.stdout

    def test_output_file_is_not_cut(self, long_file, tmp_path):
        target = tmp_path / "report.txt"
        assert main(["analyze", str(long_file), "-o", str(target)]) == 0
        text = target.read_text()
        assert LONG_SESSION in text and HEADERS[-1] in text and "7 / 7.0 / 0" in text


def _unreadable(path: Path) -> None:
    """A file that exists but cannot be read, also for root (who ignores permission bits)."""
    if os.geteuid() == 0:
        path.symlink_to("/proc/self/mem")  # reading offset 0 fails with EIO
    else:
        path.write_text("{}")
        path.chmod(0)


class TestNothingLost:
    """Empty, invalid and unreadable input is named, the rest reported, nothing read is exit 2."""

    def test_an_empty_file_is_named_and_exits_2(self, capsys, tmp_path):
        path = tmp_path / "empty.jsonl"
        path.write_bytes(b"")
        code, out, err = run(capsys, "analyze", str(path))
        assert code == 2 and out == ""
        assert err.splitlines() == [
            f"cycleguard: skipped {path}: empty (0 bytes)",
            "cycleguard analyze: error: nothing readable: every input was skipped (1 listed above)",
        ]

    def test_a_wholly_invalid_json_file_exits_2(self, capsys, tmp_path):
        path = tmp_path / "broken.json"
        path.write_text('{"resourceSpans": [\n{"oops"\n')
        code, out, err = run(capsys, "analyze", str(path), "--format", "json")
        assert code == 2 and out == ""
        assert f"skipped {path}: invalid JSON document" in err
        assert "nothing readable" in err

    def test_an_unreadable_file_in_a_directory_costs_only_itself(self, tmp_path, loop_file):
        (tmp_path / "empty.jsonl").write_bytes(b"")
        _unreadable(tmp_path / "locked.jsonl")
        done = _cli("analyze", str(tmp_path), "--format", "json", "--no-progress")
        assert done.returncode == 0, done.stderr
        skipped = sorted(line for line in done.stderr.splitlines() if "skipped" in line)
        assert len(skipped) == 2, done.stderr
        assert skipped[0].startswith(f"cycleguard: skipped {tmp_path / 'empty.jsonl'}: empty")
        assert skipped[1].startswith(
            f"cycleguard: skipped {tmp_path / 'locked.jsonl'}: cannot read"
        )
        report = json.loads(done.stdout)
        assert report["summary"]["sessions"] == 2 and report["summary"]["sessions_with_loops"] == 1
        assert report["summary"]["input_problems_by_kind"] == {"empty": 1, "unreadable": 1}
        jsonschema.validate(report, schema())

    def test_an_empty_directory_exits_2(self, capsys, tmp_path):
        code, _, err = run(capsys, "analyze", str(tmp_path))
        assert code == 2 and "no trace files found" in err and err.count("\n") == 1


@pytest.mark.slow
class TestCorpus:
    """The whole development corpus is read without error and the JSON validates."""

    def test_corpus(self, capsys, tmp_path):
        if not CORPUS.is_dir():
            pytest.skip(f"{CORPUS} is not here")
        target = tmp_path / "corpus.json"
        code, _, err = run(
            capsys, "analyze", str(CORPUS), "--format", "json", "-o", str(target), "--no-progress"
        )
        assert code == 0, err
        report = json.loads(target.read_text())
        jsonschema.validate(report, schema())
        summary = report["summary"]
        assert summary["sessions"] == 1088
        # README.md and runs.jsonl sit next to the traces: skipped, counted, nothing else
        assert set(summary["input_problems_by_kind"]) <= {"unknown_format", "not_a_trace"}
        assert summary["sessions_with_loops"] > 0


def _many_sessions_file(tmp_path: Path) -> Path:
    """Twelve sessions, loops and clean runs, one conversation spread over two traces."""
    lines = [
        otlp_line(f"run-{i}", LOOP if i % 3 == 0 else CLEAN, trace_index=i + 1) for i in range(12)
    ]
    lines.append(otlp_line("run-0", LOOP[:4], trace_index=50))  # run-0's second trace
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


class TestJobs:
    """--jobs N: N processes, each a share of the sessions; the report does not change."""

    def test_two_processes_write_the_report_one_writes(self, capsys, tmp_path):
        from otel_cycleguard.analyze import session_part

        path = _many_sessions_file(tmp_path)
        sessions = [f"run-{i}" for i in range(12)]
        assert {session_part(s, 2) for s in sessions} == {0, 1}  # both processes have work
        reports = []
        for jobs in ("1", "2"):
            target = tmp_path / f"jobs{jobs}.json"
            code, _, err = run(
                capsys, "analyze", str(path), "--jobs", jobs, "--format", "json", "-o", str(target)
            )
            assert code == 0, err
            reports.append(target.read_text())
        assert reports[0] == reports[1]
        report = json.loads(reports[1])
        assert report["summary"]["sessions"] == 12
        run0 = next(s for s in report["sessions"] if s["session"] == "run-0")
        assert len(run0["trace_ids"]) == 2

    def test_standard_input_is_replayed_by_one_process(self, tmp_path):
        exe = shutil.which("cycleguard", path=str(Path(sys.executable).parent))
        assert exe is not None
        done = subprocess.run(
            [exe, "analyze", "-", "--jobs", "2", "--format", "json", "--no-progress"],
            input=_many_sessions_file(tmp_path).read_text(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "read only once" in done.stderr
        assert json.loads(done.stdout)["summary"]["sessions"] == 12

    @pytest.mark.parametrize("value", ["0", "-1", "two"])
    def test_jobs_must_be_a_positive_number_or_auto(self, capsys, value):
        with pytest.raises(SystemExit) as caught:
            main(["analyze", "x", "--jobs", value])
        assert caught.value.code == 2
        assert "expected a whole number >= 1 or 'auto'" in capsys.readouterr().err


def test_a_worker_that_dies_is_a_clear_error_not_a_traceback(capsys, monkeypatch, loop_file):
    from concurrent.futures.process import BrokenProcessPool

    import otel_cycleguard.analyze.replay as replay

    def broken(*args, **kwargs):
        raise BrokenProcessPool("A process in the process pool was terminated abruptly")

    monkeypatch.setattr(replay, "analyze_paths", broken)
    code, _, err = run(capsys, "analyze", str(loop_file), "--jobs", "2")
    assert code == 2
    assert "worker process stopped" in err and "fewer --jobs" in err
    assert err.count("\n") == 1
