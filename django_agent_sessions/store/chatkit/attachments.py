"""ChatKit's attachments: their metadata (ChatKit's JSON) and their bytes.

ChatKit registers a file before any thread exists, so a row belongs to its owner and,
once a message carries it, to that message's conversation (and goes with it). The bytes
go to the attachments' storage (``files.storage``), one directory per owner; they are
deleted once the transaction that deleted their row commits, by the row's ``post_delete``
(``attachment_deleted``, connected by the app config), however the row was deleted.
"""

from __future__ import annotations

import hashlib
from typing import Any, NamedTuple

from django.db import router, transaction

from django_agent_sessions.files import storage
from django_agent_sessions.models import AgentSession, ChatKitAttachment
from django_agent_sessions.store.attachments import delete_files_once_committed, deleted_on_failure
from django_agent_sessions.store.chatkit import Missing
from django_agent_sessions.store.hops import hop


class Stored(NamedTuple):
    """An uploaded file: where its bytes are, and its ChatKit JSON."""

    storage_name: str
    payload: str


def upload_limit() -> int:
    """The most bytes a file may have: the chat's own limit (``MAX_UPLOAD_BYTES``)."""
    return int(storage.setting("MAX_UPLOAD_BYTES"))


def _using() -> str:
    return router.db_for_write(ChatKitAttachment)


@hop(write=True)
def save(owner_id: Any, attachment_id: str, payload: str, thread_id: str | None) -> None:
    """Create or update the attachment's metadata; with ``thread_id``, it belongs to
    that conversation from now on (when it is the owner's)."""
    using = _using()
    with transaction.atomic(using=using):
        row = ChatKitAttachment.objects.using(using).select_for_update()
        found = row.filter(attachment_id=attachment_id).first()
        if owner_id is None or (found is not None and found.owner_id != owner_id):
            raise Missing(attachment_id)
        session = AgentSession.objects.using(using).filter(session_id=thread_id, owner_id=owner_id)
        session_pk = session.values_list("pk", flat=True).first() if thread_id else None
        ChatKitAttachment.objects.using(using).update_or_create(
            attachment_id=attachment_id,
            defaults={"owner_id": owner_id, "payload": payload, "session_id": session_pk},
        )


@hop
def load(owner_id: Any, attachment_id: str) -> Stored:
    found = (
        ChatKitAttachment.objects.using(_using())
        .filter(attachment_id=attachment_id, owner_id=owner_id)
        .values_list("storage_name", "payload")
        .first()
    )
    if found is None or owner_id is None:
        raise Missing(attachment_id)
    return Stored(str(found[0]), str(found[1]))


@hop(write=True)
def delete(owner_id: Any, attachment_id: str) -> None:
    """Delete the attachment and, once that commits, its bytes (``attachment_deleted``);
    nothing when missing."""
    using = _using()
    with transaction.atomic(using=using):
        ChatKitAttachment.objects.using(using).filter(
            attachment_id=attachment_id, owner_id=owner_id
        ).delete()


def attachment_deleted(
    sender: type[ChatKitAttachment], instance: ChatKitAttachment, using: str, **kwargs: Any
) -> None:
    """``post_delete`` of ``ChatKitAttachment``: whatever deleted the row (``delete``, its
    thread's or its owner's cascade), its bytes go once that commits."""
    if instance.storage_name:
        delete_files_once_committed(using, [instance.storage_name])


@hop(write=True)
def upload(owner_id: Any, attachment_id: str, data: bytes) -> None:
    """Store the bytes of the owner's attachment (a second upload replaces the first)."""
    using = _using()
    with deleted_on_failure() as saved, transaction.atomic(using=using):
        rows = ChatKitAttachment.objects.using(using).select_for_update()
        found = rows.filter(attachment_id=attachment_id, owner_id=owner_id).first()
        if found is None or owner_id is None or len(data) > upload_limit():
            raise Missing(attachment_id)
        name = storage.name_for(f"chatkit/{owner_id}", hashlib.sha256(data).hexdigest())
        saved.append(storage.save(name, data))
        old = found.storage_name
        found.storage_name, found.size = saved[-1], len(data)
        found.save(using=using, update_fields=["storage_name", "size"])
        delete_files_once_committed(using, [old] if old and old != found.storage_name else [])


# What a browser may show of a file (as the app's own files: files.serving).
INLINE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


@hop
def read(storage_name: str) -> bytes:
    """The stored bytes (``FileNotFoundError`` when gone): at most ``upload_limit()``,
    read whole, so that an async view has no sync file to stream."""
    if not storage_name:
        raise FileNotFoundError(storage_name)
    with storage.storage().open(storage_name, "rb") as stored:
        data: bytes = stored.read()
    return data
