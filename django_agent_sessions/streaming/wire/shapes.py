"""The building blocks of the wire protocol's JSON Schema (``protocol``): typed fields
and closed objects. Plain data, no Django."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

Schema = dict[str, Any]


def typed(json_type: str, description: str = "", **rules: Any) -> Schema:
    schema: Schema = {"type": json_type, **rules}
    return {**schema, "description": description} if description else schema


string = partial(typed, "string")
integer = partial(typed, "integer")


def nullable(schema: Schema) -> Schema:
    return {**schema, "type": [schema["type"], "null"]}


def ref(name: str) -> Schema:
    return {"$ref": f"#/$defs/{name}"}


def one_of(description: str, *names: str) -> Schema:
    return {"description": description, "oneOf": [ref(name) for name in names]}


@dataclass(frozen=True)
class Shape:
    """A JSON object: its required and optional fields, nothing else."""

    description: str
    required: dict[str, Schema] = field(default_factory=dict)
    optional: dict[str, Schema] = field(default_factory=dict)
    rules: Schema = field(default_factory=dict)  # more keywords (if/then/else)

    def schema(self, **constants: str) -> Schema:
        fields = {name: {"const": value} for name, value in constants.items()}
        fields |= self.required
        return {
            "type": "object",
            "description": self.description,
            "properties": {**fields, **self.optional},
            "required": list(fields),
            "additionalProperties": False,
            **self.rules,
        }
