"""install() and the opentelemetry-instrument entry point, including a real subprocess run."""

from __future__ import annotations

import inspect
import logging
import os
import shutil
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import NoOpTracerProvider

from otel_cycleguard import CycleGuardSpanProcessor, install, load_config
from otel_cycleguard.otel import autoconfig

AGENT = textwrap.dedent(
    """
    from opentelemetry import trace

    tracer = trace.get_tracer("tiny-agent")
    with tracer.start_as_current_span(
        "invoke_agent tiny", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        for _ in range(6):
            with tracer.start_as_current_span(
                "execute_tool grep",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "grep",
                    "gen_ai.tool.call.arguments": '{"pattern": "TODO"}',
                    "gen_ai.tool.call.result": "no matches",
                },
            ):
                pass
    """
)


class TestInstall:
    """install() on an explicit or global provider."""

    def test_is_idempotent_on_one_provider(self):
        """A second install returns the same processor and adds nothing to the provider."""
        provider = TracerProvider()
        first = install(load_config(environ={}), tracer_provider=provider)
        processors = provider._active_span_processor._span_processors
        second = install(load_config(environ={}), tracer_provider=provider)
        assert isinstance(first, CycleGuardSpanProcessor)
        assert second is first
        assert provider._active_span_processor._span_processors == processors
        assert sum(isinstance(p, CycleGuardSpanProcessor) for p in processors) == 1

    def test_separate_providers_get_separate_processors(self):
        """Idempotence is per provider, not process-wide."""
        one = install(load_config(environ={}), tracer_provider=TracerProvider())
        two = install(load_config(environ={}), tracer_provider=TracerProvider())
        assert one is not two

    def test_non_sdk_provider_logs_and_returns_none(self, caplog):
        """A provider that is not the SDK's gets a clear warning, no exception, and None."""
        with caplog.at_level(logging.WARNING, logger="otel_cycleguard"):
            assert install(tracer_provider=NoOpTracerProvider()) is None
        (record,) = [r for r in caplog.records if r.name == "otel_cycleguard"]
        assert record.levelno == logging.WARNING
        assert "not installed" in record.getMessage()
        assert "NoOpTracerProvider" in record.getMessage()

    def test_global_proxy_provider_logs_and_returns_none(self, caplog, monkeypatch):
        """With no SDK provider set globally (the API's proxy), install declines with a log line."""
        from opentelemetry import trace

        monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
        with caplog.at_level(logging.WARNING, logger="otel_cycleguard"):
            assert install() is None
        assert "ProxyTracerProvider" in caplog.text

    def test_install_logs_the_profile(self, caplog):
        """A successful install says so at INFO, naming the profile."""
        with caplog.at_level(logging.INFO, logger="otel_cycleguard"):
            install(load_config(environ={}, profile="coding"), tracer_provider=TracerProvider())
        assert "installed (profile coding)" in caplog.text


class TestPostInstrumentEntryPoint:
    """The `opentelemetry_post_instrument` hook as the contrib loader calls it."""

    def test_entry_point_is_declared_and_loads(self):
        """The installed distribution exposes `cycleguard` in the post-instrument group."""
        (ep,) = [
            e for e in entry_points(group="opentelemetry_post_instrument") if e.name == "cycleguard"
        ]
        assert ep.load() is autoconfig.post_instrument

    def test_loader_calls_it_without_arguments(self):
        """The contrib loader does `entry_point.load()()`: post_instrument must accept that."""
        loader = pytest.importorskip("opentelemetry.instrumentation.auto_instrumentation._load")
        assert "entry_point.load()()" in inspect.getsource(loader._load_instrumentors)
        inspect.signature(autoconfig.post_instrument).bind()

    def test_does_nothing_unless_enabled(self, monkeypatch):
        """Without CYCLEGUARD_ENABLED the hook leaves the global provider alone."""
        called = []
        monkeypatch.setattr(autoconfig, "_hook_failed", False)
        monkeypatch.delenv("CYCLEGUARD_ENABLED", raising=False)
        monkeypatch.setattr(autoconfig, "install", lambda *a, **k: called.append(1))
        autoconfig.post_instrument()
        monkeypatch.setenv("CYCLEGUARD_ENABLED", "false")
        autoconfig.post_instrument()
        assert called == []
        monkeypatch.setenv("CYCLEGUARD_ENABLED", "TRUE")
        autoconfig.post_instrument()
        assert called == [1]

    def test_a_bad_config_does_not_stop_the_agent(self, monkeypatch, caplog):
        """An invalid CYCLEGUARD_* value is logged; the hook itself never raises."""
        from opentelemetry import trace

        provider = TracerProvider()
        monkeypatch.setattr(trace, "_TRACER_PROVIDER", provider)
        monkeypatch.setenv("CYCLEGUARD_ENABLED", "1")
        monkeypatch.setenv("CYCLEGUARD_PROFILE", "no-such-profile")
        monkeypatch.setattr(autoconfig, "_hook_failed", False)
        with caplog.at_level(logging.ERROR, logger="otel_cycleguard"):
            autoconfig.post_instrument()
            autoconfig.post_instrument()  # the pre- and the post-instrument hook
        [record] = caplog.records
        assert "otel-cycleguard is OFF" in record.getMessage()
        assert "profile: unknown profile 'no-such-profile'" in record.getMessage()
        assert record.exc_info is None
        assert autoconfig.installed_on(provider) is None


