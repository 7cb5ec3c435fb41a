"""What a tool's name decides is kept per name and profile (rust/cycleguard-core/src/names.rs):
a call reads the same with the name kept, not yet kept, or never kept (past the bound)."""

from __future__ import annotations

from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.detect import Detector, ToolCall


def _signals(session, calls):
    out = []
    for call in calls:
        out.extend(
            (s.dimension.value, s.level.value, s.step) for s in session.observe_tool_call(call)
        )
    return out


def _loop(tool: str) -> list[ToolCall]:
    """A re-run of the same failing check after edits of one region (several rules fire)."""
    calls = []
    for i in range(14):
        calls.append(ToolCall("edit", {"path": "a.py", "old_str": "x = 1", "new_str": f"x = {i}"}))
        calls.append(
            ToolCall(tool, {"command": "pytest -q"}, "FAILED test_a - assert 1 == 2", error=True)
        )
    return calls


def test_names_past_the_tables_bound_read_as_kept_ones():
    full = Detector(CycleGuardConfig())
    filler = full.session("filler")
    for i in range(4200):  # a harness that invents a name per call fills the table
        filler.observe_tool_call(ToolCall(f"tool_{i}", {"q": i}, "ok"))
    fresh = Detector(CycleGuardConfig())
    expected = _signals(fresh.session("s"), _loop("run_shell"))
    assert expected  # the loop fires: the comparison below can fail
    assert _signals(full.session("s"), _loop("run_shell")) == expected


def test_read_only_metadata_still_decides_a_kept_names_kind():
    det = Detector(CycleGuardConfig())
    plain = det.session("plain")
    calls = [ToolCall("frobnicate", {"page": i}, f"page {i}") for i in range(60)]
    plain_signals = _signals(plain, calls)  # an unknown tool: never a TERM by category alone
    assert "term" not in {level for _, level, _ in plain_signals}
    marked = det.session("marked")  # the same name, now kept, declared read-only
    read_only = [
        ToolCall("frobnicate", {"page": i}, f"page {i}", read_only=True) for i in range(60)
    ]
    assert ("category_streak", "term") in {
        (d, level) for d, level, _ in _signals(marked, read_only)
    }
