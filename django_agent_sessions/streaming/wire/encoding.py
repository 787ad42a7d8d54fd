"""What goes on the wire: frame encoding and display-ready items for browsers.

Stored items are the SDK's input items (dicts); live items are the SDK's ``RunItem``
objects, converted with ``to_input_item()``. Both are classified by ``item_views.describe``
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
A user message with files the chat stored (``store.uploads``) carries them as ``files``
(``id``, ``name``, ``content_type``, ``size``), in history and live alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agents.items import HandoffOutputItem, RunItem

from django_agent_sessions.item_views import ItemView, describe, notes_to_show, typed_text
from django_agent_sessions.rendering import render_markdown
from django_agent_sessions.streaming.wire.protocol import (
    PROTOCOL_VERSION,  # in every history
    ROLES,
)
from django_agent_sessions.streaming.wire.text import is_valid_unicode as is_valid_unicode
from django_agent_sessions.streaming.wire.text import valid_unicode


def display_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """One stored (input) item as the browser shows it: valid Unicode whatever is
    stored (a lone surrogate becomes U+FFFD; the stored item keeps it)."""
    shown = _formatted(describe(item))
    return {key: valid_unicode(value) for key, value in shown.items()}


def history_items(entries: list[Any], runs: list[Any]) -> list[dict[str, Any]]:
    """Stored items (``store.conversations.StoredItem``) for the history frame, each
    with its ``id``, ``created_at`` and ``run_id``; after the items of a run that was
    stopped or failed, the reply it had streamed, with the run's ``status``.
    """
    shown: list[dict[str, Any]] = []
    ended_early = [run for run in runs if run.status in _ENDED_EARLY]
    notes = notes_to_show([entry.id for entry in entries], ended_early)
    ordered = sorted(runs, key=lambda run: run.history_item_id)
    run_index = 0
    labelled: set[str] = set()
    for entry in entries:
        while notes and notes[0].last_item_id < entry.id:
            shown.append(_note(notes.pop(0)))
        if not isinstance(entry.item, Mapping):
            continue
        while run_index + 1 < len(ordered) and ordered[run_index + 1].history_item_id < entry.id:
            run_index += 1
        run = ordered[run_index] if ordered else None
        owner = run if run is not None and _holds(run, entry.id) else None
        item = display_item(entry.item)
        if entry.files and item.get("role") == "user":
            # The files show beside the text (the chat's own uploads), not as "[image]".
            item.update(text=valid_unicode(typed_text(entry.item)), files=list(entry.files))
        item.update(
            id=entry.id,
            created_at=entry.created_at.isoformat(),
            run_id=owner.run_id if owner is not None else None,
        )
        if owner is not None and owner.client_id and owner.run_id not in labelled:
            labelled.add(owner.run_id)
            # Only the user message the client sent with this id carries it: when the
            # history's limit cut that message off, the run's first item shown does not.
            if item.get("kind") == "message" and item.get("role") == "user":
                item["client_id"] = owner.client_id
        shown.append(item)
    shown.extend(_note(note) for note in notes)
    return shown


_ENDED_EARLY = {"cancelled", "failed", "interrupted"}


def _holds(run: Any, item_id: int) -> bool:
    if item_id <= run.history_item_id:
        return False
    return bool(run.status == "running" or item_id <= run.last_item_id)


def _note(run: Any) -> dict[str, Any]:
    """The unfinished reply of a stopped or failed run, as history shows it."""
    note: dict[str, Any] = {
        "kind": "message",
        "role": "assistant",
        "text": valid_unicode(run.partial_text),
        "html": render_markdown(valid_unicode(run.partial_text)),
        # A run interrupted by a deploy shows as failed, with its own code.
        "status": "cancelled" if run.status == "cancelled" else "failed",
        "id": None,
        "created_at": None,
        "run_id": run.run_id,
    }
    if note["status"] == "failed":
        note["error"] = {"code": run.error_code or "agent_error"}
    return note


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
        if role not in ROLES:
            # Stored by server code, but no role a page knows how to show.
            return {"kind": "other", "type": view.type}
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
    """A wire frame as the consumer sends it: JSON, non-ASCII kept as UTF-8.

    Always valid UTF-8: a lone surrogate that reached a frame (UTF-8 cannot encode it,
    and daphne would close the socket with 1011) is sent as a JSON escape instead.
    """
    text = json.dumps(frame, ensure_ascii=False)
    if is_valid_unicode(text):
        return text
    return json.dumps(frame, ensure_ascii=True)


def frame_size(frame: Any) -> int:
    """Bytes a frame takes on the socket (what ``MAX_RUN_BYTES`` counts)."""
    return len(frame_text(frame).encode("utf-8", "replace"))


def history_fields(history: Any, max_bytes: int | None) -> dict[str, Any]:
    """The items of a history frame or page, within ``max_bytes``: the query bounded the
    stored JSON's characters, this bounds the frame's bytes."""
    items = history_items(history.entries, history.runs)
    has_more = history.has_more
    if max_bytes is not None:
        sizes = [frame_size(item) + 1 for item in items]
        total = sum(sizes)
        while len(items) > 1 and total > max_bytes:
            total -= sizes.pop(0)
            items.pop(0)
            has_more = True
    oldest = next((item["id"] for item in items if item.get("id") is not None), None)
    return {"items": items, "has_more": has_more, "oldest_id": oldest}


def history_frame(
    fields: dict[str, Any],
    *,
    last_item_id: int | None,
    active_run: Any,
    pending_approvals: list[dict[str, Any]],
    queued: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The ``history`` frame: ``fields`` are its items, ``has_more`` and ``oldest_id``;
    ``queued``: the conversation's queued messages (``WHILE_RUNNING = "queue"``)."""
    return {
        "type": "history",
        "protocol": PROTOCOL_VERSION,
        **fields,
        "last_item_id": last_item_id,
        "active_run": active_run,
        "pending_approvals": pending_approvals,
        "queued": queued or [],
    }


def missed_events(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    """The events a run published before a tab followed it, rebuilt from the run's
    snapshot, in order: its completed items, then the text so far of its current
    message as one delta."""
    run_id = snapshot["run_id"]
    missed: list[dict[str, Any]] = [
        {"type": "item.completed", "run_id": run_id, "seq": seq, "item": item}
        for item, seq in zip(snapshot["items"], snapshot["item_seqs"], strict=True)
    ]
    if snapshot["text"]:
        text_seq = snapshot["text_seq"]
        missed.append(
            {"type": "text.delta", "run_id": run_id, "seq": text_seq, "delta": snapshot["text"]}
        )
    return sorted(missed, key=lambda event: int(event["seq"]))
