"""``cycleguard serve``: an OTLP receiver (HTTP and gRPC) feeding the loop guard.

Run agents in any language behind an OpenTelemetry Collector; see docs/service.md.
Needs the ``service`` extra (grpcio, opentelemetry-proto: both come with
``opentelemetry-exporter-otlp``).
"""

from otel_cycleguard.service.app import (
    DEFAULT_GRPC_PORT,
    DEFAULT_HTTP_PORT,
    CycleGuardService,
    ServiceSettings,
)

__all__ = ["DEFAULT_GRPC_PORT", "DEFAULT_HTTP_PORT", "CycleGuardService", "ServiceSettings"]
