"""The progress store keeps terminated runs whole, findable and resumable."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider

import otel_cycleguard
from otel_cycleguard.detect.signals import (
    BreakStrategy,
    CallDigest,
    CycleClass,
    Dimension,
    Level,
    Signal,
)
from otel_cycleguard.escalate import (
    DirectoryProgressStore,
    ProgressStore,
    TerminationReason,
    TerminationRecord,
    default_progress_dir,
    resume,
)
from otel_cycleguard.integrations.generic import set_default_engine

CHECKPOINT = {"step": 41, "files_done": ["a.py", "b.py"], "notes": "halfway", "ratio": 0.5}


@pytest.fixture(name="store")
def fixture_store(tmp_path: Path) -> DirectoryProgressStore:
    return DirectoryProgressStore(tmp_path / "progress")


def _record(session: str = "sess-1", **changes: Any) -> TerminationRecord:
    fields: dict[str, Any] = {
        "session": session,
        "agent": "coder",
        "reason": TerminationReason.CYCLE_DETECTED,
        "dimension": "identical_call",
        "evidence": [{"tool": "read", "args_hash": "ab", "result_hash": "cd", "error": False}],
        "counters": {"identical_call": 5, "tool_calls": 120},
        "checkpoint": CHECKPOINT,
        "hitl_decision": "timeout",
        **changes,
    }
    return TerminationRecord(**fields)


def _files(store: DirectoryProgressStore) -> list[str]:
    return sorted(p.name for p in store.path.iterdir())


class TestSaveAndLoad:
    """What is saved comes back equal, in a file of its own."""

    def test_round_trip_keeps_every_field(self, store: DirectoryProgressStore) -> None:
        record = _record()
        loaded = store.load(store.save(record))
        assert loaded == record
        assert loaded.evidence[0]["tool"] == "read"
        assert loaded.counters == {"identical_call": 5, "tool_calls": 120}
        assert loaded.checkpoint == CHECKPOINT
        assert loaded.resumable is True
        assert loaded.reason is TerminationReason.CYCLE_DETECTED

    def test_file_is_versioned_json(self, store: DirectoryProgressStore) -> None:
        ref = store.save(_record())
        data = json.loads((store.path / ref).read_text(encoding="utf-8"))
        assert data["schema"] == "cycleguard.termination/v1"
        assert data["reason"] == "cycle_detected"
        assert data["user_message"] == (
            "The agent stopped after repeating the same operation. "
            "You can resume the task or review the completed work."
        )

    def test_each_termination_gets_its_own_file(self, store: DirectoryProgressStore) -> None:
        first, second = store.save(_record()), store.save(_record())
        assert first != second
        assert _files(store) == sorted([first, second])

    def test_no_temp_files_are_left_behind(self, store: DirectoryProgressStore) -> None:
        refs = [store.save(_record(f"s{i}")) for i in range(5)]
        assert _files(store) == sorted(refs)

    def test_unserialisable_checkpoint_fails_without_leaving_files(
        self, store: DirectoryProgressStore
    ) -> None:
        store.save(_record())
        before = _files(store)
        with pytest.raises(TypeError):
            store.save(_record(checkpoint={"handle": object()}))
        assert _files(store) == before

    def test_failed_replace_removes_the_temp_file(
        self, store: DirectoryProgressStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def refuse(src: str, dst: str) -> None:
            raise OSError("disk full")

        store.path.mkdir(parents=True)
        monkeypatch.setattr(os, "replace", refuse)
        with pytest.raises(OSError, match="disk full"):
            store.save(_record())
        assert _files(store) == []

    def test_files_are_private_to_the_user(self, store: DirectoryProgressStore) -> None:
        ref = store.save(_record())
        assert stat.S_IMODE((store.path / ref).stat().st_mode) & 0o077 == 0

    def test_missing_directory_is_created(self, tmp_path: Path) -> None:
        store = DirectoryProgressStore(tmp_path / "a" / "b" / "c")
        assert store.load(store.save(_record())).session == "sess-1"

    def test_store_satisfies_the_protocol(self, store: DirectoryProgressStore) -> None:
        assert isinstance(store, ProgressStore)


class TestSessionKeys:
    """Any session key is safe as a file name and survives the round trip."""

    @pytest.mark.parametrize(
        "session",
        [
            "../../etc/passwd",
            "a/b\\c:d*e?f",
            "sessão-会话-🚀",
            "nul\x00byte",
            "lone\ud800surrogate",
            "",
            "x" * 10_000,
        ],
        ids=["traversal", "separators", "unicode", "nul", "surrogate", "empty", "10kb"],
    )
    def test_odd_session_key_round_trips(self, store: DirectoryProgressStore, session: str) -> None:
        ref = store.save(_record(session))
        assert "/" not in ref and "\\" not in ref and len(ref) < 100
        assert (store.path / ref).is_file()
        assert store.load(ref).session == session

    def test_refs_lists_one_sessions_records_oldest_first(
        self, store: DirectoryProgressStore
    ) -> None:
        late = store.save(_record("a/b", created_at=2_000_000_000.0))
        early = store.save(_record("a/b", created_at=1_000_000_000.0))
        store.save(_record("other"))
        assert store.refs("a/b") == [early, late]
        assert len(store.refs()) == 3


class TestLoadRefusals:
    """Only references the store made are read: no paths, no foreign schemas."""

    @pytest.mark.parametrize("ref", ["../secret.json", "/etc/passwd", "nope.json", ""])
    def test_foreign_or_unknown_ref_is_a_key_error(
        self, store: DirectoryProgressStore, ref: str
    ) -> None:
        with pytest.raises(KeyError):
            store.load(ref)

    def test_deleted_record_is_a_key_error(self, store: DirectoryProgressStore) -> None:
        ref = store.save(_record())
        (store.path / ref).unlink()
        with pytest.raises(KeyError):
            store.load(ref)

    def test_other_schema_version_is_refused(self, store: DirectoryProgressStore) -> None:
        ref = store.save(_record())
        path = store.path / ref
        data = json.loads(path.read_text(encoding="utf-8"))
        data["schema"] = "cycleguard.termination/v9"
        path.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(ValueError, match="schema"):
            store.load(ref)


class TestResume:
    """resume() hands back a resumable run from a store, a file path or the default dir."""

    def test_resume_from_a_store(self, store: DirectoryProgressStore) -> None:
        ref = store.save(_record())
        assert resume(ref, store).checkpoint == CHECKPOINT

    def test_resume_from_a_file_path(self, store: DirectoryProgressStore) -> None:
        ref = store.save(_record())
        assert resume(str(store.path / ref)).counters["identical_call"] == 5

    def test_resume_from_the_configured_directory(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("CYCLEGUARD_ESCALATION__PROGRESS_DIR", str(tmp_path / "default"))
        assert default_progress_dir() == tmp_path / "default"
        ref = DirectoryProgressStore().save(_record())
        assert resume(ref).session == "sess-1"

    def test_a_run_terminated_under_the_default_configuration_resumes_by_ref(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """install() with no store and no settings, a loop to termination, resume(ref): found."""
        for name in [n for n in os.environ if n.startswith(("CYCLEGUARD_", "XDG_"))]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))  # keep $HOME clean
        monkeypatch.chdir(tmp_path)
        provider = TracerProvider()
        processor = otel_cycleguard.install(tracer_provider=provider)
        assert processor is not None
        tracer = provider.get_tracer("agent")
        tool = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "grep",
            "gen_ai.tool.call.arguments": '{"pattern": "TODO"}',
            "gen_ai.tool.call.result": "no matches",
        }
        agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "conv-7"}
        try:
            with (
                tracer.start_as_current_span("invoke_agent a", attributes=agent),
                pytest.raises(otel_cycleguard.CycleTerminated) as caught,
            ):
                for _ in range(20):  # no escalator: the second TERM terminates
                    tracer.start_span("execute_tool grep", attributes=tool).end()
                    otel_cycleguard.check()
        finally:
            processor.escalation.shutdown(wait=False)
            provider.shutdown()
            set_default_engine(None)
        ref = caught.value.progress_ref
        assert ref and (tmp_path / ".cycleguard" / "progress" / ref).is_file()
        record = otel_cycleguard.resume(ref)
        assert record.session == "conv-7"
        assert record.reason is TerminationReason.CYCLE_DETECTED

    def test_not_resumable_record_is_refused(self, store: DirectoryProgressStore) -> None:
        ref = store.save(_record(resumable=False))
        with pytest.raises(ValueError, match="not resumable"):
            resume(ref, store)


class TestRecord:
    """Reason codes carry their user message; records build from signals."""

    @pytest.mark.parametrize(
        ("dimension", "reason"),
        [
            (Dimension.IDENTICAL_CALL, TerminationReason.CYCLE_DETECTED),
            (Dimension.TEXT_LOOP, TerminationReason.CYCLE_DETECTED),
            (Dimension.ERROR_STREAK, TerminationReason.ERROR_STREAK_TERMINATED),
            ("budget", TerminationReason.BUDGET_EXCEEDED),
        ],
    )
    def test_reason_follows_the_dimension(
        self, dimension: Dimension | str, reason: TerminationReason
    ) -> None:
        assert TerminationReason.for_dimension(dimension) is reason

    def test_every_reason_has_a_resumable_user_message(self) -> None:
        messages = {reason.user_message for reason in TerminationReason}
        assert len(messages) == len(TerminationReason)
        assert all(m.startswith("The agent stopped") for m in messages)
        assert all("resume the task" in m for m in messages)

    def test_user_message_defaults_from_reason_string(self) -> None:
        record = TerminationRecord(session="s", reason="error_streak_terminated")
        assert record.reason is TerminationReason.ERROR_STREAK_TERMINATED
        assert record.user_message == TerminationReason.ERROR_STREAK_TERMINATED.user_message

    def test_unknown_reason_is_refused(self) -> None:
        with pytest.raises(ValueError):
            TerminationRecord(session="s", reason="bored")

    def test_record_from_signal_holds_evidence_counters_and_checkpoint(self) -> None:
        signal = Signal(
            dimension=Dimension.ERROR_STREAK,
            level=Level.TERM,
            session="sess-9",
            streak=8,
            threshold=8,
            profile="general",
            tool="pytest",
            category="action",
            step=30,
            model_turn_index=None,
            cycle_class=CycleClass.TOOL_CYCLE,
            break_strategy=BreakStrategy.CHANGE_ARGUMENTS_OR_TOOL,
            explanation="pytest failed 8 times in a row",
            evidence=(CallDigest("pytest", "11", "22", error=True),),
            agent="fixer",
        )
        record = TerminationRecord.from_signal(
            signal, counters={"error_streak": 8}, checkpoint={"branch": "wip"}
        )
        assert record.reason is TerminationReason.ERROR_STREAK_TERMINATED
        assert (record.session, record.agent, record.dimension) == (
            "sess-9",
            "fixer",
            "error_streak",
        )
        assert record.evidence == [
            {"tool": "pytest", "args_hash": "11", "result_hash": "22", "error": True}
        ]
        assert record.counters == {"error_streak": 8}
        assert record.checkpoint == {"branch": "wip"}
        assert record.explanation == "pytest failed 8 times in a row"
