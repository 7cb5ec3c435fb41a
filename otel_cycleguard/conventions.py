"""Reading tool calls and model turns out of spans, whatever instrumentation made them (docs/detection.md, "Inputs").

Four conventions are understood: OTel GenAI (``gen_ai.*``), OpenInference
(``openinference.span.kind``), OpenLLMetry/Traceloop (``traceloop.*``) and pydantic-ai's legacy
``running tool`` spans. Everything here works on a span's name and attribute mapping only, so
the live processor, the offline replay and the OTLP service share it. No OpenTelemetry import.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from otel_cycleguard.detect.normalize import hash_bytes, hex_digest
from otel_cycleguard.detect.records import ModelTurn, ToolCall, new_model_turn, new_tool_call
from otel_cycleguard.wire._json import loads as _json_loads  # orjson: the hot path's parser
from otel_cycleguard.wire._json import loads_shared

__all__ = [
    "SpanRole",
    "agent_name",
    "classify",
    "is_delegating_tool",
    "model_turn_from",
    "session_hint",
    "tool_call_from",
    "tool_name",
]

GENAI_OP: Final = "gen_ai.operation.name"
OI_KIND: Final = "openinference.span.kind"
TL_KIND: Final = "traceloop.span.kind"
OWN_PREFIX: Final = "cycleguard."

_MODEL_OPS = frozenset({"chat", "text_completion", "generate_content", "completion"})
_AGENT_OPS = frozenset({"invoke_agent", "create_agent", "invoke_workflow"})
_SESSION_KEYS: Final = ("gen_ai.conversation.id", "session.id")
_TL_SESSION_KEYS: Final = (
    "traceloop.association.properties.session_id",
    "traceloop.association.properties.conversation_id",
    "traceloop.association.properties.thread_id",
    "traceloop.association.properties.chat_id",
)
#: Every attribute key :func:`session_hint` reads (a span without any of them names no session).
HINT_KEYS: Final = frozenset((*_SESSION_KEYS, *_TL_SESSION_KEYS))
_READ_ONLY_KEYS: Final = ("cycleguard.tool.read_only", "gen_ai.tool.read_only", "tool.read_only")
#: Every key that says what a tool does (most tool spans carry none: one test in C for all).
_TOOL_FACT_KEYS: Final = frozenset((*_READ_ONLY_KEYS, "cycleguard.tool.dimension"))


class SpanRole:
    """What a span is to the guard. Plain string constants: cheap to compare on the hot path."""

    TOOL: Final = "tool"
    MODEL: Final = "model"
    AGENT: Final = "agent"
    OWN: Final = "own"
    OTHER: Final = "other"


def classify(name: str, attributes: Mapping[str, Any]) -> str:
    """The role of a span, from the few attributes each convention sets."""
    op = attributes.get(GENAI_OP)
    if op is not None:
        if op == "execute_tool":
            return SpanRole.TOOL
        # Any OTLP value can arrive here (a map, an array of maps: unhashable): set look-ups
        # only for strings; every other test in this module is ``==`` or ``isinstance``.
        if op.__class__ is str:
            if op in _MODEL_OPS:
                return SpanRole.MODEL
            if op in _AGENT_OPS:
                return SpanRole.AGENT
    kind = attributes.get(OI_KIND)
    if kind is not None:
        if kind == "TOOL":
            return SpanRole.OTHER if name.startswith("handoff") else SpanRole.TOOL
        if kind == "LLM":
            return SpanRole.MODEL
        if kind == "AGENT":
            return SpanRole.AGENT
    kind = attributes.get(TL_KIND)
    if kind is not None:
        if kind == "tool":
            return SpanRole.TOOL
        if kind in ("agent", "workflow"):
            return SpanRole.AGENT
    if name == "running tool":
        return SpanRole.TOOL
    if name == "agent run" or name.startswith("invoke_agent"):
        return SpanRole.AGENT
    if name.startswith(OWN_PREFIX):
        return SpanRole.OWN
    if "llm.request.type" in attributes:
        return SpanRole.MODEL
    return SpanRole.OTHER


def tool_name(name: str, attributes: Mapping[str, Any]) -> str:
    """The tool's name by convention, falling back to the span name."""
    for key in ("gen_ai.tool.name", "tool.name", "traceloop.entity.name"):
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    if name.startswith("execute_tool "):
        return name[len("execute_tool ") :]
    if name.endswith(".tool"):
        return name[: -len(".tool")]
    return name or "unknown"


