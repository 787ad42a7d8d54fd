"""What goes on the wire: frame encoding and display-ready items for browsers.

Stored items are the SDK's input items (dicts); live items are the SDK's ``RunItem``
objects, converted with ``to_input_item()``. Both are classified by ``items.describe``
and formatted here, so a conversation looks the same in the ``history`` frame and in
``item.completed``.

Every display item has a ``kind``:

- ``message``: ``role``, ``text``; assistant messages also ``html``: the text's Markdown
  rendered and sanitized by ``rendering.render_markdown``, safe to insert as HTML
- ``tool_call``: ``call_id``, ``name``, ``arguments`` (the JSON text the model wrote)
- ``tool_output``: ``call_id``, ``output`` (text)
- ``reasoning``: ``text`` (the summary, often empty)
- ``handoff``: ``source``, ``target`` (agent names; live runs only: the handoff's tool
  call shows as a ``tool_call``, and history shows its output as a ``tool_output``)
- ``other``: ``type`` (an item type a chat page may ignore)

Items of the ``history`` frame also carry ``created_at`` (ISO 8601), when they were stored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from agents.items import HandoffOutputItem, RunItem

from django_agent_sessions.items import ItemView, describe
from django_agent_sessions.rendering import render_markdown


def display_items(
    items: list[Any], created_at: Sequence[datetime] | None = None
) -> list[dict[str, Any]]:
    """Stored items for the ``history`` frame; with ``created_at`` (one time per item),
    each carries its ``created_at`` in ISO 8601 (live items are shown as they arrive)."""
    if created_at is None or len(created_at) != len(items):
        return [display_item(item) for item in items if isinstance(item, Mapping)]
    return [
        {**display_item(item), "created_at": at.isoformat()}
        for item, at in zip(items, created_at, strict=True)
        if isinstance(item, Mapping)
    ]


def display_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """One stored (input) item as the browser shows it."""
    return _formatted(describe(item))


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


def _formatted(view: ItemView) -> dict[str, Any]:
    if view.kind == "message":
        role = view.role or "assistant"
        if role == "user":
            return {"kind": "message", "role": role, "text": view.text}
        # Rendered once, on the server: every tab and the history show the same safe HTML.
        return {
            "kind": "message",
            "role": role,
            "text": view.text,
            "html": render_markdown(view.text),
        }
    if view.kind == "tool_call":
        return {
            "kind": "tool_call",
            "call_id": view.call_id,
            "name": view.name,
            "arguments": view.arguments,
        }
    if view.kind == "tool_output":
        return {"kind": "tool_output", "call_id": view.call_id, "output": view.text}
    if view.kind == "reasoning":
        return {"kind": "reasoning", "text": view.text}
    return {"kind": "other", "type": view.type}


def frame_text(frame: Any) -> str:
    """A wire frame as the consumer sends it: JSON, non-ASCII kept as UTF-8."""
    return json.dumps(frame, ensure_ascii=False)


def frame_size(frame: Any) -> int:
    """Bytes a frame takes on the socket (what ``MAX_RUN_BYTES`` counts)."""
    return len(frame_text(frame).encode("utf-8", "replace"))
