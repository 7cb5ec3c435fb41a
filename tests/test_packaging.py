"""Installing the package warns about nothing, and the zero-code runner has an extra."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_license_is_an_spdx_string_and_the_backend_understands_it():
    """The table form is deprecated; maturin (the backend: the core is compiled) reads the
    string form from 1.5 on."""
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    assert PYPROJECT["build-system"]["build-backend"] == "maturin"
    requires = " ".join(PYPROJECT["build-system"]["requires"])
    match = re.search(r"maturin>=1\.(\d+)", requires)
    assert match and int(match.group(1)) >= 5, requires


def test_the_compiled_core_is_an_abi3_extension_of_the_package():
    maturin = PYPROJECT["tool"]["maturin"]
    assert maturin["module-name"] == "otel_cycleguard._core"
    assert "pyo3/abi3-py310" in maturin["features"]
    from otel_cycleguard import _core

    assert Path(_core.__file__).name.startswith("_core.abi3")


def test_the_zero_code_runner_has_an_extra_and_the_readme_names_it():
    """`opentelemetry-instrument` comes with opentelemetry-distro, which the core never pulls in."""
    extra = PYPROJECT["project"]["optional-dependencies"]["autoinstrument"]
    assert any(req.startswith("opentelemetry-distro") for req in extra), extra
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install '.[autoinstrument]'" in readme


@pytest.mark.slow
def test_building_the_wheel_prints_no_warning(tmp_path):
    """A real `pip wheel .` from a copy of the sources: the build backend says nothing."""
    src = tmp_path / "src"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(
            ".venv",
            ".git",
            "tests",
            "build",
            "*.egg-info",
            "__pycache__",
            "cycleguard-demo",
            "_core*.so",
            "target",
        ),
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-cache-dir",
            "--disable-pip-version-check",
            "-w",
            str(tmp_path / "dist"),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert list((tmp_path / "dist").glob("otel_cycleguard-*.whl")), output
    assert "deprecated" not in output.lower(), output
    assert "warning" not in output.lower(), output
