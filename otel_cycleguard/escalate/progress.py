"""Resumable terminations: what was saved when a run was stopped, and where.

A terminated run must not lose its work (docs/detection.md, "Saved progress"): the evidence, the session's counters
and the caller's checkpoint payload are saved through a pluggable :class:`ProgressStore` and the
run is marked ``resumable``. The default store writes one JSON file per termination, atomically,
so a crash mid-write never leaves a half record where a resume would find it.
"""

from __future__ import annotations

import contextlib
import enum
import hashlib
import json
import os
import re
import tempfile
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from otel_cycleguard.config import DEFAULT_PROGRESS_DIR, ConfigError, load_config
from otel_cycleguard.detect.signals import CallDigest, Dimension, Signal

__all__ = [
    "DEFAULT_PROGRESS_DIR",
    "TERMINATION_SCHEMA",
    "DirectoryProgressStore",
    "ProgressStore",
    "TerminationReason",
    "TerminationRecord",
    "default_progress_dir",
    "evidence_dicts",
    "resume",
]

TERMINATION_SCHEMA = "cycleguard.termination/v1"

_RESUME_HINT = "You can resume the task or review the completed work."


class TerminationReason(str, enum.Enum):
    """Why a run was stopped; the code dashboards and callers switch on."""

    CYCLE_DETECTED = "cycle_detected"
    ERROR_STREAK_TERMINATED = "error_streak_terminated"
    BUDGET_EXCEEDED = "budget_exceeded"

    @property
    def user_message(self) -> str:
        """The sentence shown to the end user, who never sees dimensions or thresholds."""
        return _USER_MESSAGES[self]

    @classmethod
    def for_dimension(cls, dimension: Dimension | str) -> TerminationReason:
        """The reason code for a TERM in ``dimension``: every repetition is a cycle."""
        value = dimension.value if isinstance(dimension, Dimension) else str(dimension)
        if value == Dimension.ERROR_STREAK.value:
            return cls.ERROR_STREAK_TERMINATED
        if value == Dimension.BUDGET.value:
            return cls.BUDGET_EXCEEDED
        return cls.CYCLE_DETECTED


_USER_MESSAGES: dict[TerminationReason, str] = {
    TerminationReason.CYCLE_DETECTED: (
        f"The agent stopped after repeating the same operation. {_RESUME_HINT}"
    ),
    TerminationReason.ERROR_STREAK_TERMINATED: (
        f"The agent stopped after the same step kept failing. {_RESUME_HINT}"
    ),
    TerminationReason.BUDGET_EXCEEDED: (
        f"The agent stopped after reaching its configured limit on steps, tokens or time. "
        f"{_RESUME_HINT}"
    ),
}


def evidence_dicts(digests: Iterable[CallDigest]) -> list[dict[str, Any]]:
    """JSON-ready evidence: tool names and hashes only, never raw arguments or results."""
    return [
        {
            "tool": d.tool,
            "args_hash": d.args_hash,
            "result_hash": d.result_hash,
            "error": d.error,
        }
        for d in digests
    ]


