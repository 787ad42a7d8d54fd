"""Realistic SDK input items, shaped as the Runner stores them (valid SDK input schema)."""

from __future__ import annotations

import itertools
from typing import Any

_counter = itertools.count()

_ANSWER = (
    "Tomorrow in Lisbon it will be mostly sunny with a high of 24 °C and a light breeze "
    "from the north-west. Rain is unlikely before Thursday, when a front brings showers "
    "in the afternoon. Take sunglasses; a light jacket is enough for the evening."
)


def user_message(text: str = "What's the weather in Lisbon tomorrow?") -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant_message(text: str = _ANSWER) -> dict[str, Any]:
    return {
        "id": f"msg_{next(_counter):012d}",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def turn_pair(tag: str = "") -> list[dict[str, Any]]:
    """The two items of one exchange: what ``add_items`` of 2 realistic items stores."""
    return [user_message(f"What's the weather in Lisbon tomorrow? {tag}"), assistant_message()]


def history_chunk() -> list[dict[str, Any]]:
    """A four-item exchange with a tool call, for realistic histories."""
    call_id = f"call_{next(_counter):012d}"
    return [
        user_message(),
        {
            "id": f"fc_{next(_counter):012d}",
            "type": "function_call",
            "call_id": call_id,
            "name": "get_weather",
            "arguments": '{"city": "Lisbon", "day": "tomorrow"}',
            "status": "completed",
        },
        {
            "type": "function_call_output",
            "call_id": call_id,
            "output": '{"summary": "sunny", "high_c": 24, "low_c": 16, "wind": "NW 12 km/h"}',
        },
        assistant_message(),
    ]


def marked(marker: str) -> dict[str, Any]:
    """A user message that carries a marker, for the correctness checks."""
    return user_message(marker)


def marker_of(item: Any) -> str:
    content = item.get("content") if isinstance(item, dict) else None
    return content if isinstance(content, str) else ""
