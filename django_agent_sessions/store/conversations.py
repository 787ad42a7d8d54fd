"""Whole conversations: opening one for a socket, reading its history, locking and
emptying many at once (retention, the admin).

Every transaction that changes conversations writes their rows first, as
``store.items`` does, so a concurrent ``DjangoSession`` write waits instead of
interleaving. Items are always deleted with one ``DELETE ... WHERE session_id IN (...)``:
Django's deletion collector would load every item (with its payload) first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone

from django_agent_sessions import items, serialization
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem
from django_agent_sessions.store import statements


@dataclass(frozen=True)
class OpenedConversation:
    """A conversation a socket may use: its primary key and stored id."""

    pk: int
    session_id: str


@dataclass(frozen=True)
class History:
    """What a socket shows on connect: the newest items and the running run, if any."""

    items: list[Any]
    active_run_id: str | None
    created_at: list[datetime] = field(default_factory=list)  # of each item, in order


def open_conversation(session_id: str, *, owner_id: Any) -> OpenedConversation:
    """The conversation ``session_id``, created for ``owner_id`` if it does not exist.

    Raises ``SessionOwnershipError`` when it belongs to someone else: to another user,
    or, for a signed-in user, to nobody. ``owner_id`` None (anonymous sockets, whose
    ids the caller namespaces) may only use conversations without an owner.
    """
    conversation, _ = AgentSession.objects.get_or_create(
        session_id=session_id, defaults={"owner_id": owner_id}
    )
    if conversation.owner_id != owner_id:
        raise SessionOwnershipError("This conversation belongs to another user.")
    return OpenedConversation(pk=conversation.pk, session_id=conversation.session_id)


def find_conversation(session_id: str, *, owner_id: Any) -> OpenedConversation | None:
    """The conversation ``session_id`` if it exists (None if not); writes nothing.

    Raises ``SessionOwnershipError`` like :func:`open_conversation`. A socket may connect
    to a new id; the conversation is created by its first message, not by connecting.
    """
    conversation = AgentSession.objects.filter(session_id=session_id).only("pk", "owner_id").first()
    if conversation is None:
        return None
    if conversation.owner_id != owner_id:
        raise SessionOwnershipError("This conversation belongs to another user.")
    return OpenedConversation(pk=conversation.pk, session_id=session_id)


def read_history(conversation_pk: int, *, up_to_item_id: int | None, limit: int | None) -> History:
    """The newest ``limit`` stored items (oldest first) and the running run, if any.

    ``up_to_item_id`` leaves out items saved by a run whose progress the caller already
    has from the run itself. A tool output whose call fell outside the window is left
    out: a person cannot read it without its call.
    """
    rows = SessionItem.objects.filter(session_id=conversation_pk)
    if up_to_item_id is not None:
        rows = rows.filter(id__lte=up_to_item_id)
    stored = rows.order_by("-id").values_list("payload", "created_at")
    if limit is not None:
        stored = stored[:limit]
    decoded: list[Any] = []
    times: dict[int, datetime] = {}  # by id() of each decoded item
    for payload, created_at in reversed(list(stored)):
        for item in serialization.decode_payloads([payload]):
            decoded.append(item)
            times[id(item)] = created_at
    if limit is not None:
        decoded = items.drop_orphan_outputs(decoded)
    active = (
        AgentRun.objects.filter(session_id=conversation_pk)
        .live(timezone.now())
        .values_list("run_id", flat=True)
        .first()
    )
    return History(
        items=decoded,
        active_run_id=None if active is None else str(active),
        created_at=[times[id(item)] for item in decoded],
    )


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
    """One DELETE for the items of these conversations; never loads them."""
    if not conversation_pks:
        return 0
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
