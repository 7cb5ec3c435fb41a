"""The generated slotted constructors give the objects the dataclasses' own ``__init__`` gives."""

from __future__ import annotations

import dataclasses

import pytest

from otel_cycleguard.detect._slotted import fields_of, slotted_constructor
from otel_cycleguard.detect.records import ModelTurn, ToolCall, new_model_turn, new_tool_call
from otel_cycleguard.spans import SpanData
from otel_cycleguard.wire._spandata import new_span


def test_a_tool_call_made_fast_is_the_one_the_class_makes() -> None:
    values = ("grep", {"q": 1}, "no matches", True, 1.0, 2.0, False, "abc", "span1")
    fast = new_tool_call(*values)
    slow = ToolCall(**dict(zip(fields_of(ToolCall), values, strict=True)))
    assert type(fast) is ToolCall
    assert fast == slow and repr(fast) == repr(slow)


def test_a_model_turn_made_fast_is_the_one_the_class_makes() -> None:
    values = ("text", 10, 5, None, 3.0, None, "s", True, "format: bad")
    fast = new_model_turn(*values)
    assert fast == ModelTurn(**dict(zip(fields_of(ModelTurn), values, strict=True)))


def test_the_objects_stay_frozen() -> None:
    call = new_tool_call("t", None, None, False, None, None, None, None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.tool = "other"  # type: ignore[misc]


def test_every_field_must_be_given() -> None:
    with pytest.raises(TypeError):
        new_tool_call("t", None, None)
    with pytest.raises(TypeError):
        new_span(*range(len(fields_of(SpanData)) - 1))


def test_a_class_without_fields_is_refused() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Empty:
        pass

    with pytest.raises(TypeError):
        slotted_constructor(Empty)