@dataclass(frozen=True)
class TerminationRecord:
    """Everything needed to explain and resume a terminated run.

    ``checkpoint`` is whatever JSON-serialisable payload the agent registered (None if it did
    not). ``user_message`` defaults to the reason's message. ``hitl_decision`` records how the
    human step ended (``terminate``, ``timeout``, ``error``) when there was one.
    """

    session: str
    reason: TerminationReason
    agent: str | None = None
    dimension: str | None = None
    evidence: list[dict[str, Any]] = field(default_factory=list)
    counters: dict[str, Any] = field(default_factory=dict)
    checkpoint: Any = None
    explanation: str = ""
    hitl_decision: str | None = None
    user_message: str = ""
    resumable: bool = True
    created_at: float = field(default_factory=time.time)
    schema: str = TERMINATION_SCHEMA

    def __post_init__(self) -> None:
        # Accept the plain string code too (records come back from JSON and from callers).
        reason = TerminationReason(self.reason)
        object.__setattr__(self, "reason", reason)
        if isinstance(self.dimension, Dimension):
            object.__setattr__(self, "dimension", self.dimension.value)
        if not self.user_message:
            object.__setattr__(self, "user_message", reason.user_message)

    @classmethod
    def from_signal(
        cls,
        signal: Signal,
        *,
        counters: Mapping[str, Any] | None = None,
        checkpoint: Any = None,
        hitl_decision: str | None = None,
        reason: TerminationReason | None = None,
    ) -> TerminationRecord:
        """The record for a TERM signal, with the reason derived from its dimension."""
        return cls(
            session=signal.session,
            agent=signal.agent,
            reason=reason or TerminationReason.for_dimension(signal.dimension),
            dimension=signal.dimension.value,
            evidence=evidence_dicts(signal.evidence),
            counters=dict(counters or {}),
            checkpoint=checkpoint,
            explanation=signal.explanation,
            hitl_decision=hitl_decision,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (schema ``cycleguard.termination/v1``)."""
        return {
            "schema": self.schema,
            "session": self.session,
            "agent": self.agent,
            "reason": self.reason.value,
            "user_message": self.user_message,
            "dimension": self.dimension,
            "explanation": self.explanation,
            "hitl_decision": self.hitl_decision,
            "evidence": list(self.evidence),
            "counters": dict(self.counters),
            "checkpoint": self.checkpoint,
            "resumable": self.resumable,
            "created_at": self.created_at,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TerminationRecord:
        """Rebuild a record; refuses other schemas rather than guessing at their meaning."""
        schema = data.get("schema")
        if schema != TERMINATION_SCHEMA:
            raise ValueError(f"unsupported termination record schema: {schema!r}")
        return cls(
            session=str(data["session"]),
            agent=data.get("agent"),
            reason=TerminationReason(data["reason"]),
            dimension=data.get("dimension"),
            evidence=list(data.get("evidence") or []),
            counters=dict(data.get("counters") or {}),
            checkpoint=data.get("checkpoint"),
            explanation=str(data.get("explanation") or ""),
            hitl_decision=data.get("hitl_decision"),
            user_message=str(data.get("user_message") or ""),
            resumable=bool(data.get("resumable", True)),
            created_at=float(data.get("created_at", 0.0)),
            schema=TERMINATION_SCHEMA,
        )


@runtime_checkable
class ProgressStore(Protocol):
    """Where termination records go. ``save`` returns a reference that ``load`` accepts.

    ``load`` raises ``KeyError`` for an unknown reference. ``save`` raises ``TypeError`` (or
    ``ValueError`` for NaN) when the checkpoint is not JSON-serialisable; the caller decides
    whether to save again without it.
    """

    def save(self, record: TerminationRecord) -> str: ...

    def load(self, ref: str) -> TerminationRecord: ...


_REF_RE = re.compile(r"^[0-9a-f]{32}-[0-9]{13,}-[0-9a-f]{8}\.json$")


def _session_digest(session: str) -> str:
    """A file-name-safe, fixed-length stand-in for any session key (slashes, unicode, 10 KB)."""
    return hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def default_progress_dir() -> Path:
    """Where the guard saves progress unless told otherwise, so ``resume(ref)`` finds it.

    That is ``escalation.progress_dir`` of the configuration the environment describes
    (``CYCLEGUARD_ESCALATION__PROGRESS_DIR``, or the file ``CYCLEGUARD_CONFIG`` names), and by
    default :data:`DEFAULT_PROGRESS_DIR`, relative to the working directory. A configuration
    that does not load leaves the built-in default: the guard could not have run with it.
    """
    try:
        return Path(load_config().escalation.progress_dir)
    except ConfigError:
        return Path(DEFAULT_PROGRESS_DIR)


class DirectoryProgressStore:
    """One JSON file per termination in a directory, written atomically.

    File names are ``<sha256(session)[:32]>-<unix ms>-<random>.json``, so any session key is
    safe and a session's records sort by time. The reference is the bare file name. Files are
    created mode 0600: evidence and checkpoints may be sensitive.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_progress_dir()

    def __repr__(self) -> str:
        return f"DirectoryProgressStore({str(self.path)!r})"

    def save(self, record: TerminationRecord) -> str:
        """Write temp file in the same directory, fsync, ``os.replace``: all or nothing."""
        # Serialise first: an unserialisable checkpoint must not leave a temp file behind.
        # ASCII escapes keep even lone surrogates in a session key writable and round-trippable.
        data = json.dumps(record.to_dict(), ensure_ascii=True, indent=2, allow_nan=False)
        self.path.mkdir(parents=True, exist_ok=True)
        millis = int(record.created_at * 1000)
        ref = f"{_session_digest(record.session)}-{millis:013d}-{uuid.uuid4().hex[:8]}.json"
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.path)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path / ref)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._fsync_dir()
        return ref

    def load(self, ref: str) -> TerminationRecord:
        """Read one record; the reference must be a name this store made (no paths)."""
        if not _REF_RE.match(ref):
            raise KeyError(ref)
        try:
            text = (self.path / ref).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise KeyError(ref) from None
        return TerminationRecord.from_dict(json.loads(text))

    def refs(self, session: str | None = None) -> list[str]:
        """References of saved records, oldest first, optionally for one session only."""
        if not self.path.is_dir():
            return []
        prefix = _session_digest(session) + "-" if session is not None else ""
        names = [
            p.name
            for p in self.path.iterdir()
            if _REF_RE.match(p.name) and p.name.startswith(prefix)
        ]
        return sorted(names, key=lambda n: (n.split("-")[1], n))

    def _fsync_dir(self) -> None:
        """Make the rename itself durable; not possible on every platform, so best effort."""
        try:
            dir_fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(dir_fd)
        except OSError:
            pass
        finally:
            os.close(dir_fd)


def resume(ref: str, store: ProgressStore | None = None) -> TerminationRecord:
    """Load a terminated run to continue it; refuses records not marked resumable.

    Without a store, ``ref`` may be a path to a record file (with its directory), or a bare
    reference (``CycleTerminated.progress_ref``) in the directory the guard saves to by
    default (:func:`default_progress_dir`); pass the store the guard was given otherwise.
    """
    if store is None:
        candidate = Path(ref)
        if candidate.parent != Path("."):
            store = DirectoryProgressStore(candidate.parent)
            ref = candidate.name
        else:
            store = DirectoryProgressStore()
    record = store.load(ref)
    if not record.resumable:
        raise ValueError(f"termination record {ref!r} is not resumable")
    return record
