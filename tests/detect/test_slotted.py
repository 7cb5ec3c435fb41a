"""The generated slotted constructors give the objects the dataclasses' own ``__init__`` gives,
and the core reads them (through their slot descriptors) as it reads any other object."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.detect import Detector
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


def _signals_of(records: list) -> list[tuple]:
    session = Detector(CycleGuardConfig()).session("s")
    out = []
    for record in records:
        observe = (
            session.observe_tool_call if hasattr(record, "tool") else session.observe_model_turn
        )
        out += [(s.dimension, s.rule, s.level, s.step, s.streak) for s in observe(record)]
    return out


def _run(make_call, make_turn) -> list:
    """A loop of one call with a failing model turn between: every field the core reads."""
    records = []
    for i in range(8):
        records.append(make_call("grep", {"pattern": "TODO"}, "no matches", False, i, i + 0.5))
        records.append(make_turn("let me grep again", 10, 5, True, "format error: 12"))
    return records


def test_the_core_reads_a_subclass_and_a_look_alike_as_it_reads_the_records() -> None:
    """The core reads ToolCall and ModelTurn fields through their slot descriptors; any other
    object (a subclass, a plain object with the same attributes) by getattr, to the same
    signals."""

    @dataclasses.dataclass(frozen=True, slots=True)
    class MyCall(ToolCall):
        extra: int = 0

    def call(tool, arguments, result, error, start, end):  # type: ignore[no-untyped-def]
        return dict(
            tool=tool, arguments=arguments, result=result, error=error, start_s=start, end_s=end
        )

    def turn(text, input_tokens, output_tokens, error, error_text):  # type: ignore[no-untyped-def]
        return dict(
            text=text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            error=error,
            error_text=error_text,
        )

    records = _signals_of(_run(lambda *a: ToolCall(**call(*a)), lambda *a: ModelTurn(**turn(*a))))
    assert any(dimension.value == "identical_call" for dimension, *_ in records)
    subclass = _signals_of(_run(lambda *a: MyCall(**call(*a)), lambda *a: ModelTurn(**turn(*a))))
    blank = {f: None for f in fields_of(ToolCall)} | {"read_only": None}
    blank_turn = {f: None for f in fields_of(ModelTurn)}
    look_alike = _signals_of(
        _run(
            lambda *a: SimpleNamespace(**(blank | call(*a))),
            lambda *a: SimpleNamespace(**(blank_turn | turn(*a))),
        )
    )
    assert subclass == records
    assert look_alike == records


def test_a_look_alike_missing_a_field_raises_as_getattr_does() -> None:
    session = Detector(CycleGuardConfig()).session("s")
    with pytest.raises(AttributeError):
        session.observe_tool_call(SimpleNamespace(tool="grep"))
