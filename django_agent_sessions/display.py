"""Display-ready items for browsers: one shape for stored history and live run items.

Stored items are the SDK's input items (dicts); live items are the SDK's ``RunItem``
objects, converted with ``to_input_item()`` and then through the same function, so a
conversation looks the same in the ``history`` frame and in ``item.completed``.

Every display item has a ``kind``:

- ``message``: ``role``, ``text``
- ``tool_call``: ``call_id``, ``name``, ``arguments`` (the JSON text the model wrote)
- ``tool_output``: ``call_id``, ``output`` (text)
- ``reasoning``: ``text`` (the summary, often empty)
- ``handoff``: ``source``, ``target`` (agent names; live runs only: the handoff's tool
  call shows as a ``tool_call``, and history shows its output as a ``tool_output``)
- ``other``: ``type`` (an item type a chat page may ignore)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agents.items import HandoffOutputItem, RunItem

from django_agent_sessions import serialization

_CALL_TYPES = {"function_call", "custom_tool_call", "computer_call", "shell_call"}


def display_items(items: list[Any]) -> list[dict[str, Any]]:
    return [display_item(item) for item in items if isinstance(item, Mapping)]


def display_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """One stored (input) item as the browser shows it."""
    kind = serialization.item_type(item)
    if kind == "message":
        return {
            "kind": "message",
            "role": _text(item.get("role")) or "assistant",
            "text": serialization.message_text(item),
        }
    if kind in _CALL_TYPES:
        return {
            "kind": "tool_call",
            "call_id": _text(item.get("call_id")),
            "name": _text(item.get("name")) or kind,
            "arguments": _as_text(item.get("arguments", item.get("input", ""))),
        }
    if serialization.is_call_output(item):
        return {
            "kind": "tool_output",
            "call_id": _text(item.get("call_id")),
            "output": _as_text(item.get("output", "")),
        }
    if kind == "reasoning":
        summary = item.get("summary")
        text = serialization.message_text({"content": summary}) if isinstance(summary, list) else ""
        return {"kind": "reasoning", "text": text}
    return {"kind": "other", "type": kind}


def display_run_item(item: RunItem) -> dict[str, Any]:
    """A live ``RunItem`` from the SDK's stream as the browser shows it."""
    if isinstance(item, HandoffOutputItem):
        return {
            "kind": "handoff",
            "source": item.source_agent.name,
            "target": item.target_agent.name,
        }
    raw = item.to_input_item()
    return display_item(raw) if isinstance(raw, Mapping) else {"kind": "other", "type": ""}


def frame_text(frame: Any) -> str:
    """A wire frame as the consumer sends it: JSON, non-ASCII kept as UTF-8."""
    return json.dumps(frame, ensure_ascii=False)


def frame_size(frame: Any) -> int:
    """Bytes a frame takes on the socket (what ``MAX_RUN_BYTES`` counts)."""
    return len(frame_text(frame).encode("utf-8", "replace"))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
