"""Files a person gives the chat: stored on upload, then given to a run with a message.

``accept`` is one transaction: the person's row is locked (so that the per-person limits
are exact across workers: two uploads of one person wait for each other), the
conversation is created for them if it does not exist yet (an attachment belongs to a
conversation) and written (the lock every change of it queues on), and the file is
stored once per conversation by SHA-256. A file already there is given back without
counting against the limits. A failure deletes the file it wrote (``deleted_on_failure``).

``for_message`` reads the files a message names, the person's own in that conversation,
as the content parts the SDK gives a model, and as the chat shows them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import router, transaction
from django.db.models import F, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from django_agent_sessions import serialization
from django_agent_sessions.conf.values import parse_rate
from django_agent_sessions.exceptions import SessionOwnershipError, UploadRefused
from django_agent_sessions.files import inline, storage
from django_agent_sessions.files.models import Attachment
from django_agent_sessions.models import AgentSession
from django_agent_sessions.store.attachments import deleted_on_failure
from django_agent_sessions.store.hops import hop

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


@dataclass(frozen=True)
class StoredFile:
    """An attachment as the chat shows it."""

    id: int
    name: str
    content_type: str
    size: int

    def wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "content_type": self.content_type,
            "size": self.size,
        }


def accept(owner: Any, session_id: str, *, name: str, data: bytes, content_type: str) -> StoredFile:
    """Store ``data`` (its type already sniffed and allowed) as a file of the person's
    conversation ``session_id``. Raises ``UploadRefused`` (a limit),
    ``SessionOwnershipError`` (someone else's conversation)."""
    sha256 = hashlib.sha256(data).hexdigest()
    using = router.db_for_write(Attachment)
    with transaction.atomic(using=using), deleted_on_failure() as saved:
        _lock_person(owner.pk, using)
        conversation_pk = _own_written(session_id, owner.pk, using)
        attachments = Attachment.objects.using(using)
        known = attachments.filter(session_id=conversation_pk, sha256=sha256).first()
        if known is not None:
            return _shown(known)
        _check_limits(owner.pk, len(data), using)
        stored_name = storage.save(storage.name_for(session_id, sha256), data)
        saved.append(stored_name)
        created = attachments.create(
            session_id=conversation_pk,
            owner_id=owner.pk,
            name=name[:255],
            content_type=content_type,
            size=len(data),
            sha256=sha256,
            storage_name=stored_name,
        )
    return _shown(created)


@hop
def for_message(
    session_id: str, owner_id: Any, attachment_ids: tuple[int, ...]
) -> tuple[list[dict[str, Any]], list[StoredFile]]:
    """The content parts of these attachments (in the order given) and how the chat
    shows them. Raises ``UploadRefused`` for an id that is not one of the person's files
    in the conversation ``session_id``."""
    rows = Attachment.objects.filter(
        session__session_id=session_id, session__owner_id=owner_id, pk__in=attachment_ids
    ).only("name", "content_type", "size", "storage_name")
    found = {row.pk: row for row in rows}
    missing = [pk for pk in attachment_ids if pk not in found]
    if missing:
        raise UploadRefused("unknown_file", _("A file of this message is not here any more."))
    ordered = [found[pk] for pk in attachment_ids]
    return [_part(row) for row in ordered], [_shown(row) for row in ordered]


def _part(row: Attachment) -> dict[str, Any]:
    """The SDK's input part for a file: an image, or a file with its name. The data is
    the cached text of the stored file (``storage.load_text``): never copied again."""
    data_url = storage.load_text(row.storage_name, f"data:{row.content_type};base64,")
    if row.content_type in IMAGE_TYPES:
        return {"type": "input_image", "image_url": data_url, "detail": "auto"}
    return {"type": "input_file", "file_data": data_url, "filename": row.name or "file"}


def _shown(row: Attachment) -> StoredFile:
    return StoredFile(row.pk, row.name, row.content_type, row.size)


def _lock_person(owner_id: Any, using: str) -> None:
    # PostgreSQL: a row lock on the person. SQLite (in IMMEDIATE transactions, check
    # W001) has one writer at a time: the transaction holds it from its start.
    users = get_user_model()._default_manager.using(using)
    users.select_for_update().filter(pk=owner_id).values_list("pk").first()


def _own_written(session_id: str, owner_id: Any, using: str) -> int:
    conversation, _created = AgentSession.objects.using(using).get_or_create(
        session_id=session_id, defaults={"owner_id": owner_id}
    )
    if conversation.owner_id != owner_id:
        raise SessionOwnershipError("This conversation belongs to another user.")
    # The lock every change of the conversation queues on (a write that changes nothing).
    AgentSession.objects.using(using).filter(pk=conversation.pk).update(owner_id=F("owner_id"))
    return int(conversation.pk)


def _check_limits(owner_id: Any, size: int, using: str) -> None:
    mine = Attachment.objects.using(using).filter(owner_id=owner_id)
    rate = storage.setting("UPLOAD_RATE")
    if rate is not None:
        limit, period = parse_rate(rate)
        since = timezone.now() - timedelta(seconds=period)
        if mine.filter(created_at__gte=since).count() >= limit:
            raise UploadRefused("rate_limited", _("Too many files; wait a while."))
    most = storage.setting("MAX_USER_BYTES")
    if most is not None:
        kept = mine.aggregate(total=Sum("size"))["total"] or 0
        if kept + size > most:
            message = _("Your files take all the space you have; delete a conversation first.")
            raise UploadRefused("quota_exceeded", message)


ShownRow = tuple[int, Any, Any, tuple[dict[str, Any], ...]]  # id, created_at, item, files


def shown_rows(conversation_pk: int, rows: Sequence[tuple[Any, Any, str]]) -> list[ShownRow]:
    """Stored rows ``(id, created_at, payload)`` as history shows them: each item with
    its stored files as text that names them (no storage is read), and its files."""
    files = files_by_item(conversation_pk, rows)
    shown: list[ShownRow] = []
    for item_id, created_at, payload in rows:
        if payload[:1] == inline.MARK:
            shown.append((item_id, created_at, inline.shown(payload), files.get(item_id, ())))
            continue
        decoded = serialization.decode_payloads([payload])
        if decoded:
            shown.append((item_id, created_at, decoded[0], ()))
    return shown


def files_by_item(
    conversation_pk: int, rows: Sequence[tuple[Any, Any, str]]
) -> dict[int, tuple[dict[str, Any], ...]]:
    """The stored files of each row ``(id, created_at, payload)`` that holds any, as the
    chat shows them: one query, only when a row holds a file."""
    named = {
        row[0]: [ref["name"] for ref in inline.references(row[2])]
        for row in rows
        if row[2][:1] == inline.MARK
    }
    if not named:
        return {}
    wanted = {name for names in named.values() for name in names}
    found = Attachment.objects.filter(session_id=conversation_pk, storage_name__in=wanted)
    by_name = {
        row.storage_name: _shown(row).wire()
        for row in found.only("name", "content_type", "size", "storage_name")
    }
    return {
        item_id: tuple(by_name[name] for name in names if name in by_name)
        for item_id, names in named.items()
    }
