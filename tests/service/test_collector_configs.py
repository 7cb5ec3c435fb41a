"""Every Collector configuration in collector-config/ parses, is internally consistent, and
names endpoints and protocols that ``cycleguard serve`` really serves.

These are the quick checks, from the client side: for every cycleguard target a config names
(OTLP/gRPC, OTLP/HTTP, each load-balanced backend), the official OTLP exporter is configured
the way the Collector would be (same port, protocol, compression and headers, hostnames mapped
to loopback) and sends a real span to a running service on its default ports. The real
Collector runs every one of these files in ``test_collector_real.py``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.service import (
    DEFAULT_GRPC_PORT,
    DEFAULT_HTTP_PORT,
    CycleGuardService,
    ServiceSettings,
)

CONFIG_DIR = Path(__file__).resolve().parents[2] / "collector-config"
CONFIGS = sorted(CONFIG_DIR.glob("*.yaml"))
TOKEN = "collector-token"


def load(path: Path) -> dict:
    text = re.sub(r"\$\{env:CYCLEGUARD_SERVICE_TOKEN\}", TOKEN, path.read_text())
    return yaml.safe_load(text)


def targets(config: dict) -> list[tuple[str, int, str, dict, str | None]]:
    """(protocol, port, path, headers, compression) of every cycleguard exporter."""
    out = []
    for name, body in config["exporters"].items():
        if "cycleguard" not in name:
            continue
        kind = name.split("/")[0]
        if kind == "otlp":
            _host, port = body["endpoint"].rsplit(":", 1)
            out.append(("grpc", int(port), "", body.get("headers", {}), body.get("compression")))
        elif kind == "otlphttp":
            url = urlsplit(body["endpoint"])
            assert body.get("encoding", "proto") == "proto"
            out.append(
                ("http", url.port, url.path, body.get("headers", {}), body.get("compression"))
            )
        elif kind == "loadbalancing":
            otlp = body["protocol"]["otlp"]
            resolver = body["resolver"]
            if "static" in resolver:
                ports = [int(h.rsplit(":", 1)[1]) for h in resolver["static"]["hostnames"]]
            else:
                ports = [int(resolver["dns"]["port"])]
            for port in ports:
                out.append(("grpc", port, "", otlp.get("headers", {}), otlp.get("compression")))
            assert body["routing_key"] in ("traceID", "attributes")
            if body["routing_key"] == "attributes":
                assert "gen_ai.conversation.id" in body["routing_attributes"]
        else:
            raise AssertionError(f"unknown exporter kind {kind}")
    return out


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
class TestConfig:
    def test_pipelines_only_use_defined_components(self, path):
        config = load(path)
        connectors = set(config.get("connectors") or {})
        for pipeline in config["service"]["pipelines"].values():
            for kind in ("receivers", "processors", "exporters"):
                defined = set(config.get(kind) or {}) | (
                    connectors if kind != "processors" else set()
                )
                for component in pipeline.get(kind, []):
                    assert component in defined, f"{path.name}: {component} not defined"
        used = {c for p in config["service"]["pipelines"].values() for c in p.get("exporters", [])}
        assert any("cycleguard" in e for e in used), "cycleguard is not in any pipeline"

    def test_names_the_ports_and_protocols_the_service_serves(self, path):
        found = targets(load(path))
        assert found
        for protocol, port, url_path, headers, compression in found:
            assert port == (DEFAULT_GRPC_PORT if protocol == "grpc" else DEFAULT_HTTP_PORT)
            assert url_path in ("", "/")  # otlphttp appends /v1/traces, which we serve
            assert headers.get("authorization") == f"Bearer {TOKEN}"
            assert compression in (None, "gzip", "none")


@pytest.fixture(name="service", scope="module")
def fixture_service(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("collector")
    svc = CycleGuardService(
        CycleGuardConfig(escalation={"progress_dir": str(tmp)}),
        ServiceSettings(
            http_port=DEFAULT_HTTP_PORT, grpc_port=DEFAULT_GRPC_PORT, token=TOKEN, state_file=None
        ),
    )
    try:
        svc.start()
    except OSError as exc:
        pytest.skip(f"default ports busy: {exc}")
    yield svc
    svc.stop()


def export_one(protocol: str, port: int, headers: dict, compression: str | None) -> bool:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    if protocol == "grpc":
        import grpc
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(
            endpoint=f"127.0.0.1:{port}",
            insecure=True,
            headers=headers,
            compression=grpc.Compression.Gzip if compression == "gzip" else None,
        )
    else:
        from opentelemetry.exporter.otlp.proto.http import Compression
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(
            endpoint=f"http://127.0.0.1:{port}/v1/traces",
            headers=headers,
            compression=Compression.Gzip if compression == "gzip" else Compression.NoCompression,
        )
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    provider.get_tracer("t").start_span(
        "execute_tool read",
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read"},
    ).end()
    provider.shutdown()
    return True


@pytest.mark.slow
@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_a_collector_configured_like_this_reaches_the_service(path, service):
    for protocol, port, _, headers, compression in targets(load(path)):
        before = service.ingestor.accepted
        export_one(protocol, port, headers, compression)
        assert service.ingestor.wait_idle()
        assert service.ingestor.accepted == before + 1, (path.name, protocol, port)


def test_every_config_is_covered():
    assert {p.name for p in CONFIGS} >= {
        "agents-to-backend-and-cycleguard.yaml",
        "fleet-static-traceid.yaml",
        "fleet-dns-conversation.yaml",
        "fleet-static-conversation.yaml",
        "spanmetrics.yaml",
    }
    assert os.path.isdir(CONFIG_DIR)
