"""What the OTLP receivers need of the service: a narrow intake interface, not the service.

The HTTP and gRPC receivers offer converted spans, count requests and read a few limits; the
HTTP front also serves readiness, metrics, recent signals and human decisions. They are typed
against these protocols, so a receiver can be tested with a small fake and the service can
change its insides without touching them.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

from otel_cycleguard.spans import SpanData

__all__ = ["Endpoints", "Intake", "IntakeSettings"]


class IntakeSettings(Protocol):
    """The limits and credentials a receiver reads (``ServiceSettings`` has them all)."""

    @property
    def token(self) -> str | None: ...
    @property
    def decision_token(self) -> str | None: ...
    @property
    def webhook_secret(self) -> str | None: ...
    @property
    def retry_after_s(self) -> float: ...
    @property
    def max_request_bytes(self) -> int: ...
    @property
    def max_decompressed_bytes(self) -> int: ...
    @property
    def max_connections(self) -> int: ...
    @property
    def max_open_connections(self) -> int: ...
    @property
    def request_timeout_s(self) -> float: ...


class Intake(Protocol):
    """Span intake: what both receivers use."""

    @property
    def settings(self) -> IntakeSettings: ...
    @property
    def stopping(self) -> threading.Event: ...

    def offer(self, spans: list[SpanData]) -> bool:
        """Queue one request's spans; False (nothing queued) when they do not fit."""

    def queue_status(self) -> tuple[int, int]:
        """(spans queued, capacity), for the back-pressure message."""

    def count_request(
        self, protocol: str, outcome: str, *, spans: int = 0, rejected: int = 0
    ) -> None:
        """Count one export request by protocol and outcome."""


class Endpoints(Intake, Protocol):
    """The HTTP front's other routes: readiness, metrics, signals, human decisions."""

    def readiness(self) -> tuple[bool, dict[str, Any]]: ...

    def metrics_text(self) -> bytes:
        """The Prometheus exposition of the service's registry."""

    def pending_requests(self) -> list[dict[str, Any]]:
        """Escalations waiting for a human."""

    def recent_signals(self, session: str | None) -> list[dict[str, Any]]:
        """The last signals, of one session or all."""

    def resolve_decision(self, request_id: str, decision: Any, message: Any) -> bool | None:
        """Apply a human's decision: True applied, False unknown/expired, None when no
        webhook escalator is configured (nothing can be pending). ValueError when invalid."""
