"""Whole conversations: opening one for a socket, reading its history, locking and
emptying many at once (retention, the admin).

Every transaction that changes conversations writes their rows first, as
``store.items`` does, so a concurrent ``DjangoSession`` write waits instead of
interleaving. Items are always deleted with one ``DELETE ... WHERE session_id IN (...)``:
Django's deletion collector would load every item (with its payload) first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Q
from django.db.models.functions import Length
from django.utils import timezone

from django_agent_sessions import item_views
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem
from django_agent_sessions.store import attachments, statements, uploads
from django_agent_sessions.store.hops import hop


@dataclass(frozen=True)
class OpenedConversation:
    """A conversation a socket may use: its primary key and stored id."""

    pk: int
    session_id: str
    created: bool = False  # by the call that opened it
    temporary: bool = False  # a temporary chat (store.temporary)


@dataclass(frozen=True)
class StoredItem:
    id: int
    created_at: datetime
    item: Any
    files: tuple[dict[str, Any], ...] = ()  # its stored files, as the chat shows them


@dataclass(frozen=True)
class RunNote:
    """A run as history shows it: which items are its own, and how it ended."""

    run_id: str
    status: str
    history_item_id: int  # its items come after this one ...
    last_item_id: int  # ... up to this one (0 while it runs)
    partial_text: str
    error_code: str
    client_id: str


@dataclass(frozen=True)
class History:
    entries: list[StoredItem]
    runs: list[RunNote]
    active_run_id: str | None
    has_more: bool = False  # older items exist (page with before_id)

    @property
    def items(self) -> list[Any]:
        return [entry.item for entry in self.entries]


def open_conversation(session_id: str, *, owner_id: Any) -> OpenedConversation:
    """The conversation ``session_id``, created for ``owner_id`` if it does not exist.

    Raises ``SessionOwnershipError`` when it belongs to someone else: to another user,
    or, for a signed-in user, to nobody. ``owner_id`` None (anonymous sockets, whose
    ids the caller namespaces) may only use conversations without an owner.
    """
    conversation, created = AgentSession.objects.get_or_create(
        session_id=session_id, defaults={"owner_id": owner_id}
    )
    if conversation.owner_id != owner_id:
        raise SessionOwnershipError("This conversation belongs to another user.")
    return OpenedConversation(conversation.pk, session_id, created, conversation.temporary)


def find_conversation(session_id: str, *, owner_id: Any) -> OpenedConversation | None:
    """The conversation ``session_id`` if it exists (None if not); writes nothing.

    Raises ``SessionOwnershipError`` like :func:`open_conversation`. A socket may connect
    to a new id; the conversation is created by its first message, not by connecting.
    """
    fields = ("pk", "owner_id", "temporary")
    conversation = AgentSession.objects.filter(session_id=session_id).only(*fields).first()
    if conversation is None:
        return None
    if conversation.owner_id != owner_id:
        raise SessionOwnershipError("This conversation belongs to another user.")
    return OpenedConversation(conversation.pk, session_id, temporary=conversation.temporary)


def read_history(
    conversation_pk: int,
    *,
    up_to_item_id: int | None,
    limit: int | None,
    max_chars: int | None = None,
    before_id: int | None = None,
) -> History:
    """The newest stored items (oldest first), the runs they belong to, the running run.

    At most ``limit`` items and ``max_chars`` characters of stored JSON (the newest item
    is always included, however large: it is at most ``MAX_ITEM_BYTES``), so one history
    frame is bounded whatever the conversation holds. ``before_id`` pages back: only
    items older than that id. ``up_to_item_id`` leaves out items saved by a run whose
    progress the caller already has from the run itself (see ``runs.py``).

    Items and runs are separate queries: a run that started or ended between them would
    show its end without its reply (and the tab drop the end as shown). So the newest run
    is read before and after, and the read made again if it changed (runs outlast reads).
    """
    for _ in range(3):  # a run starting or ending at each try: a conversation flooded
        before = _newest_run(conversation_pk)
        history = _read(conversation_pk, up_to_item_id, limit, max_chars, before_id)
        if _newest_run(conversation_pk) == before:
            break
    live = before[0] if before is not None and before[2] else None
    return dataclasses.replace(history, active_run_id=live)


def _read(
    conversation_pk: int,
    up_to_item_id: int | None,
    limit: int | None,
    max_chars: int | None,
    before_id: int | None,
) -> History:
    rows = SessionItem.objects.filter(session_id=conversation_pk)
    if up_to_item_id is not None:
        rows = rows.filter(id__lte=up_to_item_id)
    if before_id is not None:
        rows = rows.filter(id__lt=before_id)
    sizes = rows.order_by("-id").annotate(size=Length("payload")).values_list("id", "size")
    if limit is not None:
        sizes = sizes[: limit + 1]
    chosen: list[int] = []
    total, has_more = 0, False
    for index, (item_id, size) in enumerate(sizes.iterator()):
        if (limit is not None and index >= limit) or (
            max_chars is not None and chosen and total + size > max_chars
        ):
            has_more = True
            break
        chosen.append(item_id)
        total += size
    stored = (
        SessionItem.objects.filter(id__in=chosen)
        .order_by("id")
        .values_list("id", "created_at", "payload")
    )
    # For display: a stored file is named, not read (``uploads.shown_rows``).
    shown = uploads.shown_rows(conversation_pk, list(stored))
    entries = [StoredItem(*row) for row in shown]
    if has_more:
        entries = _without_orphan_outputs(entries)
    return History(
        entries=entries,
        runs=_runs_of(
            conversation_pk,
            entries,
            has_more=has_more,
            page=up_to_item_id is not None or before_id is not None,
        ),
        active_run_id=None,  # read_history's
        has_more=has_more,
    )


_MAX_RUN_NOTES = 200


def _runs_of(
    session_pk: int, entries: list[StoredItem], *, has_more: bool, page: bool
) -> list[RunNote]:
    """The runs whose items (or whose unfinished reply) fall within ``entries``.

    A run's items are those after its ``history_item_id`` up to its ``last_item_id``.
    """
    runs = AgentRun.objects.filter(session_id=session_pk)
    if has_more and entries:  # runs that ended before the oldest item shown: older pages
        # (A run in progress or waiting for decisions has no last item yet.)
        unfinished = Q(status__in=(AgentRun.Status.RUNNING, AgentRun.Status.WAITING))
        runs = runs.filter(unfinished | Q(last_item_id__gte=entries[0].id))
    if page:  # an older page, or the part of history before the running run
        runs = runs.exclude(status=AgentRun.Status.RUNNING)
        last = entries[-1].id if entries else 0
        runs = runs.filter(history_item_id__lte=last)
    rows = runs.order_by("-started_at").values_list(
        "run_id",
        "status",
        "history_item_id",
        "last_item_id",
        "partial_text",
        "error_code",
        "client_id",
    )[:_MAX_RUN_NOTES]
    return [
        RunNote(str(run_id), status, after, last, partial, code, client_id)
        for run_id, status, after, last, partial, code, client_id in list(rows)[::-1]
    ]


def _newest_run(session_pk: int) -> tuple[str, str, bool] | None:
    """The conversation's newest run, its status and whether it is live (running, its
    lease renewed in time): the only run that can be in progress (one at a time), and
    what changes when a run starts or ends."""
    row = (
        AgentRun.objects.filter(session_id=session_pk)
        .order_by("-started_at", "-id")
        .values_list("run_id", "status", "lease_expires_at")
        .first()
    )
    if row is None:
        return None
    run_id, status, lease_expires_at = row
    live = status == AgentRun.Status.RUNNING and lease_expires_at >= timezone.now()
    return str(run_id), status, live


def _without_orphan_outputs(entries: list[StoredItem]) -> list[StoredItem]:
    kept = item_views.drop_orphan_outputs([entry.item for entry in entries])
    if len(kept) == len(entries):
        return entries
    kept_ids = {id(item) for item in kept}
    return [entry for entry in entries if id(entry.item) in kept_ids]


def lock_conversations(
    connection: BaseDatabaseWrapper, conversation_pks: Sequence[int], *, before: datetime | None
) -> list[int]:
    """Write-lock these conversation rows first; with ``before``, only still-stale ones.

    A no-op UPDATE is the first statement: it takes the row locks on PostgreSQL and the
    write lock on SQLite even in DEFERRED transaction mode. Returns the locked pks.
    """
    if not conversation_pks:
        return []
    sql = statements.lock_many(connection, len(conversation_pks), stale_only=before is not None)
    params: list[Any] = list(conversation_pks)
    if before is not None:
        params.append(connection.ops.adapt_datetimefield_value(before))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def delete_items_of(connection: BaseDatabaseWrapper, conversation_pks: Sequence[int]) -> int:
    """One DELETE for the items of these conversations; never loads them. Their
    attachments go too (``attachments.remove_of``: the caller's transaction must be
    Django's, ``transaction.atomic``, for the files to go once it commits)."""
    if not conversation_pks:
        return 0
    attachments.remove_of(connection.alias, conversation_pks)
    with connection.cursor() as cursor:
        cursor.execute(
            statements.delete_items(connection, len(conversation_pks)), list(conversation_pks)
        )
        return int(cursor.rowcount)


def estimated_rows(connection: BaseDatabaseWrapper, model: type[Any]) -> int | None:
    """The planner's row estimate for ``model``'s table (PostgreSQL), else None.

    A COUNT(*) over a large table reads all of it; an unfiltered admin list only needs
    to know roughly how many pages there are.
    """
    sql = statements.row_estimate(connection)
    if sql is None:
        return None
    with connection.cursor() as cursor:
        cursor.execute(sql, [model._meta.db_table])
        row = cursor.fetchone()
    return None if row is None else int(row[0])


# The async faces, for the websocket wing: one hop each, stale connections replaced.
aopen_conversation = hop(open_conversation)
afind_conversation = hop(find_conversation)
aread_history = hop(read_history)


def conversation_of(run_pk: int) -> int | None:
    """The conversation of a run; None once the run's record is gone: its conversation
    was deleted while it ran (retention, the admin), and its end is then a no-op, as
    for a run taken over."""
    found: int | None = (
        AgentRun.objects.filter(pk=run_pk).values_list("session_id", flat=True).first()
    )
    return found
