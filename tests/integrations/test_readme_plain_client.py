"""The README's plain-client snippet runs as pasted: in a fresh interpreter, against a loopback
fake of the OpenAI API (the real client reads ``OPENAI_BASE_URL``), once healthy and once stuck.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("openinference.instrumentation.openai")

from ._fake_llm import FakeLLM
from ._rig import MARK

pytestmark = pytest.mark.frameworks

README = Path(__file__).resolve().parents[2] / "README.md"


def snippet() -> str:
    blocks = re.findall(r"^```python\n(.*?)^```", README.read_text("utf-8"), re.M | re.S)
    found = [b for b in blocks if "guard_openai(OpenAI())" in b]
    assert len(found) == 1, "the README shows one plain-client snippet"
    return found[0]


def run(tmp_path: Path, fake: FakeLLM) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "agent.py"
    script.write_text(snippet(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CYCLEGUARD_", "OTEL_"))}
    env.update(OPENAI_BASE_URL=fake.openai_url, OPENAI_API_KEY="test", OPENAI_MAX_RETRIES="0")
    return subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )


def test_a_healthy_run_prints_the_answer(tmp_path: Path) -> None:
    def script(body: dict[str, Any], turn: int) -> Any:
        return [("get_weather", {"city": "Paris"})] if turn == 0 else "Rainy, 12°C."

    with FakeLLM(script) as fake:
        done = run(tmp_path, fake)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Rainy, 12°C."
    assert len(fake.requests) == 2


def test_a_stuck_model_is_corrected_then_stopped(tmp_path: Path) -> None:
    with FakeLLM(lambda body, turn: [("get_weather", {"city": "Paris"})]) as fake:
        done = run(tmp_path, fake)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("stopped:"), (done.stdout, done.stderr)
    marked = [
        i
        for i, body in enumerate(fake.requests)
        if any(MARK in str(m.get("content")) for m in body["messages"])
    ]
    # TERM on the 5th call, known after the 6th request: the message rides in the 7th. With
    # no escalator configured the second TERM stops the run at once (fail-closed).
    assert marked == [6]
    assert MARK in fake.requests[6]["messages"][-1]["content"]
    assert len(fake.requests) == 11
