"""Writing an import: new conversations and their items, in one transaction, all or nothing.

``transfer.importing`` reads and validates the file; this module only writes, refusing
(``Conflict``, nothing written) a conversation id that exists or an owner who does not.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import router, transaction

from django_agent_sessions.files.inline import InlineFile
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.serialization import EncodedItem
from django_agent_sessions.store import attachments


class Conflict(Exception):
    """The import cannot be written as it is; the message says why. Nothing was written."""


@dataclass(frozen=True)
class Conversation:
    """One validated conversation, ready to insert."""

    session_id: str
    owner: str | None
    title: str
    metadata: Any
    created_at: datetime
    updated_at: datetime
    items: list[tuple[datetime, EncodedItem]]
    # Inline files taken out of the items, by position (``files.inline.split_batch``).
    files: Mapping[int, list[InlineFile]] = field(default_factory=dict)


def insert(
    conversations: Sequence[Conversation],
    *,
    using: str | None = None,
    conversation_batch: int,
    item_batch: int,
) -> None:
    """Insert the conversations and their items in one transaction."""
    using = using or router.db_for_write(AgentSession)
    with attachments.deleted_on_failure() as saved, transaction.atomic(using=using):
        owners = _owner_pks(conversations, using)
        taken = set(
            AgentSession.objects.using(using)
            .filter(session_id__in=[c.session_id for c in conversations])
            .values_list("session_id", flat=True)
        )
        if taken:
            raise Conflict(
                f"Conversation {sorted(taken)[0]!r} already exists; delete it first or "
                "leave it out of the file. Nothing was imported."
            )
        rows = AgentSession.objects.using(using).bulk_create(
            [_row(c, owners) for c in conversations], batch_size=conversation_batch
        )
        stored = [
            _with_stored_files(row, c, using, saved)
            for row, c in zip(rows, conversations, strict=True)
        ]
        SessionItem.objects.using(using).bulk_create(
            _item_rows(rows, stored), batch_size=item_batch
        )


def _with_stored_files(
    row: AgentSession, conversation: Conversation, using: str, saved: list[str]
) -> Conversation:
    """``conversation`` whose items reference their files, stored in the import's
    transaction (``store.attachments``; a failed import deletes them)."""
    if not conversation.files:
        return conversation
    times = [created_at for created_at, _item in conversation.items]
    encoded = [item for _created_at, item in conversation.items]
    session = (row.pk, conversation.session_id, row.owner_id)
    encoded = attachments.with_stored_files(using, session, encoded, conversation.files, saved)
    return replace(conversation, items=list(zip(times, encoded, strict=True)))


def _owner_pks(conversations: Sequence[Conversation], using: str) -> dict[str, Any]:
    names = {c.owner for c in conversations if c.owner is not None}
    if not names:
        return {}
    user_model = get_user_model()
    field = user_model.USERNAME_FIELD
    found = dict(
        user_model._default_manager.db_manager(using)
        .filter(**{f"{field}__in": names})
        .values_list(field, "pk")
    )
    missing = sorted(names - set(found))
    if missing:
        raise Conflict(
            f"Owner {missing[0]!r} does not exist; create the user first. Nothing was imported."
        )
    return found


def _row(conversation: Conversation, owners: dict[str, Any]) -> AgentSession:
    return AgentSession(
        session_id=conversation.session_id,
        owner_id=owners.get(conversation.owner) if conversation.owner else None,
        title=conversation.title,
        metadata=conversation.metadata,
        item_count=len(conversation.items),
        created_at=conversation.created_at,
        updated_at=conversation.updated_at,
    )


def _item_rows(
    rows: Sequence[AgentSession], conversations: Sequence[Conversation]
) -> Iterator[SessionItem]:
    for row, conversation in zip(rows, conversations, strict=True):
        for created_at, item in conversation.items:
            yield SessionItem(
                session_id=row.pk,
                payload=item.payload,
                item_type=item.item_type,
                role=item.role,
                call_id=item.call_id,
                preview=item.preview,
                search_text=item.search_text,
                created_at=created_at,
            )
