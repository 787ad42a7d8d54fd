"""A ChatKit thread is a conversation (``AgentSession``), with a ``ChatKitThread`` row
once ChatKit saved it.

Every conversation of the owner is a thread, the packaged chat's too (ChatKit's
metadata is then made from the conversation's id, title and creation time). Threads are
listed in the order their conversations were created (by primary key, never by a
timestamp a client sent). Saving a thread creates its conversation, owned by the saver;
an id that is someone else's conversation is ``Missing``.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, NamedTuple

from django.db import router, transaction

from django_agent_sessions.models import AgentSession, ChatKitThread
from django_agent_sessions.serialization import column_text
from django_agent_sessions.store.chatkit import Missing
from django_agent_sessions.store.hops import hop
from django_agent_sessions.store.removal import delete_conversations

# AgentSession.title's length.
TITLE_CHARS = 255


class Thread(NamedTuple):
    """A thread as stored: ChatKit's JSON (None for a conversation ChatKit never saved),
    the conversation's title when it was renamed elsewhere since (else None), and what
    ChatKit's metadata of a conversation without JSON is made of."""

    thread_id: str
    payload: str | None
    renamed: str | None
    title: str
    created_at: datetime


class Page(NamedTuple):
    threads: list[Thread]
    has_more: bool


def _using() -> str:
    return router.db_for_write(ChatKitThread)


def owned_pk(owner_id: Any, thread_id: str, using: str, *, lock: bool = False) -> int:
    """The primary key of ``owner_id``'s conversation ``thread_id``; ``lock`` takes its
    row lock (the lock every writer of the conversation queues on)."""
    found = AgentSession.objects.using(using).filter(session_id=thread_id)
    if lock:
        found = found.select_for_update()
    row = found.values_list("pk", "owner_id").first()
    if row is None or owner_id is None or row[1] != owner_id:
        raise Missing(thread_id)
    return int(row[0])


_FIELDS = ("session_id", "chatkit_thread__payload", "title", "created_at")


@hop
def load(owner_id: Any, thread_id: str) -> Thread:
    """The owner's thread ``thread_id``."""
    row = (
        AgentSession.objects.using(_using())
        .filter(session_id=thread_id, owner_id=owner_id)
        .values_list(*_FIELDS)
        .first()
    )
    if row is None or owner_id is None:
        raise Missing(thread_id)
    return _thread(*row)


def _thread(thread_id: str, payload: str | None, title: str, created_at: datetime) -> Thread:
    """The thread, with ``renamed`` when its title is not the payload's own any more (as
    the column keeps it: the payload's is exact, the column's is cut to its length)."""
    own = "" if payload is None else json.loads(payload).get("title") or ""
    renamed = None if payload is None or title == column_text(own, TITLE_CHARS) else title
    return Thread(thread_id, payload, renamed, title, created_at)


@hop(write=True)
def save(owner_id: Any, thread_id: str, payload: str, title: str) -> None:
    """Create or update the thread (and its conversation), in one transaction. The
    conversation's ``created_at`` is the database's time; ChatKit's own (a client's,
    perhaps naive) stays in the payload."""
    using = _using()
    with transaction.atomic(using=using):
        try:
            pk = owned_pk(owner_id, thread_id, using, lock=True)
        except Missing:
            pk = _created(owner_id, thread_id, using)
        conversation = AgentSession.objects.using(using).filter(pk=pk)
        conversation.exclude(title=column_text(title, TITLE_CHARS)).update(
            title=column_text(title, TITLE_CHARS)
        )
        ChatKitThread.objects.using(using).update_or_create(
            session_id=pk, defaults={"payload": payload}
        )


def _created(owner_id: Any, thread_id: str, using: str) -> int:
    if owner_id is None:
        raise Missing(thread_id)
    # ignore_conflicts: a concurrent saver may create it; owned_pk then decides.
    AgentSession.objects.using(using).bulk_create(
        [AgentSession(session_id=thread_id, owner_id=owner_id)],
        ignore_conflicts=True,
    )
    return owned_pk(owner_id, thread_id, using, lock=True)


@hop
def page(owner_id: Any, after: str | None, limit: int, order: str) -> Page:
    """``limit`` of the owner's threads after the thread ``after``, in creation order
    (``asc``) or newest first (``desc``); nobody (None) has none."""
    using = _using()
    if owner_id is None:  # (a filter on None would find the conversations of nobody)
        return Page([], False)
    threads = AgentSession.objects.using(using).filter(owner_id=owner_id)
    if after:
        mark = threads.filter(session_id=after).values_list("pk", flat=True).first()
        if mark is None:
            raise Missing(after)
        threads = threads.filter(pk__gt=mark) if order == "asc" else threads.filter(pk__lt=mark)
    ordered = threads.order_by("pk" if order == "asc" else "-pk")
    found = [_thread(*row) for row in ordered.values_list(*_FIELDS)[: max(limit, 0) + 1]]
    return Page(found[:limit], len(found) > limit)


@hop(write=True)
def delete(owner_id: Any, thread_id: str) -> None:
    """Delete the thread and its conversation (items, runs, files); a thread that is
    missing or not the owner's is left alone."""
    using = _using()
    try:
        pk = owned_pk(owner_id, thread_id, using)
    except Missing:
        return
    delete_conversations([pk], using=using)
