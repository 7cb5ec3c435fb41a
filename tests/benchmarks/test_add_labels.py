"""quality/sources/add_labels.py: a new source's blind labels are appended only when they fit."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "quality" / "sources" / "add_labels.py"


@pytest.fixture(scope="module")
def add_labels():
    spec = importlib.util.spec_from_file_location("add_labels_tool", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


RUNS = {
    "src/a": {"run_id": "src/a", "source": "src", "outcome": {"success": False}, "n_tool_calls": 9},
    "src/b": {"run_id": "src/b", "source": "src", "outcome": {"success": True}, "n_tool_calls": 4},
}


def _loop(first: int, last: int, escaped: bool = False) -> dict:
    return {
        "type": "identical_repeat",
        "first_step": first,
        "last_step": last,
        "unit": ["t"],
        "repetitions": last - first + 1,
        "escaped": escaped,
        "note": "the same call, the same answer",
    }


def _label(rid: str, episodes: list[dict], terminal: bool = False, **changes) -> dict:
    meta = RUNS[rid]
    label = {
        "run_id": rid,
        "source": "src",
        "outcome_success": meta["outcome"]["success"],
        "n_tool_calls": meta["n_tool_calls"],
        "has_loop": bool(episodes),
        "terminal_loop": terminal,
        "episodes": episodes,
        "labeller_note": "read in full",
        "round": "first-contact",
    }
    label.update(changes)
    return label


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RUNS.values()))
    sample = tmp_path / "sample_src.txt"
    sample.write_text("src/b\nsrc/a\n")
    labels = tmp_path / "labels_sources.jsonl"
    labels.write_text(json.dumps({"run_id": "other/x"}) + "\n")
    return {"corpus": corpus, "sample": sample, "labels": labels, "dir": tmp_path}


def _write(path: Path, labels: list[dict]) -> str:
    path.write_text("".join(json.dumps(label) + "\n" for label in labels))
    return str(path)


def _append(add_labels, layout, files: list[str]):
    return add_labels.append_labels(
        "src", files, str(layout["corpus"]), str(layout["labels"]), str(layout["sample"])
    )


def test_labels_that_fit_are_appended_in_the_samples_order(add_labels, layout):
    a = _write(layout["dir"] / "one.jsonl", [_label("src/a", [_loop(6, 8)], terminal=True)])
    b = _write(layout["dir"] / "two.jsonl", [_label("src/b", [])])
    errors, appended = _append(add_labels, layout, [a, b])
    assert (errors, appended) == ([], 2)
    lines = layout["labels"].read_text().splitlines()
    assert [json.loads(line)["run_id"] for line in lines] == ["other/x", "src/b", "src/a"]
    assert json.loads(lines[2])["terminal_loop"] is True
    assert json.loads(lines[2])["round"] == "first-contact"


@pytest.mark.parametrize(
    ("label", "says"),
    [
        (_label("src/a", [], outcome_success=True), "outcome_success"),
        (_label("src/a", [], n_tool_calls=8), "n_tool_calls"),
        (_label("src/a", [_loop(6, 9)]), "outside the run"),
        (_label("src/a", [{**_loop(1, 3), "type": "stuck"}]), "unknown episode type"),
        (_label("src/a", [_loop(1, 3, escaped=True)], terminal=True), "terminal_loop"),
        (_label("src/a", [], has_loop=True), "has_loop"),
    ],
)
def test_a_label_that_disagrees_with_the_run_or_the_rubric_writes_nothing(
    add_labels, layout, label, says
):
    before = layout["labels"].read_text()
    files = [_write(layout["dir"] / "l.jsonl", [label, _label("src/b", [])])]
    errors, appended = _append(add_labels, layout, files)
    assert appended == 0
    assert any(says in error for error in errors), errors
    assert layout["labels"].read_text() == before


def test_a_sample_not_covered_exactly_writes_nothing(add_labels, layout):
    before = layout["labels"].read_text()
    files = [_write(layout["dir"] / "l.jsonl", [_label("src/b", [])])]
    errors, appended = _append(add_labels, layout, files)
    assert appended == 0
    assert errors == ["src/a: in the sample, not labelled"]
    assert layout["labels"].read_text() == before


def test_a_run_labelled_twice_is_refused(add_labels, layout):
    twice = [_label("src/a", []), _label("src/a", []), _label("src/b", [])]
    errors, appended = _append(add_labels, layout, [_write(layout["dir"] / "l.jsonl", twice)])
    assert appended == 0
    assert any("labelled twice" in error for error in errors)
