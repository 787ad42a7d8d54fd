"""Attachments no item refers to any more, and stored files no attachment names.

A popped item, a rewound turn or a compaction leaves its files (another item may hold the
same file, and the SDK adds a popped item back when it rewinds); ``agent_sessions_files``
finds and removes what is left:

- an attachment row whose file no item of its conversation references (older than the
  grace period: a file uploaded to the chat waits for its message): removed with its
  file, each conversation under its row lock (as every write to it), so that a
  concurrent ``add_items`` that is about to reference the file waits, then stores it again;
- a file under the attachments' directory that no row names, older than a grace period
  (a file of an ``add_items`` whose transaction has not committed yet has no row yet).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

from django.db import connections, router, transaction
from django.utils import timezone

from django_agent_sessions.files import inline, storage
from django_agent_sessions.files.models import Attachment
from django_agent_sessions.models import SessionItem
from django_agent_sessions.store.conversations import lock_conversations

_CHUNK = 500


def unreferenced(
    using: str | None = None, *, before: datetime | None = None
) -> dict[int, list[str]]:
    """The storage names of attachments no item references, by conversation pk; with
    ``before``, only those created before it (a file uploaded to the chat is referenced
    once its message is sent: until then it is not an orphan)."""
    using = using or router.db_for_write(Attachment)
    rows = Attachment.objects.using(using)
    if before is not None:
        rows = rows.filter(created_at__lt=before)
    pks = sorted(set(rows.values_list("session_id", flat=True)))
    found: dict[int, list[str]] = {}
    for start in range(0, len(pks), _CHUNK):  # bounded IN lists (SQLite's parameter cap)
        found.update(_unreferenced_in(using, pks[start : start + _CHUNK], before))
    return found


def remove_unreferenced(using: str | None = None, *, before: datetime | None = None) -> list[str]:
    """Remove the attachments no item references (rows, then files once committed),
    created before ``before`` when given; the storage names removed."""
    using = using or router.db_for_write(Attachment)
    removed: list[str] = []
    for session_pk in unreferenced(using, before=before):
        with transaction.atomic(using=using):
            if not lock_conversations(connections[using], [session_pk], before=None):
                continue
            names = _unreferenced_in(using, [session_pk], before).get(session_pk, [])
            rows = Attachment.objects.using(using).filter(session_id=session_pk)
            # Each file goes once this commits (``attachments.attachment_deleted``).
            rows.filter(storage_name__in=names).delete()
        removed += names
    return removed


def _unreferenced_in(
    using: str, session_pks: list[int], before: datetime | None
) -> dict[int, list[str]]:
    found: dict[int, list[str]] = {}
    rows = Attachment.objects.using(using).filter(session_id__in=session_pks)
    if before is not None:
        rows = rows.filter(created_at__lt=before)
    for session_pk, name in rows.values_list("session_id", "storage_name"):
        found.setdefault(session_pk, []).append(name)
    items = SessionItem.objects.using(using).filter(
        session_id__in=session_pks, payload__startswith=inline.MARK
    )
    for session_pk, payload in items.values_list("session_id", "payload").iterator():
        held = {reference["name"] for reference in inline.references(payload)}
        found[session_pk] = [name for name in found.get(session_pk, []) if name not in held]
    return {pk: names for pk, names in found.items() if names}


def stray_files(grace: timedelta, now: datetime | None = None) -> list[str]:
    """Files under the attachments' directory that no attachment names, older than
    ``grace`` (a newer one may belong to a transaction still in flight)."""
    named = set(Attachment.objects.values_list("storage_name", flat=True))
    cutoff = (now or timezone.now()) - grace
    target = storage.storage()
    return [
        name
        for name in _walk(storage.setting("DIRECTORY"))
        if name not in named and target.get_modified_time(name) < cutoff
    ]


def _walk(directory: str) -> Iterator[str]:
    target = storage.storage()
    try:
        folders, files = target.listdir(directory)
    except FileNotFoundError:
        return
    for name in files:
        yield f"{directory}/{name}"
    for folder in folders:
        yield from _walk(f"{directory}/{folder}")
