"""``cycleguard serve`` (also ``python -m otel_cycleguard.service``).

``add_arguments(parser)`` and ``run(args)`` are what the main CLI wires as its ``serve``
subcommand. Secrets can come from the environment so they stay out of process listings:
``CYCLEGUARD_SERVICE_TOKEN``, ``CYCLEGUARD_DECISION_TOKEN``, ``CYCLEGUARD_ESCALATION__WEBHOOK_SECRET``.
"""

from __future__ import annotations

import argparse
import logging
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


# option -> (settings field, type, help). Defaults are ServiceSettings' own (shown in --help);
# an option not given leaves the field to the environment (CYCLEGUARD_SERVICE_*) or its default.
_OPTIONS: tuple[tuple[str, str, Any, str], ...] = (
    ("--host", "host", str, "address to bind (loopback only by default)"),
    (
        "--http-port",
        "http_port",
        _port,
        "OTLP/HTTP + health, metrics, decisions (0 = any free port; off)",
    ),
    ("--grpc-port", "grpc_port", _port, "OTLP/gRPC (0 = any free port; off)"),
    (
        "--token",
        "token",
        str,
        "require 'Authorization: Bearer TOKEN' on ingestion ($CYCLEGUARD_SERVICE_TOKEN)",
    ),
    (
        "--decision-token",
        "decision_token",
        str,
        "bearer token for POST /v1/decisions/{id} ($CYCLEGUARD_DECISION_TOKEN); the "
        "webhook secret's HMAC signature is accepted too",
    ),
    ("--max-request-bytes", "max_request_bytes", int, "per request, as sent"),
    ("--max-decompressed-bytes", "max_decompressed_bytes", int, "after gzip"),
    ("--queue-spans", "queue_spans", int, "ingestion queue capacity in spans"),
    ("--retry-after", "retry_after_s", float, "seconds suggested when throttling"),
    (
        "--max-connections",
        "max_connections",
        int,
        "complete HTTP requests handled at once",
    ),
    (
        "--max-open-connections",
        "max_open_connections",
        int,
        "open HTTP connections; at the cap the longest-waiting one is evicted",
    ),
    (
        "--request-timeout",
        "request_timeout_s",
        float,
        "seconds a whole HTTP request (head and body) may take from its first byte",
    ),
    (
        "--state-file",
        "state_file",
        str,
        "where session state and pending escalations survive restarts ('' = off)",
    ),
    ("--snapshot-interval", "snapshot_interval_s", float, "seconds between state snapshots"),
    (
        "--drain-timeout",
        "drain_timeout_s",
        float,
        "seconds SIGTERM may spend processing what is queued before the final save",
    ),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``serve`` options."""
    from otel_cycleguard.service.settings import ServiceSettings

    fields = ServiceSettings.model_fields
    parser.add_argument("--config", help="cycleguard config file (.yaml/.toml/.json)")
    for option, name, kind, text in _OPTIONS:
        default = fields[name].default
        parser.add_argument(
            option,
            dest=name,
            metavar=option[2:].upper().replace("-", "_"),
            type=kind,
            default=argparse.SUPPRESS,  # not given: the environment, else the default
            help=f"{text} (default: {'off' if default is None else default})"
            if name not in ("token", "decision_token")
            else text,
        )
    parser.add_argument("--webhook-url", help="HITL webhook (overrides escalation.webhook_url)")
    parser.add_argument("--webhook-secret", help="HMAC secret (prefer the config or env)")
    parser.add_argument(
        "--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR")
    )


def _given(args: argparse.Namespace) -> dict[str, Any]:
    """The settings named on the command line ('' and 0 turn the state file and snapshots off)."""
    given = {name: getattr(args, name) for _o, name, _k, _t in _OPTIONS if hasattr(args, name)}
    if "state_file" in given:
        given["state_file"] = given["state_file"] or None
    if "snapshot_interval_s" in given and given["snapshot_interval_s"] <= 0:
        given["snapshot_interval_s"] = None
    for token in ("token", "decision_token"):
        if token in given and not given[token]:
            given[token] = None
    return given


def run(args: argparse.Namespace) -> int:
    """Start the service, serve until SIGTERM/SIGINT, drain and save. Returns the exit code."""
    from pydantic import ValidationError

    from otel_cycleguard.config import ConfigError, load_config
    from otel_cycleguard.service.app import CycleGuardService
    from otel_cycleguard.service.settings import ServiceSettings

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
        settings = ServiceSettings(**_given(args))
    except ValidationError as exc:  # one line per problem, naming the setting
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"]) or "settings"
            message = error["msg"].removeprefix("Value error, ")
            print(f"cycleguard serve: {where}: {message}", file=sys.stderr)
        return 2
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