def _unwrap_traceloop_input(value: Any) -> Any:
    """Traceloop records ``{"args": [...], "kwargs": {...}}``; the call is the kwargs (+ args)."""
    if not isinstance(value, str) or '"kwargs"' not in value:
        return value
    try:
        parsed = _json_loads(value)
    except (ValueError, RecursionError):  # RecursionError: text nested thousands deep
        return value
    if isinstance(parsed, dict) and set(parsed) <= {"args", "kwargs"}:
        args, kwargs = parsed.get("args") or [], parsed.get("kwargs") or {}
        return {"args": args, **kwargs} if args else kwargs
    return value


def _unwrap_langchain_tool_message(value: Any) -> tuple[Any, bool]:
    """The result in a serialised LangChain ``ToolMessage``, and whether it reports an error.

    OpenInference's LangChain instrumentation records a tool's ``output.value`` as the whole
    message, ``{"type": "tool", "data": {"content": ..., "tool_call_id": "call_1", ...}}``. Its
    per-call ``tool_call_id`` made every result unique, so ``identical_call`` never fired on
    LangGraph agents; the result is the message's ``content``, and ``"status": "error"`` (a
    tool error the agent handled) marks the call failed. Other values are returned unchanged.
    """
    if not isinstance(value, str) or not value.startswith('{"type": "tool"'):
        return value, False
    try:
        parsed = _json_loads(value)
    except (ValueError, RecursionError):
        return value, False
    if not isinstance(parsed, dict) or parsed.get("type") != "tool":
        return value, False
    data = parsed.get("data")
    if not isinstance(data, dict) or "content" not in data:
        return value, False
    return data["content"], data.get("status") == "error"


def tool_call_from(
    name: str,
    attributes: Mapping[str, Any],
    *,
    status_error: bool = False,
    event_names: Iterable[str] = (),
    start_ns: int = 0,
    end_ns: int = 0,
    span_id: str | None = None,
    state_attribute: str = "cycleguard.state_hash",
) -> ToolCall:
    """A :class:`ToolCall` from a span already classified as :data:`SpanRole.TOOL`."""
    get = attributes.get
    if get(GENAI_OP) == "execute_tool":
        arguments, result = get("gen_ai.tool.call.arguments"), get("gen_ai.tool.call.result")
    elif get(OI_KIND) == "TOOL":
        arguments = get("input.value")
        result, message_error = _unwrap_langchain_tool_message(get("output.value"))
        status_error = status_error or message_error
    elif get(TL_KIND) == "tool":
        arguments = _unwrap_traceloop_input(get("traceloop.entity.input"))
        result = get("traceloop.entity.output")
    else:  # pydantic-ai legacy `running tool`
        arguments, result = get("tool_arguments"), get("tool_response")
    error = bool(status_error) or get("error.type") is not None
    if not error:
        error = any(event == "exception" for event in event_names)
    read_only = None
    if not _TOOL_FACT_KEYS.isdisjoint(attributes):
        for key in _READ_ONLY_KEYS:
            value = get(key)
            if isinstance(value, bool):
                read_only = value
                break
        if read_only is None and get("cycleguard.tool.dimension") == "perceive":
            read_only = True
    fingerprint = get(state_attribute)
    return new_tool_call(  # ToolCall's fields, in order
        tool_name(name, attributes),
        arguments,
        result,
        error,
        start_ns / 1e9 if start_ns else None,
        end_ns / 1e9 if end_ns else None,
        read_only,
        str(fingerprint) if fingerprint is not None else None,
        span_id,
    )


def _text_of_messages(raw: Any) -> str | None:
    """Assistant text from ``gen_ai.output.messages`` (JSON list of {role, parts})."""
    if not isinstance(raw, str):
        return None
    try:
        messages = loads_shared(raw)  # derive read the same text just before: parsed once
    except (ValueError, RecursionError):
        return raw
    texts: list[str] = []
    for message in messages if isinstance(messages, list) else [messages]:
        if not isinstance(message, dict):
            continue
        parts = message.get("parts")
        if isinstance(parts, list):
            for part in parts:
                if isinstance(part, dict) and part.get("type") in ("text", "thinking", "reasoning"):
                    content = part.get("content")
                    if isinstance(content, str):
                        texts.append(content)
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
    return "\n".join(texts) if texts else None


def _indexed_text(attributes: Mapping[str, Any], prefix: str, suffix: str) -> str | None:
    texts = []
    for index in range(16):
        value = attributes.get(f"{prefix}{index}{suffix}")
        if value is None:
            break
        if isinstance(value, str):
            texts.append(value)
    return "\n".join(texts) if texts else None


