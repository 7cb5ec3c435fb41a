"""Agents written the common way: a loop in the user's own code around a plain model client.

Each runs one ``weather-agent`` parent span (one trace: one session), asks the model, runs the
tools it asks for (``get_weather``), sends the results back and repeats until the model answers
in text. ``tool_spans`` wraps every tool run in the user's own OTel GenAI ``execute_tool`` span
(with or without the tool-call id), as a framework that traces its tools would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from opentelemetry.trace import Tracer

TOOL = "get_weather"
WEATHER = {
    "Paris": "12C rain",
    "London": "9C fog",
    "Rome": "21C sun",
    "Berlin": "7C wind",
    "Madrid": "25C sun",
    "Oslo": "-2C snow",
    "Lisbon": "19C cloud",
}
OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": TOOL,
            "description": "Current weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
ANTHROPIC_TOOLS = [
    {
        "name": TOOL,
        "description": "Current weather in a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]

ToolSpans = Literal["none", "with_id", "without_id"]


def get_weather(city: str) -> str:
    return WEATHER.get(city, "unknown city")


@dataclass
class Run:
    """What the agent did: the tool calls it ran and the final answer (None: stopped)."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    answer: str | None = None


def _run_tool(tracer: Tracer, tool_spans: ToolSpans, call_id: str, args: dict[str, Any]) -> str:
    if tool_spans == "none":
        return get_weather(**args)
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": TOOL,
        "gen_ai.tool.call.arguments": json.dumps(args),
    }
    if tool_spans == "with_id":
        attrs["gen_ai.tool.call.id"] = call_id
    with tracer.start_as_current_span(f"execute_tool {TOOL}", attributes=attrs) as span:
        result = get_weather(**args)
        span.set_attribute("gen_ai.tool.call.result", result)
        return result


def openai_agent(
    client: Any, tracer: Tracer, run: Run, *, tool_spans: ToolSpans = "none", turns: int = 40
) -> Run:
    with tracer.start_as_current_span("weather-agent"):
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Europe?"}]
        for _ in range(turns):
            reply = client.chat.completions.create(
                model="gpt-test", messages=messages, tools=OPENAI_TOOLS
            )
            message = reply.choices[0].message
            if not message.tool_calls:
                run.answer = message.content
                return run
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                args = json.loads(call.function.arguments)
                run.calls.append(args)
                result = _run_tool(tracer, tool_spans, call.id, args)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return run


async def async_openai_agent(client: Any, tracer: Tracer, run: Run, *, turns: int = 40) -> Run:
    with tracer.start_as_current_span("weather-agent"):
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Europe?"}]
        for _ in range(turns):
            reply = await client.chat.completions.create(
                model="gpt-test", messages=messages, tools=OPENAI_TOOLS
            )
            message = reply.choices[0].message
            if not message.tool_calls:
                run.answer = message.content
                return run
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                args = json.loads(call.function.arguments)
                run.calls.append(args)
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": get_weather(**args)}
                )
    return run


def _anthropic_step(reply: Any, run: Run, tracer: Tracer, tool_spans: ToolSpans) -> list[Any]:
    uses = [block for block in reply.content if block.type == "tool_use"]
    if not uses:
        run.answer = "".join(b.text for b in reply.content if b.type == "text")
        return []
    results = []
    for use in uses:
        run.calls.append(dict(use.input))
        result = _run_tool(tracer, tool_spans, use.id, dict(use.input))
        results.append({"type": "tool_result", "tool_use_id": use.id, "content": result})
    return [
        {
            "role": "assistant",
            "content": [block.model_dump(exclude_none=True) for block in reply.content],
        },
        {"role": "user", "content": results},
    ]


def anthropic_agent(
    client: Any, tracer: Tracer, run: Run, *, tool_spans: ToolSpans = "none", turns: int = 40
) -> Run:
    with tracer.start_as_current_span("weather-agent"):
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Europe?"}]
        for _ in range(turns):
            reply = client.messages.create(
                model="claude-test", max_tokens=256, messages=messages, tools=ANTHROPIC_TOOLS
            )
            more = _anthropic_step(reply, run, tracer, tool_spans)
            if not more:
                return run
            messages.extend(more)
    return run


async def async_anthropic_agent(client: Any, tracer: Tracer, run: Run, *, turns: int = 40) -> Run:
    with tracer.start_as_current_span("weather-agent"):
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Europe?"}]
        for _ in range(turns):
            reply = await client.messages.create(
                model="claude-test", max_tokens=256, messages=messages, tools=ANTHROPIC_TOOLS
            )
            more = _anthropic_step(reply, run, tracer, "none")
            if not more:
                return run
            messages.extend(more)
    return run
