"""The escalation protocol and its collaborators: escalators and the progress store.

Lazy (PEP 562): the replay needs the ladder and the progress records, not the webhook client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from otel_cycleguard._lazy import lazy_exports as _lazy_exports

_HITL = "otel_cycleguard.escalate.hitl"
_PROGRESS = "otel_cycleguard.escalate.progress"
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "CHOICES",
            "CallableEscalator",
            "ConsoleEscalator",
            "Decision",
            "EscalationRequest",
            "Escalator",
            "HumanDecision",
            "PendingDecisions",
            "WebhookEscalator",
            "sign",
            "verify_signature",
        ),
        _HITL,
    ),
    **dict.fromkeys(
        (
            "TERMINATION_SCHEMA",
            "DirectoryProgressStore",
            "ProgressStore",
            "TerminationReason",
            "TerminationRecord",
            "default_progress_dir",
            "evidence_dicts",
            "resume",
        ),
        _PROGRESS,
    ),
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from otel_cycleguard.escalate.hitl import (
        CHOICES,
        CallableEscalator,
        ConsoleEscalator,
        Decision,
        EscalationRequest,
        Escalator,
        HumanDecision,
        PendingDecisions,
        WebhookEscalator,
        sign,
        verify_signature,
    )
    from otel_cycleguard.escalate.progress import (
        TERMINATION_SCHEMA,
        DirectoryProgressStore,
        ProgressStore,
        TerminationReason,
        TerminationRecord,
        default_progress_dir,
        evidence_dicts,
        resume,
    )

__getattr__, __dir__ = _lazy_exports(__name__, globals(), _EXPORTS)
