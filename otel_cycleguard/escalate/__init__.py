"""The escalation protocol and its collaborators: escalators and the progress store."""

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

__all__ = [
    "CHOICES",
    "TERMINATION_SCHEMA",
    "CallableEscalator",
    "ConsoleEscalator",
    "Decision",
    "DirectoryProgressStore",
    "EscalationRequest",
    "Escalator",
    "HumanDecision",
    "PendingDecisions",
    "ProgressStore",
    "TerminationReason",
    "TerminationRecord",
    "WebhookEscalator",
    "default_progress_dir",
    "evidence_dicts",
    "resume",
    "sign",
    "verify_signature",
]
