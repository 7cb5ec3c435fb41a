"""``cycleguard serve`` (also ``python -m otel_cycleguard.service``).

``add_arguments(parser)`` and ``run(args)`` are what the main CLI wires as its ``serve``
subcommand. Secrets can come from the environment so they stay out of process listings:
``CYCLEGUARD_SERVICE_TOKEN``, ``CYCLEGUARD_DECISION_TOKEN``, ``CYCLEGUARD_ESCALATION__WEBHOOK_SECRET``.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from typing import Any

__all__ = ["add_arguments", "main", "run"]


def _port(value: str) -> int | None:
    if value.lower() in ("off", "none", "-1"):
        return None
    port = int(value)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port out of range: {value}")
    return port


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``serve`` options."""
    from otel_cycleguard.service.app import DEFAULT_GRPC_PORT, DEFAULT_HTTP_PORT

    parser.add_argument("--config", help="cycleguard config file (.yaml/.toml/.json)")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: loopback only)"
    )
    parser.add_argument(
        "--http-port",
        type=_port,
        default=DEFAULT_HTTP_PORT,
        help=f"OTLP/HTTP + health, metrics, decisions (default {DEFAULT_HTTP_PORT}; 0 = any "
        "free port; off)",
    )
    parser.add_argument(
        "--grpc-port",
        type=_port,
        default=DEFAULT_GRPC_PORT,
        help=f"OTLP/gRPC (default {DEFAULT_GRPC_PORT}; 0 = any free port; off)",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("CYCLEGUARD_SERVICE_TOKEN"),
        help="require 'Authorization: Bearer TOKEN' on ingestion ($CYCLEGUARD_SERVICE_TOKEN)",
    )
    parser.add_argument(
        "--decision-token",
        default=os.environ.get("CYCLEGUARD_DECISION_TOKEN"),
        help="bearer token for POST /v1/decisions/{id} ($CYCLEGUARD_DECISION_TOKEN); the "
        "webhook secret's HMAC signature is accepted too",
    )
    parser.add_argument("--webhook-url", help="HITL webhook (overrides escalation.webhook_url)")
    parser.add_argument("--webhook-secret", help="HMAC secret (prefer the config or env)")
    parser.add_argument(
        "--max-request-bytes", type=int, default=8 << 20, help="per request, as sent (8 MiB)"
    )
    parser.add_argument(
        "--max-decompressed-bytes", type=int, default=32 << 20, help="after gzip (32 MiB)"
    )
    parser.add_argument(
        "--queue-spans", type=int, default=200_000, help="ingestion queue capacity in spans"
    )
    parser.add_argument(
        "--retry-after", type=float, default=2.0, help="seconds suggested when throttling"
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        default=64,
        help="complete HTTP requests handled at once / concurrent RPCs",
    )
    parser.add_argument(
        "--max-open-connections",
        type=int,
        default=1024,
        help="open HTTP connections; at the cap the longest-waiting one is evicted",
    )
    parser.add_argument(
        "--request-timeout",
        type=float,
        default=30.0,
        help="seconds a whole HTTP request (head and body) may take from its first byte",
    )
    parser.add_argument(
        "--state-file",
        default=".cycleguard/service-state.json",
        help="where session state and pending escalations survive restarts ('' = off)",
    )
    parser.add_argument(
        "--snapshot-interval", type=float, default=30.0, help="seconds between state snapshots"
    )
    parser.add_argument(
        "--drain-timeout",
        type=float,
        default=30.0,
        help="seconds SIGTERM may spend processing what is queued before the final save",
    )
    parser.add_argument(
        "--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR")
    )


def run(args: argparse.Namespace) -> int:
    """Start the service, serve until SIGTERM/SIGINT, drain and save. Returns the exit code."""
    from otel_cycleguard.config import ConfigError, load_config
    from otel_cycleguard.service.app import CycleGuardService, ServiceSettings

    logging.basicConfig(
        level=getattr(logging, args.log_level),
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    overrides: dict[str, Any] = {}
    if args.webhook_url:
        overrides.setdefault("escalation", {})["webhook_url"] = args.webhook_url
    if args.webhook_secret:
        overrides.setdefault("escalation", {})["webhook_secret"] = args.webhook_secret
    try:
        config = load_config(args.config, **overrides)
        settings = ServiceSettings(
            host=args.host,
            http_port=args.http_port,
            grpc_port=args.grpc_port,
            token=args.token or None,
            decision_token=args.decision_token or None,
            max_request_bytes=args.max_request_bytes,
            max_decompressed_bytes=args.max_decompressed_bytes,
            queue_spans=args.queue_spans,
            retry_after_s=args.retry_after,
            max_connections=args.max_connections,
            max_open_connections=args.max_open_connections,
            request_timeout_s=args.request_timeout,
            state_file=args.state_file or None,
            snapshot_interval_s=args.snapshot_interval if args.snapshot_interval > 0 else None,
            drain_timeout_s=args.drain_timeout,
        )
    except (ConfigError, ValueError) as exc:
        print(f"cycleguard serve: {exc}", file=sys.stderr)
        return 2
    try:
        service = CycleGuardService(config, settings).start()
    except OSError as exc:
        print(f"cycleguard serve: cannot listen: {exc}", file=sys.stderr)
        return 1
    stop = threading.Event()

    def _on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    print(f"cycleguard serve listening {service.describe()}", flush=True)
    while not stop.wait(0.5):
        pass
    print("cycleguard serve: draining and saving state", flush=True)
    drained = service.stop()
    print("cycleguard serve: stopped", flush=True)
    return 0 if drained else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="cycleguard serve", description="OTLP receiver that guards agents against loops"
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))
