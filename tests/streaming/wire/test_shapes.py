"""``shapes``: the schema's building blocks; an object is closed, its fields typed."""

from __future__ import annotations

from django_agent_sessions.streaming.wire.shapes import Shape, integer, nullable, one_of, ref


def test_a_shape_is_a_closed_object_with_its_constants_first() -> None:
    shape = Shape("A thing.", {"n": integer(minimum=1)}, {"note": nullable(integer())})
    schema = shape.schema(type="thing")
    assert schema["required"] == ["type", "n"]
    assert schema["properties"]["type"] == {"const": "thing"}
    assert schema["properties"]["note"]["type"] == ["integer", "null"]
    assert schema["additionalProperties"] is False
    assert one_of("Either.", "a", "b") == {"description": "Either.", "oneOf": [ref("a"), ref("b")]}
