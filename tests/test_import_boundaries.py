"""Honest boundaries: what importing one part of the package costs, checked in a fresh process.

``import otel_cycleguard`` must be cheap (the root is lazy), the detection core must load no
OpenTelemetry, prometheus-client or webhook client, and the OTLP service's converters must not
reach into the offline analyzer.
"""

from __future__ import annotations

import json
import subprocess
import sys

_HEAVY = ("opentelemetry", "prometheus_client", "httpx", "http.client")


def _loaded_after(statement: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``statement``."""
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return set(json.loads(out))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in _HEAVY))


def test_package_root_imports_none_of_its_modules():
    """``import otel_cycleguard`` loads the root only: every public name is imported on use."""
    loaded = _loaded_after("import otel_cycleguard")
    ours = sorted(m for m in loaded if m.startswith("otel_cycleguard."))
    assert ours == ["otel_cycleguard._lazy"]
    assert _heavy(loaded) == []


def test_detection_core_loads_no_opentelemetry_prometheus_or_webhook_client():
    """``import otel_cycleguard.detect`` loads neither OpenTelemetry, prometheus-client nor
    the HTTP client of the webhook."""
    assert _heavy(_loaded_after("import otel_cycleguard.detect")) == []


def test_detection_core_loads_no_pydantic_and_nothing_else_of_the_package():
    """The core depends on nothing else in the package (its settings are plain data); the
    compiled extension ``_core`` is part of it, and the root package's lazy loader comes with
    any submodule."""
    loaded = _loaded_after("import otel_cycleguard.detect")
    assert not any(m == "pydantic" or m.startswith("pydantic.") for m in loaded)
    part_of_core = {"otel_cycleguard", "otel_cycleguard._core", "otel_cycleguard._lazy"}
    others = {m for m in loaded if m.startswith("otel_cycleguard.")} - part_of_core
    assert others and all(m.startswith("otel_cycleguard.detect") for m in others), sorted(others)


def test_offline_analyzer_loads_no_opentelemetry_or_prometheus():
    """``cycleguard analyze`` replays files: it needs neither the SDK nor the metrics client."""
    assert _heavy(_loaded_after("import otel_cycleguard.analyze")) == []


def test_service_converters_do_not_import_the_analyzer():
    """The service decodes OTLP with the shared ``wire`` package, not ``analyze`` internals."""
    loaded = _loaded_after("import otel_cycleguard.service.convert")
    assert sorted(m for m in loaded if m.startswith("otel_cycleguard.analyze")) == []