def _instrument_bin() -> str | None:
    candidate = Path(sys.executable).with_name("opentelemetry-instrument")
    return str(candidate) if candidate.exists() else shutil.which("opentelemetry-instrument")


@pytest.mark.slow
class TestOpentelemetryInstrumentSubprocess:
    """An unchanged agent run under `opentelemetry-instrument` is guarded when enabled."""

    def run(self, tmp_path: Path, enabled: bool, **extra_env: str) -> str:
        binary = _instrument_bin()
        if binary is None:
            pytest.skip("opentelemetry-instrument not installed (opentelemetry-distro)")
        script = tmp_path / "agent.py"
        script.write_text(AGENT)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CYCLEGUARD_", "OTEL_", "PYTEST"))
        }
        env["OTEL_SERVICE_NAME"] = "tiny-agent"
        # The agent uses only the OTel API, so no library instrumentor is needed; and the contrib
        # loader re-raises an instrumentor's failure, which skips every post_instrument hook
        # (seen here with a mismatched `mcp` instrumentor). Keep the run about the hook.
        env["OTEL_PYTHON_DISABLED_INSTRUMENTATIONS"] = "*"
        if enabled:
            env["CYCLEGUARD_ENABLED"] = "true"
        env.update(extra_env)
        result = subprocess.run(
            [
                binary,
                "--traces_exporter",
                "console",
                "--metrics_exporter",
                "none",
                "--logs_exporter",
                "none",
                sys.executable,
                str(script),
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        assert '"name": "execute_tool grep"' in result.stdout
        self.stderr = result.stderr
        return result.stdout

    def test_a_bad_configuration_says_so_in_one_line_and_the_agent_runs(self, tmp_path):
        """No traceback: one line naming the field and saying the guard is off."""
        out = self.run(
            tmp_path, enabled=True, CYCLEGUARD_PROFILES__GENERAL__IDENTICAL_CALL__WARN="9"
        )
        assert "cycleguard.signal" not in out
        lines = [line for line in self.stderr.splitlines() if "cycleguard" in line]
        assert lines == [
            "otel-cycleguard is OFF, this agent runs unguarded: bad configuration: "
            "profiles.general.identical_call: warn threshold (9) must not exceed term (5)"
        ], self.stderr
        assert "Traceback" not in self.stderr

    def test_enabled_run_emits_the_signal_span(self, tmp_path):
        """With CYCLEGUARD_ENABLED=true the console exporter prints a cycleguard.signal span."""
        out = self.run(tmp_path, enabled=True)
        assert out.count('"name": "cycleguard.signal"') == 2
        assert '"name": "cycleguard.term"' in out
        assert '"cycleguard.dimension": "identical_call"' in out

    def test_without_the_switch_nothing_is_added(self, tmp_path):
        """Without CYCLEGUARD_ENABLED the same run has no cycleguard span."""
        out = self.run(tmp_path, enabled=False)
        assert "cycleguard" not in out
