"""Attachments written with the items that hold them, in the items' transaction.

A batch whose items carry inline files (``files.inline``) is appended in the general
transaction (``store.items.append_items``): after the conversation row is locked, each
file is looked up by its SHA-256 among the conversation's attachments, and stored (bytes
to storage, then its row) only if it is new; the items' payloads then name the stored
files. Writing under the lock means a concurrent writer of the same file waits and
finds the row, and a transaction that fails can delete exactly the files it stored:
nobody else can have referenced them (``deleted_on_failure``).

Removed rows take their files once their transaction commits, by one path
(``delete_files_once_committed``): the statement that deletes a conversation's rows
(``remove_of``: clearing, deleting, pruning, compaction) gives it the names it deleted,
and every delete through the ORM (a conversation's ``delete()``, its owner's, a
queryset's, the orphan command's) gives it each row's name from ``post_delete``
(``attachment_deleted``, connected by the app config). Neither sees the other's rows, so
a file is deleted once.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from django.db import connections, transaction

from django_agent_sessions.files import inline, storage
from django_agent_sessions.files.inline import InlineFile
from django_agent_sessions.files.models import Attachment
from django_agent_sessions.serialization import EncodedItem
from django_agent_sessions.store import statements

FilesByIndex = Mapping[int, list[InlineFile]]  # a batch's files, by the item's position


@contextlib.contextmanager
def deleted_on_failure() -> Iterator[list[str]]:
    """A list to record the storage names written in a transaction; if the transaction
    fails, the files are deleted (their rows were rolled back with it)."""
    saved: list[str] = []
    try:
        yield saved
    except BaseException:
        storage.delete(saved)
        raise


def remove_of(using: str, conversation_pks: Sequence[int]) -> None:
    """Delete the attachments of these conversations (in the caller's transaction, one
    statement that returns their names), and their files once it commits: a rollback
    keeps both."""
    connection = connections[using]
    if connection.features.can_return_columns_from_insert:  # RETURNING (SQLite 3.35+)
        with connection.cursor() as cursor:
            sql = statements.delete_attachments(connection, len(conversation_pks))
            cursor.execute(sql, list(conversation_pks))
            names = [str(row[0]) for row in cursor.fetchall()]
        delete_files_once_committed(using, names)
    else:  # an older SQLite: the ORM's delete, whose post_delete takes each file
        Attachment.objects.using(using).filter(session_id__in=conversation_pks).delete()


def delete_files_once_committed(using: str, names: Sequence[str]) -> None:
    """Delete these stored files once the transaction on ``using`` commits (at once
    outside one): their rows were deleted in it. A rollback brings the rows back and
    keeps the files; a savepoint rolled back drops what was registered in it."""
    if names:
        transaction.on_commit(functools.partial(storage.delete, list(names)), using=using)


def attachment_deleted(
    sender: type[Attachment], instance: Attachment, using: str, **kwargs: Any
) -> None:
    """``post_delete`` of ``Attachment``: a row the ORM deleted (its conversation's
    cascade, its owner's, a queryset's ``delete()``) takes its file once committed."""
    delete_files_once_committed(using, [instance.storage_name])


def owned_file(session_id: str, attachment_id: int, owner_id: Any) -> Attachment | None:
    """The attachment of the owner's conversation, or None (missing, or someone else's)."""
    found: Attachment | None = (
        Attachment.objects.filter(
            pk=attachment_id, session__session_id=session_id, session__owner_id=owner_id
        )
        .only("storage_name", "content_type", "name", "size")
        .first()
    )
    return found


def with_stored_files(
    using: str,
    session: tuple[int, str, object],
    encoded: list[EncodedItem],
    files: FilesByIndex,
    saved: list[str],
) -> list[EncodedItem]:
    """``encoded`` with each item that had inline files referencing them in storage.

    ``session``: the locked conversation's primary key, its id and its owner's key.
    """
    batch = list(encoded)
    for index, item_files in files.items():
        names = [_stored(using, session, inline_file, saved) for inline_file in item_files]
        text = inline.payload(batch[index].payload, item_files, names)
        batch[index] = batch[index]._replace(payload=text)
    return batch


def _stored(
    using: str, session: tuple[int, str, object], inline_file: InlineFile, saved: list[str]
) -> str:
    session_pk, session_id, owner_id = session
    attachments = Attachment.objects.using(using)
    known = (
        attachments.filter(session_id=session_pk, sha256=inline_file.sha256)
        .values_list("storage_name", flat=True)
        .first()
    )
    if known is not None:
        return str(known)
    name = storage.save(storage.name_for(session_id, inline_file.sha256), inline_file.data)
    saved.append(name)
    attachments.create(
        session_id=session_pk,
        owner_id=owner_id,
        name=inline_file.filename[:255],
        content_type=inline_file.content_type,
        size=len(inline_file.data),
        sha256=inline_file.sha256,
        storage_name=name,
    )
    return name
