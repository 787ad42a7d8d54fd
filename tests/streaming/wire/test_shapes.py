"""``shapes``: the schema's building blocks, closed objects and typed values."""

from __future__ import annotations

from django_agent_sessions.streaming.wire.shapes import Shape, nullable, one_of, string


def test_a_shape_is_closed_and_names_its_required_fields() -> None:
    schema = Shape("A thing.", {"a": string()}, {"b": string("B.")}).schema(type="thing")
    assert schema["required"] == ["type", "a"]
    assert schema["properties"]["type"] == {"const": "thing"}
    assert schema["properties"]["b"] == {"type": "string", "description": "B."}
    assert schema["additionalProperties"] is False
    assert nullable(string())["type"] == ["string", "null"]
    assert one_of("Either.", "x")["oneOf"] == [{"$ref": "#/$defs/x"}]
