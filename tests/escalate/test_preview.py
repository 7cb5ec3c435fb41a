"""The include_raw preview: the last call, short, masked and without secrets."""

from __future__ import annotations

from otel_cycleguard.detect.records import ModelTurn, ToolCall
from otel_cycleguard.escalate.preview import PREVIEW_CHARS, preview_call, preview_turn


def test_secret_looking_keys_are_redacted_at_any_depth():
    call = ToolCall(
        "http_get",
        {"url": "https://api.example.com", "headers": {"Authorization": "Bearer abc"}},
        '{"ok": true, "api_key": "sk-live-123"}',
    )
    preview = preview_call(call)
    assert "Bearer abc" not in preview["arguments"] and "sk-live-123" not in preview["result"]
    assert '"Authorization":"[redacted]"' in preview["arguments"]
    assert "https://api.example.com" in preview["arguments"]


def test_volatile_content_is_masked_and_long_text_is_cut():
    preview = preview_call(ToolCall("bash", "make", "built at 2026-12-01 20:41:07 " + "x" * 900))
    assert "2026-12-01" not in preview["result"]
    assert len(preview["result"]) == PREVIEW_CHARS and preview["result"].endswith("…")
    assert preview["arguments"] == "make" and preview["error"] is False


def test_a_model_turn_previews_its_text():
    assert preview_turn(ModelTurn("Let me check the file again.")) == {
        "text": "Let me check the file again."
    }
    assert preview_turn(ModelTurn(None)) == {"text": None}
