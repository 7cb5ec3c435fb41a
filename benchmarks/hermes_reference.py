"""Hermes agent's tool-call guardrail, the reference the detector is timed beside.

Hermes agent (NousResearch, MIT) guards its own tool loop with ``ToolCallGuardrailController``
(``agent/tool_guardrails.py``): ``before_call`` / ``after_call`` per call, counting identical
failures, failures per tool and read-only calls that keep returning the same result. It is the
nearest thing to this project that ships in a real agent, so the benchmark times it on the same
calls in the same run.

Nothing of it is copied into this repository: the published wheel is fetched from the package
registry at run time (``pip download --no-deps``), the four modules the guardrail imports are
unpacked from it into the cache, and it is imported from there. The rest of hermes-agent (and
its dependencies) is not installed. Where the registry cannot be reached the benchmark says so
and leaves the column out.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["HERMES_VERSION", "load_guardrail"]

HERMES_VERSION = "0.19.0"
_MODULES = (
    "agent/__init__.py",
    "agent/jiter_preload.py",
    "agent/tool_guardrails.py",
    "agent/tool_result_classification.py",
    "utils.py",
)
_CACHE = Path.home() / ".cache" / "otel-cycleguard" / f"hermes-agent-{HERMES_VERSION}"


def _unpacked() -> Path:
    """The folder holding the guardrail's modules, fetched and unpacked on first use."""
    marker = _CACHE / "agent" / "tool_guardrails.py"
    if marker.exists():
        return _CACHE
    _CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(_CACHE),
         f"hermes-agent=={HERMES_VERSION}"],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    wheel = next(_CACHE.glob(f"hermes_agent-{HERMES_VERSION}-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        for name in _MODULES:
            archive.extract(name, _CACHE)
    return _CACHE


def load_guardrail() -> tuple[Any, Any] | str:
    """(``ToolCallGuardrailController``, ``ToolCallGuardrailConfig``), or why they are not
    available (one line)."""
    try:
        folder = _unpacked()
    except Exception as exc:  # no registry, no pip: the benchmark runs without the reference
        detail = getattr(exc, "stderr", b"") or str(exc)
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        lines = detail.strip().splitlines() or [type(exc).__name__]
        return f"hermes-agent {HERMES_VERSION} not fetched: {lines[-1]}"
    try:
        module = _import_isolated(folder, "agent.tool_guardrails")
    except Exception as exc:
        return f"hermes-agent {HERMES_VERSION} guardrail not importable: {exc}"
    return module.ToolCallGuardrailController, module.ToolCallGuardrailConfig


def _import_isolated(folder: Path, name: str) -> ModuleType:
    """Import ``name`` from ``folder`` without touching anything already imported.

    Hermes's modules are top-level ``agent`` and ``utils``, names another program (or another
    test) may already have taken. For the import, whatever holds those names in
    ``sys.modules`` steps aside and ``folder`` goes first on ``sys.path``; afterwards Hermes's
    modules leave ``sys.modules`` (kept alive under private names) and the previous owners
    come back, so neither side ever sees the other's ``agent``.
    """
    roots = {Path(entry).parts[0].removesuffix(".py") for entry in _MODULES}

    def owned(key: str) -> bool:
        return key.split(".", 1)[0] in roots

    stashed = {key: sys.modules.pop(key) for key in list(sys.modules) if owned(key)}
    sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module(name)
    finally:
        sys.path.remove(str(folder))
        for key in [key for key in sys.modules if owned(key)]:
            sys.modules[f"_hermes_reference.{key}"] = sys.modules.pop(key)
        sys.modules.update(stashed)
    return module
