"""The detector against its golden outputs (benchmarks/parity.py) on a handful of corpus runs.

``data/parity_runs.jsonl.gz`` holds the golden records of a few runs of the development corpus
chosen so that every rule and level the whole corpus fires appears at least once, plus one
silent run per source. The whole corpus: ``benchmarks/parity.py --check``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[2]
_FIXTURE = Path(__file__).with_name("data") / "parity_runs.jsonl.gz"


@pytest.fixture(scope="module")
def parity():
    sys.path.insert(0, str(_ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location(
            "parity_benchmark", _ROOT / "benchmarks" / "parity.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("parity_benchmark", None)
        sys.path.remove(str(_ROOT / "benchmarks"))


@pytest.mark.parametrize(
    "hibernate",
    [False, True],
    ids=["awake", "every_session_hibernated_after_every_step"],
)
def test_the_detector_reproduces_its_golden_outputs(parity, hibernate: bool) -> None:
    """Awake, and with every session packed and unpacked between any two observations."""
    index = parity.corpus_index(parity.DEFAULT_CORPUS, parity.EXTRA_CORPUS)
    if not index:
        pytest.skip(f"the development corpus is not here ({parity.DEFAULT_CORPUS})")
    result = parity.check(str(_FIXTURE), index, hibernate=hibernate)
    if result.runs == 0:
        pytest.skip("none of the fixture's runs is in the corpus here")
    assert result.signals > 0
    assert result.bad_runs == 0, "\n".join(result.report)
