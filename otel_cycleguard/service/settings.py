"""How ``cycleguard serve`` listens and protects itself, declared once (pydantic-settings).

Each field is read, in order of precedence, from the constructor (the CLI passes the options
given on its command line), then the environment (``CYCLEGUARD_SERVICE_<FIELD>``; the two
tokens also under their historic names ``CYCLEGUARD_SERVICE_TOKEN`` and
``CYCLEGUARD_DECISION_TOKEN``), then the default here. The CLI's help shows these defaults, so
they are written nowhere else.
"""

from __future__ import annotations

from pydantic import AliasChoices, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["DEFAULT_GRPC_PORT", "DEFAULT_HTTP_PORT", "ServiceSettings"]

DEFAULT_HTTP_PORT = 14318
DEFAULT_GRPC_PORT = 14317


class ServiceSettings(BaseSettings):
    """How the service listens and protects itself. Ports: 0 = any free port, None = off."""

    model_config = SettingsConfigDict(
        env_prefix="CYCLEGUARD_SERVICE_", extra="forbid", populate_by_name=True
    )

    host: str = "127.0.0.1"
    http_port: int | None = Field(DEFAULT_HTTP_PORT, ge=0, le=65535)
    grpc_port: int | None = Field(DEFAULT_GRPC_PORT, ge=0, le=65535)
    #: bearer token for ingestion (and /v1/signals)
    token: str | None = None
    #: bearer token for the decision endpoint
    decision_token: str | None = Field(
        None,
        validation_alias=AliasChoices(
            "decision_token", "CYCLEGUARD_DECISION_TOKEN", "CYCLEGUARD_SERVICE_DECISION_TOKEN"
        ),
    )
    #: HMAC secret: signs webhooks, verifies decisions
    webhook_secret: str | None = None
    max_request_bytes: int = Field(8 * 1024 * 1024, ge=1)  # as received (compressed)
    max_decompressed_bytes: int = Field(32 * 1024 * 1024, ge=1)
    queue_spans: int = Field(200_000, ge=1)
    ready_high_water: float = 0.9
    retry_after_s: float = 2.0
    #: complete HTTP requests handled at once
    max_connections: int = Field(64, ge=1)
    #: open HTTP connections (idle, reading, handled)
    max_open_connections: int = Field(1024, ge=1)
    #: a whole HTTP request (head and body) from its first byte
    request_timeout_s: float = Field(30.0, gt=0)
    state_file: str | None = ".cycleguard/service-state.json"
    snapshot_interval_s: float | None = 30.0
    drain_timeout_s: float = 30.0
    webhook_attempt_timeout_s: float = 10.0

    @model_validator(mode="after")
    def _one_receiver(self) -> ServiceSettings:
        if self.http_port is None and self.grpc_port is None:
            raise ValueError("enable at least one of OTLP/HTTP and OTLP/gRPC")
        return self
