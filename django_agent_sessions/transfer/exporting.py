"""Writing conversations out in the export format (see the package docstring)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime

from django.db.models import QuerySet

from django_agent_sessions import serialization
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.transfer.format import FORMAT, FORMATS, ITEM_BATCH, VERSION

# Conversations read per query; a module attribute so tests can make batches small.
EXPORT_FETCH_BATCH = 200


def export_chunks(conversations: QuerySet[AgentSession], fmt: str = "json") -> Iterator[str]:
    """The export of ``conversations`` as text chunks, items in stored order.

    Streams: a query per batch of conversations and one for their items; at most one
    conversation's text is in memory at a time.
    """
    if fmt not in FORMATS:
        raise ValueError(f"Unknown export format {fmt!r}; use one of {', '.join(FORMATS)}.")
    bodies = _conversation_texts(conversations)
    if fmt == "jsonl":
        for body in bodies:
            yield body + "\n"
        return
    yield f'{{"format":"{FORMAT}","version":{VERSION},"conversations":['
    for index, body in enumerate(bodies):
        yield ("," if index else "") + body
    yield "]}\n"


def _conversation_texts(conversations: QuerySet[AgentSession]) -> Iterator[str]:
    """One JSON text per conversation (a conversation is the unit held in memory). A
    temporary chat is never exported: it leaves nothing behind (``store.temporary``)."""
    rows = conversations.filter(temporary=False).select_related("owner").order_by("pk")
    batch = list(rows[:EXPORT_FETCH_BATCH])
    while batch:
        yield from _batch_texts(batch, rows.db)
        # Keyset, not OFFSET: every batch costs the same, however far the export is.
        batch = list(rows.filter(pk__gt=batch[-1].pk)[:EXPORT_FETCH_BATCH])


def _batch_texts(batch: list[AgentSession], using: str) -> Iterator[str]:
    items = (
        SessionItem.objects.using(using)
        .filter(session_id__in=[row.pk for row in batch])
        .order_by("session_id", "id")
        .values_list("session_id", "created_at", "payload")
        .iterator(chunk_size=ITEM_BATCH)
    )
    pending = next(items, None)
    for row in batch:
        # The header object, reopened to append "items" as the stored texts themselves.
        parts = [_header(row)[:-1], ',"items":[']
        count = 0
        while pending is not None and pending[0] == row.pk:
            parts.append(("," if count else "") + _item_text(pending[1], pending[2]))
            count += 1
            pending = next(items, None)
        parts.append("]}")
        yield "".join(parts)


def _header(row: AgentSession) -> str:
    return json.dumps(
        {
            "session_id": row.session_id,
            "owner": row.owner.get_username() if row.owner is not None else None,
            "title": row.title,
            "metadata": row.metadata,
            "created_at": row.created_at.isoformat(),
            "updated_at": row.updated_at.isoformat(),
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def _item_text(created_at: datetime, payload: str) -> str:
    if payload[:1] == serialization.MARK:
        # Its files are in storage (files.inline): the export carries them inline, whole.
        # A file that cannot be read is named instead (serialization.loads).
        restored = serialization.decode_payloads([payload]) or [serialization.loads(payload)]
        payload = serialization.dumps(restored[0])
    return f'{{"created_at":"{created_at.isoformat()}","item":{payload}}}'
