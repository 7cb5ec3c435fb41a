"""Reading tool calls and model turns out of spans, whatever instrumentation made them (docs/detection.md, "Inputs").

Four conventions are understood: OTel GenAI (``gen_ai.*``), OpenInference
(``openinference.span.kind``), OpenLLMetry/Traceloop (``traceloop.*``) and pydantic-ai's legacy
``running tool`` spans. Everything here works on a span's name and attribute mapping only, so
the live processor, the offline replay and the OTLP service share it. No OpenTelemetry import.

The readers run in the compiled core (``_core.Conventions``, rust/cycleguard-core/src/
conventions.rs): every span passes through them, and in Python they cost more than the
detection they feed. The rare shapes whose Python answer is subtle (Traceloop's wrapped
inputs, LangChain's serialised tool messages, message events, odd token counts, over-long
session ids, message text the core's parser cannot vouch for) stay here, as the helpers the
core calls: each shape has one implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from otel_cycleguard import _core
from otel_cycleguard.detect._slotted import fields_of
from otel_cycleguard.detect.normalize import hash_bytes, hex_digest
from otel_cycleguard.detect.records import ModelTurn, ToolCall
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


def _text_of_events(events: Iterable[tuple[str, Mapping[str, Any]]]) -> str | None:
    """A turn's text from the older per-message events (``gen_ai.choice``): the core's
    helper for spans whose attributes carry no output text."""
    text = None
    for event_name, event_attrs in events:
        if event_name == "gen_ai.choice":
            body = (
                event_attrs.get("message") or event_attrs.get("body") or event_attrs.get("content")
            )
            if isinstance(body, str):
                # A message serialised as JSON ({"role", "content"}) is read for its text.
                text = (_text_of_messages(body) if body[:1] in "{[" else None) or body
            elif isinstance(body, list | tuple):
                text = "\n".join(b for b in body if isinstance(b, str)) or None
            if text:
                break
    return text


def _token_of(value: Any) -> int | None:
    """A token count that is neither an exact int nor an exact float (the core reads those):
    an int or float of any subclass but bool, NaN none, infinity 0."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
        return int(value) if abs(value) != float("inf") else 0
    return None


#: A span-named session id longer than this is kept as its first ``_KEPT_ID_PREFIX``
#: characters and a hash of the whole: an id is a table key, a state-file entry and a report
#: column, and a sender's 64 KiB "conversation id" must not cost 64 KiB in each.
MAX_SESSION_ID_LENGTH: Final[int] = _core.MAX_SESSION_ID_LENGTH  # the core's bound
_KEPT_ID_PREFIX: Final = 200


def _bounded_id(value: str) -> str:
    """The id as it is, or past the limit its start (still readable in a report) and the xxh3
    of all of it (still unique)."""
    if len(value) <= MAX_SESSION_ID_LENGTH:
        return value
    digest = hex_digest(hash_bytes(value.encode("utf-8", "surrogatepass")))
    return f"{value[:_KEPT_ID_PREFIX]}…xxh3:{digest}"


def is_delegating_tool(
    name: str, attributes: Mapping[str, Any], delegating: frozenset[str]
) -> bool:
    """True for a tool span that runs a child agent (``delegate_task`` and configured names)."""
    return tool_name(name, attributes).lower() in delegating


#: The core's reader of spans by convention, built once: the functions below are its methods,
#: and the session rule, the processor's ``on_start`` and the derivation stage use it too.
READER = _core.Conventions(
    ToolCall,
    fields_of(ToolCall),
    ModelTurn,
    fields_of(ModelTurn),
    (
        _unwrap_traceloop_input,
        _unwrap_langchain_tool_message,
        _text_of_messages,
        _text_of_events,
        _token_of,
        _bounded_id,
    ),
)

#: ``classify(name, attributes) -> str``: the role of a span (a :class:`SpanRole` value), from
#: the few attributes each convention sets.
classify: Callable[[str, Mapping[str, Any]], str] = READER.classify
#: ``tool_name(name, attributes) -> str``: the tool's name by convention (``gen_ai.tool.name``,
#: ``tool.name``, ``traceloop.entity.name``), else from the span name.
tool_name: Callable[[str, Mapping[str, Any]], str] = READER.tool_name
#: ``session_hint(attributes) -> str | None``: the conversation/session id a span names
#: itself, if any (long ids bounded).
session_hint: Callable[[Mapping[str, Any]], str | None] = READER.session_hint
#: ``agent_name(name, attributes) -> str | None``: the agent's name on an agent span (or any
#: span that carries it).
agent_name: Callable[[str, Mapping[str, Any]], str | None] = READER.agent_name
#: The core's record readers, positional, for the span pipeline (see the two functions below).
read_tool_call = READER.tool_call
read_model_turn = READER.model_turn


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
    """A :class:`ToolCall` from a span already classified as :data:`SpanRole.TOOL`: its
    arguments and result by convention, failed on an ERROR status, an ``error.type`` or an
    ``exception`` event, ``read_only`` from the tool-fact attributes."""
    names = tuple(event_names)
    return read_tool_call(  # type: ignore[no-any-return]
        name,
        attributes,
        bool(status_error),
        names or None,
        start_ns,
        end_ns,
        span_id,
        state_attribute,
    )


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
    pairs = list(events)
    return read_model_turn(  # type: ignore[no-any-return]
        attributes,
        pairs or None,
        start_ns,
        end_ns,
        span_id,
        state_attribute,
        bool(status_error),
        status_message,
    )
