"""Tool calls and tool results read out of a *model* span's messages, per convention.

An agent written as a loop around a plain model client leaves only model spans: the tool calls
the model asked for are in a span's output messages, and the results the agent sent back are in
the next model span's input messages. This module reads both, for each convention's shapes as
the real instrumentations write them (checked against the packages in ``tests/integrations``):

- OTel GenAI (``opentelemetry-instrumentation-openai-v2`` with the latest conventions, OpenLLMetry
  0.5x+): ``gen_ai.output.messages`` / ``gen_ai.input.messages``, JSON lists of
  ``{"role", "parts": [{"type": "tool_call", "id", "name", "arguments"}, {"type":
  "tool_call_response", "id", "response"}]}``;
- OpenInference: ``llm.output_messages.N.message.tool_calls.M.tool_call.{id,function.name,
  function.arguments}``; results are ``llm.input_messages.N.message`` with role ``tool``,
  ``tool_call_id`` and ``content``;
- OpenLLMetry before the GenAI messages: ``gen_ai.completion.N.tool_calls.M.{id,name,arguments}``
  and ``gen_ai.prompt.N.{role,content,tool_call_id}``;
- the older OTel GenAI per-message span events (``gen_ai.choice`` with ``tool_calls``,
  ``gen_ai.tool.message`` with ``id`` and ``content``).

Only the results *after the last assistant message* of the input are this turn's: the rest of
the history was read one turn earlier. Everything is bounded (messages, calls, characters, and
a GenAI message list nested deeper than 128 levels is not read) and never raises. Pure: no
OpenTelemetry import.

The GenAI JSON lists, the shape every current instrumentation writes, are read by the compiled
core (``_core.Messages``, rust/cycleguard-core/src/derive.rs), which also tells the shapes
apart; the indexed attributes and the per-message events are read by the functions here,
which the core calls. Each shape is read in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from otel_cycleguard import _core
from otel_cycleguard.detect._slotted import fields_of
from otel_cycleguard.wire._json import loads_shared  # orjson; the values are only read

__all__ = [
    "MAX_CALLS",
    "RequestedCall",
    "ReturnedResult",
    "capture_hint",
    "has_content",
    "requested_calls",
    "returned_results",
]

#: At most this many tool calls are read from one message list (a model asks for a few); the
#: core's bound, which its readers apply too.
MAX_CALLS: Final[int] = _core.MAX_CALLS
#: Indexed messages past this index are ignored (the history grows every turn).
MAX_MESSAGES: Final = 1024
#: JSON message lists longer than this are not parsed (a pathological history); the core's.
MAX_JSON_CHARS: Final[int] = _core.MAX_JSON_CHARS

_OI_IN: Final = "llm.input_messages."
_OI_OUT: Final = "llm.output_messages."
_TL_PROMPT: Final = "gen_ai.prompt."
_TL_COMPLETION: Final = "gen_ai.completion."


@dataclass(frozen=True, slots=True)
class RequestedCall:
    """A tool call the model asked for: its id (None when the convention has none), name and
    arguments (a JSON string or a dict, as recorded)."""

    id: str | None
    name: str
    arguments: Any


@dataclass(frozen=True, slots=True)
class ReturnedResult:
    """A tool result the agent sent back to the model, with the id of the call it answers."""

    id: str | None
    content: Any
    error: bool = False


def _json(raw: Any) -> Any:
    if not isinstance(raw, str) or len(raw) > MAX_JSON_CHARS:
        return None
    try:
        return loads_shared(raw)
    except ValueError:
        return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


# -- indexed conventions (OpenInference, OpenLLMetry before the GenAI messages) ----------------
#
# The SDK keeps at most 128 attributes per span by default and drops the *oldest* first, so a
# long history loses its first messages: messages are collected from whatever keys are there
# (one pass over the keys), never by counting up from index 0.


def _indexed(attrs: Mapping[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """``{N: {rest: value}}`` for every key ``<prefix>N.<rest>`` (bounded by MAX_MESSAGES)."""
    out: dict[int, dict[str, Any]] = {}
    size = len(prefix)
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        dot = key.find(".", size)
        number = key[size:dot]
        if dot > size and number.isdigit():
            index = int(number)
            if index < MAX_MESSAGES:
                out.setdefault(index, {})[key[dot + 1 :]] = value
    return out


def _calls_in(fields: Mapping[str, Any], base: str, name_key: str, args_key: str, id_key: str):
    calls: list[RequestedCall] = []
    for j in range(MAX_CALLS):
        call = f"{base}{j}."
        name = fields.get(call + name_key)
        if name is None:
            if j > 0 and not any(k.startswith(call) for k in fields):
                break
            continue
        if isinstance(name, str) and name:
            calls.append(
                RequestedCall(_text(fields.get(call + id_key)), name, fields.get(call + args_key))
            )
    return calls


def _oi_calls(attrs: Mapping[str, Any]) -> list[RequestedCall]:
    calls: list[RequestedCall] = []
    for _index, fields in sorted(_indexed(attrs, _OI_OUT).items()):
        calls += _calls_in(
            fields,
            "message.tool_calls.",
            "tool_call.function.name",
            "tool_call.function.arguments",
            "tool_call.id",
        )
    return calls[:MAX_CALLS]


def _after_last_assistant(
    messages: dict[int, dict[str, Any]], role_key: str
) -> list[dict[str, Any]]:
    ordered = sorted(messages.items())
    last = max(
        (i for i, (_, f) in enumerate(ordered) if f.get(role_key) == "assistant"), default=-1
    )
    if last < 0:
        return []  # no assistant message yet (or it was dropped): nothing to pair
    return [fields for _, fields in ordered[last + 1 :]]


def _oi_results(attrs: Mapping[str, Any]) -> list[ReturnedResult]:
    errors: frozenset[str | None] | None = None
    results: list[ReturnedResult] = []
    for fields in _after_last_assistant(_indexed(attrs, _OI_IN), "message.role"):
        if fields.get("message.role") != "tool" or len(results) >= MAX_CALLS:
            continue
        if errors is None:
            errors = _oi_anthropic_errors(attrs)
        call_id = _text(fields.get("message.tool_call_id"))
        results.append(ReturnedResult(call_id, fields.get("message.content"), call_id in errors))
    return results


def _oi_anthropic_errors(attrs: Mapping[str, Any]) -> frozenset[str | None]:
    """OpenInference drops Anthropic's ``is_error`` from the messages; the raw request
    (``input.value``) still has it. Parsed only when the flag is there (a C substring test)."""
    raw = attrs.get("input.value")
    if not isinstance(raw, str) or ('"is_error": true' not in raw and '"is_error":true' not in raw):
        return frozenset()
    request = _json(raw)
    messages = request.get("messages") if isinstance(request, dict) else None
    failed: set[str | None] = set()
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if (
                isinstance(block, dict)
                and block.get("type") == "tool_result"
                and block.get("is_error") is True
            ):
                failed.add(_text(block.get("tool_use_id")))
    return frozenset(failed)


def _tl_calls(attrs: Mapping[str, Any]) -> list[RequestedCall]:
    calls: list[RequestedCall] = []
    for _index, fields in sorted(_indexed(attrs, _TL_COMPLETION).items()):
        calls += _calls_in(fields, "tool_calls.", "name", "arguments", "id")
    return calls[:MAX_CALLS]


def _tl_results(attrs: Mapping[str, Any]) -> list[ReturnedResult]:
    results: list[ReturnedResult] = []
    for fields in _after_last_assistant(_indexed(attrs, _TL_PROMPT), "role"):
        if fields.get("role") == "tool" and len(results) < MAX_CALLS:
            results.append(ReturnedResult(_text(fields.get("tool_call_id")), fields.get("content")))
    return results


# -- older OTel GenAI per-message span events -------------------------------------------------


def _event_calls(events: Iterable[tuple[str, Mapping[str, Any]]]) -> list[RequestedCall]:
    calls: list[RequestedCall] = []
    for name, attrs in events:
        if name != "gen_ai.choice":
            continue
        raw = attrs.get("tool_calls")
        if raw is None:
            message = attrs.get("message")
            message = _json(message) if isinstance(message, str) else message
            raw = message.get("tool_calls") if isinstance(message, dict) else None
        for item in _json(raw) if isinstance(raw, str) else raw or ():
            if not isinstance(item, dict) or len(calls) >= MAX_CALLS:
                continue
            function = item.get("function")
            function = function if isinstance(function, dict) else item
            name_ = _text(function.get("name"))
            if name_ is not None:
                calls.append(RequestedCall(_text(item.get("id")), name_, function.get("arguments")))
    return calls


def _event_results(events: Iterable[tuple[str, Mapping[str, Any]]]) -> list[ReturnedResult]:
    results: list[ReturnedResult] = []
    for name, attrs in events:
        if name == "gen_ai.assistant.message":
            results = []  # only the results after the last assistant message are this turn's
        elif name == "gen_ai.tool.message" and len(results) < MAX_CALLS:
            results.append(ReturnedResult(_text(attrs.get("id")), attrs.get("content")))
    return results


# -- public ---------------------------------------------------------------------------------

#: The core's reader of a model span's messages (its GenAI lists read in the core, the other
#: shapes by the functions above), built once; the derivation stage uses it too.
MESSAGE_READER = _core.Messages(
    RequestedCall,
    fields_of(RequestedCall),
    ReturnedResult,
    fields_of(ReturnedResult),
    (_oi_calls, _tl_calls, _event_calls, _oi_results, _tl_results, _event_results),
)

#: ``has_content(attrs, events=()) -> bool``: whether the span carries any messages at all
#: (capture may be off); ``events`` are ``(name, attributes)`` pairs.
has_content: Callable[..., bool] = MESSAGE_READER.has_content
#: ``requested_calls(attrs, events=()) -> list[RequestedCall]``: the tool calls the model asked
#: for in this span's output, in order.
requested_calls: Callable[..., list[RequestedCall]] = MESSAGE_READER.requested_calls
#: ``returned_results(attrs, events=()) -> list[ReturnedResult]``: the tool results this span's
#: input sent back (after the last assistant message).
returned_results: Callable[..., list[ReturnedResult]] = MESSAGE_READER.returned_results


def capture_hint(attrs: Mapping[str, Any]) -> str:
    """The setting that turns message capture on, for the instrumentation that made the span."""
    if "openinference.span.kind" in attrs:
        return (
            "OpenInference: unset OPENINFERENCE_HIDE_INPUTS, OPENINFERENCE_HIDE_OUTPUTS, "
            "OPENINFERENCE_HIDE_INPUT_MESSAGES and OPENINFERENCE_HIDE_OUTPUT_MESSAGES (or "
            "TraceConfig(hide_inputs=False, hide_outputs=False))"
        )
    if (
        any(key.startswith("traceloop.") for key in attrs)
        or "llm.request.type" in attrs
        or ("gen_ai.is_streaming" in attrs)
    ):
        return "OpenLLMetry: TRACELOOP_TRACE_CONTENT=true (or Traceloop.init(trace_content=True))"
    return (
        "OpenTelemetry GenAI (opentelemetry-instrumentation-openai-v2 and the other contrib "
        "instrumentations): OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and "
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only (messages on the span; "
        "without the opt-in they go to log events, which a span processor cannot read)"
    )
