"""Kill (SIGTERM) and restart the service in the middle of a loop: nothing is forgotten."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.service.conftest import Agent, wait_for

pytestmark = pytest.mark.slow

TOKEN = "decide"
# An identical-call loop with a ping-pong in between, then a text loop: several dimensions.
SCRIPT = (
    [{"tool": "read_file", "args": {"path": "a"}, "result": "same"}] * 6
    + [
        {"tool": "grep", "args": {"q": "x"}, "result": "1"},
        {"tool": "edit", "args": {"f": "y"}, "result": "ok"},
    ]
    * 4
    + [{"text": "Let me look at the file again to be sure."}] * 4
    + [{"tool": "read_file", "args": {"path": "a"}, "result": "same"}] * 6
)


def _signals(svc) -> list[tuple]:
    return [
        (s["dimension"], s["level"], s["step"], s["model_turn_index"], s["streak"])
        for s in svc.get_json("/v1/signals")["signals"]
    ]


def _run(services, tmp_path, restart_at: list[int], name: str) -> tuple[list[tuple], object]:
    state = tmp_path / f"{name}.json"
    svc = services(
        "--state-file",
        str(state),
        "--snapshot-interval",
        "0",
        env={"CYCLEGUARD_ESCALATION__PROGRESS_DIR": str(tmp_path / "progress")},
    ).start()
    agent = Agent("http", svc.http)
    seen: list[tuple] = []
    try:
        for i, command in enumerate(SCRIPT):
            if i in restart_at:
                wait_for(lambda: svc.metric("cycleguard_service_queue_spans") == 0)
                seen += _signals(svc)
                svc.restart()  # SIGTERM: drain, save; then start on the same ports
            agent.send(command)
        wait_for(
            lambda: (
                svc.metric("cycleguard_tool_calls_total")
                + svc.metric("cycleguard_model_turns_total")
                > 0
            )
        )
    finally:
        agent.close()
    wait_for(lambda: svc.metric("cycleguard_service_queue_spans") == 0)
    seen += _signals(svc)
    assert svc.stop() == 0
    return seen, svc


class TestRestartMidLoop:
    def test_signals_fire_at_the_same_steps_as_without_restart(self, services, tmp_path):
        """Counters, gates, ladders and the trace's session binding survive two restarts."""
        baseline, _ = _run(services, tmp_path, [], "baseline")
        restarted, _ = _run(services, tmp_path, [3, 9, 16], "restarted")
        assert baseline  # the script loops: something fired
        assert {d for d, *_ in baseline} >= {"identical_call", "text_loop"}
        assert restarted == baseline

    def test_a_pending_human_decision_survives_a_restart(self, services, webhook, tmp_path):
        """The webhook answered 202; the decision is posted to the *restarted* instance."""
        svc = services(
            "--state-file",
            str(tmp_path / "s.json"),
            "--webhook-url",
            webhook.url,
            "--decision-token",
            TOKEN,
            env={"CYCLEGUARD_ESCALATION__PROGRESS_DIR": str(tmp_path / "progress")},
        ).start()
        agent = Agent("grpc", f"127.0.0.1:{svc.grpc_port}")
        try:
            for _ in range(10):
                agent.call()
            request = webhook.next()
            svc.restart()
            pending = svc.get_json("/v1/decisions", token=TOKEN)["pending"]
            assert [p["id"] for p in pending] == [request["id"]]
            assert pending[0]["accepted"] is True
            req = urllib.request.Request(
                f"{svc.http}/v1/decisions/{request['id']}",
                data=json.dumps({"decision": "continue"}).encode(),
                headers={"Authorization": f"Bearer {TOKEN}"},
                method="POST",
            )
            with urllib.request.urlopen(req, timeout=10) as resp:
                assert resp.status == 200
            wait_for(
                lambda: svc.metric("cycleguard_hitl_decisions_total", decision="continue") == 1
            )
            assert svc.metric("cycleguard_terminations_total") == 0
            # "continue" reset the counter: 4 more identical calls stay below TERM (5) ...
            for _ in range(4):
                agent.call()
            # ... and the fifth asks the human again, not a self-heal (the ladder was kept).
            agent.call()
            again = webhook.next()
            assert again["id"] != request["id"] and again["dimension"] == "identical_call"
        finally:
            agent.close()
        assert svc.stop() == 0