def _token(attributes: Mapping[str, Any], *keys: str) -> int:
    for key in keys:
        value = attributes.get(key)
        if value.__class__ is int:  # the usual count: the general test below says the same
            return value  # type: ignore[no-any-return]
        if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
            return int(value) if abs(value) != float("inf") else 0  # NaN/inf: no count
    return 0


def model_turn_from(
    attributes: Mapping[str, Any],
    *,
    events: Iterable[tuple[str, Mapping[str, Any]]] = (),
    start_ns: int = 0,
    end_ns: int = 0,
    span_id: str | None = None,
    state_attribute: str = "cycleguard.state_hash",
    status_error: bool = False,
    status_message: str | None = None,
) -> ModelTurn:
    """A :class:`ModelTurn` (output text, token usage, failure) from a model span of any
    convention. A turn failed when its status is ERROR or it carries ``error.type``; what
    failed is the error type and the status message (for the same-rejection test)."""
    text = _text_of_messages(attributes.get("gen_ai.output.messages"))
    if text is None:
        text = _indexed_text(attributes, "llm.output_messages.", ".message.content")
    if text is None:
        text = _indexed_text(attributes, "gen_ai.completion.", ".content")
    if text is None:
        for event_name, event_attrs in events:
            if event_name == "gen_ai.choice":
                body = (
                    event_attrs.get("message")
                    or event_attrs.get("body")
                    or event_attrs.get("content")
                )
                if isinstance(body, str):
                    # A message serialised as JSON ({"role", "content"}) is read for its text.
                    text = (_text_of_messages(body) if body[:1] in "{[" else None) or body
                elif isinstance(body, list | tuple):
                    text = "\n".join(b for b in body if isinstance(b, str)) or None
                if text:
                    break
    if text is None and attributes.get(OI_KIND) == "LLM":
        value = attributes.get("output.value")
        text = value if isinstance(value, str) else None
    fingerprint = attributes.get(state_attribute)
    error_type = attributes.get("error.type")
    error = bool(status_error) or error_type is not None
    return new_model_turn(  # ModelTurn's fields, in order
        text,
        _token(
            attributes,
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.prompt_tokens",
            "llm.token_count.prompt",
        ),
        _token(
            attributes,
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
            "llm.token_count.completion",
        ),
        start_ns / 1e9 if start_ns else None,
        end_ns / 1e9 if end_ns else None,
        str(fingerprint) if fingerprint is not None else None,
        span_id,
        error,
        f"{error_type}: {status_message or ''}" if error else None,
    )


#: A span-named session id longer than this is kept as its first ``_KEPT_ID_PREFIX``
#: characters and a hash of the whole: an id is a table key, a state-file entry and a report
#: column, and a sender's 64 KiB "conversation id" must not cost 64 KiB in each.
MAX_SESSION_ID_LENGTH: Final = 256
_KEPT_ID_PREFIX: Final = 200


def session_hint(attributes: Mapping[str, Any]) -> str | None:
    """The conversation/session id a span names itself, if any (long ids bounded)."""
    if HINT_KEYS.isdisjoint(attributes):  # most spans name none: answered in C
        return None
    for key in _SESSION_KEYS:
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return _bounded_id(value)
    for key in _TL_SESSION_KEYS:
        value = attributes.get(key)
        if isinstance(value, str | int) and value != "":
            return _bounded_id(str(value))
    return None


def _bounded_id(value: str) -> str:
    """The id as it is, or past the limit its start (still readable in a report) and the xxh3
    of all of it (still unique)."""
    if len(value) <= MAX_SESSION_ID_LENGTH:
        return value
    digest = hex_digest(hash_bytes(value.encode("utf-8", "surrogatepass")))
    return f"{value[:_KEPT_ID_PREFIX]}…xxh3:{digest}"


def agent_name(name: str, attributes: Mapping[str, Any]) -> str | None:
    """The agent's name on an agent span (or any span that carries it)."""
    value = attributes.get("gen_ai.agent.name") or attributes.get("agent.name")
    if isinstance(value, str) and value:
        return value
    if attributes.get(TL_KIND) in ("agent", "workflow"):
        value = attributes.get("traceloop.entity.name")
        if isinstance(value, str) and value:
            return value
    if attributes.get(OI_KIND) == "AGENT" and name:
        return name
    if name.startswith("invoke_agent "):
        return name[len("invoke_agent ") :]
    return None


def is_delegating_tool(
    name: str, attributes: Mapping[str, Any], delegating: frozenset[str]
) -> bool:
    """True for a tool span that runs a child agent (``delegate_task`` and configured names)."""
    return tool_name(name, attributes).lower() in delegating
