"""Real OTLP exporters in a separate process send a looping agent's spans to ``cycleguard serve``."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.service.conftest import Agent, wait_for

pytestmark = pytest.mark.slow

DECISION_TOKEN = "decide-123"
TOKEN = "ingest-456"


def _post_decision(base: str, request_id: str, decision: str) -> dict:
    req = urllib.request.Request(
        f"{base}/v1/decisions/{request_id}",
        data=json.dumps({"decision": decision}).encode(),
        headers={"Authorization": f"Bearer {DECISION_TOKEN}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


class TestLoopOverRealExporters:
    """Both official exporters; detection, /metrics and the webhook all see the loop."""

    @pytest.mark.parametrize("protocol", ["http", "grpc"])
    def test_loop_is_detected_counted_and_escalated(self, protocol, services, webhook, tmp_path):
        """identical_call: WARN, self-heal at TERM, then the webhook asks a human (202 flow)."""
        svc = services(
            "--webhook-url",
            webhook.url,
            "--decision-token",
            DECISION_TOKEN,
            "--token",
            TOKEN,
            "--state-file",
            str(tmp_path / "state.json"),
            env={"CYCLEGUARD_ESCALATION__PROGRESS_DIR": str(tmp_path / "progress")},
        ).start()
        endpoint = svc.http if protocol == "http" else f"127.0.0.1:{svc.grpc_port}"
        agent = Agent(protocol, endpoint, "--token", TOKEN, "--conversation", "conv-1")
        try:
            for _ in range(10):
                agent.call()
            request = webhook.next()
            assert request["dimension"] == "identical_call"
            assert request["streak"] == 5
            assert request["_headers"].get("X-Cycleguard-Signature") is None  # no secret set
            assert _post_decision(svc.http, request["id"], "continue")["status"] == "applied"
            wait_for(
                lambda: svc.metric("cycleguard_hitl_decisions_total", decision="continue") == 1
            )
            assert svc.metric("cycleguard_tool_calls_total") == 10
            assert (
                svc.metric("cycleguard_signals_total", dimension="identical_call", level="term")
                == 2
            )
            assert svc.metric("cycleguard_self_heals_total", dimension="identical_call") == 1
            assert svc.metric("cycleguard_human_escalations_total") == 1
            assert (
                svc.metric("cycleguard_service_spans_total", protocol=protocol, outcome="accepted")
                >= 10
            )
            signals = svc.get_json("/v1/signals", token=TOKEN)["signals"]
            assert [(s["level"], s["step"]) for s in signals] == [
                ("warn", 2),
                ("term", 4),
                ("warn", 7),
                ("term", 9),
            ]
        finally:
            agent.close()
        assert svc.stop() == 0

    def test_without_escalator_the_second_term_terminates(self, services, tmp_path):
        """No webhook: nobody can answer, so the run is terminated (fail-closed)."""
        svc = services(
            "--state-file",
            "",
            env={"CYCLEGUARD_ESCALATION__PROGRESS_DIR": str(tmp_path / "progress")},
        ).start()
        agent = Agent("grpc", f"127.0.0.1:{svc.grpc_port}", "--compression", "none")
        try:
            for _ in range(10):
                agent.call()
            wait_for(
                lambda: svc.metric("cycleguard_terminations_total", reason="cycle_detected") == 1
            )
        finally:
            agent.close()
        assert list((tmp_path / "progress").iterdir())  # progress saved
        assert svc.stop() == 0
