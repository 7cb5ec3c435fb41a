"""quality/same_answer.py: what counts as the same answer to changing arguments."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_QUALITY = Path(__file__).resolve().parents[2] / "quality"


@pytest.fixture(scope="module")
def same_answer():
    sys.path.insert(0, str(_QUALITY))  # it reads the reading aid's masks (show_run.py)
    try:
        spec = importlib.util.spec_from_file_location(
            "same_answer_tool", _QUALITY / "same_answer.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("same_answer_tool", None)
        sys.path.remove(str(_QUALITY))


def _call(args: str, result: str, *, tool: str = "search", size: int = 300, failed=False):
    return (tool, f"call:{tool}:{args}", f"result:{result}", size, failed)


def test_reworded_calls_with_one_answer_make_one_stretch(same_answer):
    calls = [_call(f"query {i}", "the same four papers") for i in range(4)]
    calls.append(_call("query 4", "something new"))
    assert same_answer.stretches(calls, 200) == [(4, 3)]


def test_the_same_call_again_is_not_a_changed_argument(same_answer):
    calls = [_call("query", "the same four papers") for _ in range(4)]
    assert same_answer.stretches(calls, 200) == []


def test_a_failure_short_answer_or_other_tool_ends_the_stretch(same_answer):
    calls = [
        _call("a", "same"),
        _call("b", "same"),
        _call("c", "same", failed=True),
        _call("d", "same"),
        _call("e", "same", size=10),
        _call("f", "same", tool="fetch"),
        _call("g", "same", tool="fetch"),
    ]
    assert same_answer.stretches(calls, 40) == [(2, 1), (2, 6)]


def test_the_last_episode_is_the_one_a_terminal_loop_ends_in(same_answer):
    label = {
        "terminal_loop": True,
        "episodes": [
            {"first_step": 2, "last_step": 5, "escaped": True},
            {"first_step": 9, "last_step": 14, "escaped": False},
        ],
    }
    assert same_answer.last_episode(label) == (9, 14)
    assert same_answer.last_episode({"terminal_loop": False, "episodes": []}) is None
