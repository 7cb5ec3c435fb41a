"""What a human (or the lack of one) decided about an escalation: plain values, no I/O.

Kept apart from the escalators (``hitl.py``, which speaks HTTP) so that the pure escalation
policy and the offline replay can use them without loading a client.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Decision", "HumanDecision"]


class Decision(str, enum.Enum):
    """The outcome of one escalation: three human choices and two failure modes."""

    CONTINUE = "continue"
    TERMINATE = "terminate"
    MODIFY = "modify"
    TIMEOUT = "timeout"
    ERROR = "error"


@dataclass(frozen=True)
class HumanDecision:
    """What came back. ``modify`` carries the instruction to inject as a user message.

    ``detail`` says, for logs, why a failure happened or who answered.
    """

    decision: Decision
    message: str | None = None
    detail: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "decision", Decision(self.decision))
        if self.decision is Decision.MODIFY and not (self.message and self.message.strip()):
            raise ValueError("a 'modify' decision needs a non-empty message")

    @property
    def failed(self) -> bool:
        """True for timeout and error: the protocol terminates, fail-closed."""
        return self.decision in (Decision.TIMEOUT, Decision.ERROR)

    @property
    def terminates(self) -> bool:
        """True when the run must stop: an explicit terminate or any failure."""
        return self.decision is Decision.TERMINATE or self.failed
