"""A user's own conversations, as the packaged chat page lists and changes them.

Every change locks the conversation row first (the lock order of ``store.runs``) and
checks, in the same transaction, that no run is live or waiting for approval: changing
the history under such a run would leave its turns without their start, or delete the
tool call it waits on. The row lock keeps a run from starting meanwhile.
"""

from __future__ import annotations

from typing import Any

from django.db import connections, router, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from django_agent_sessions import serialization
from django_agent_sessions.models import (
    AUTOMATIC_TITLE_CHARS,
    AgentRun,
    AgentSession,
    SessionItem,
    TitleSource,
)
from django_agent_sessions.store import items
from django_agent_sessions.store.conversations import delete_items_of
from django_agent_sessions.store.items import Scope


class NotFound(Exception):
    """No such conversation, or someone else's (the caller answers both the same)."""


class Busy(Exception):
    """The conversation has a live or waiting run."""


def latest_of(user: Any) -> str | None:
    """The id of the user's most recently active conversation (archived ones and
    temporary chats aside)."""
    rows = AgentSession.objects.filter(owner=user, archived_at__isnull=True, temporary=False)
    found: str | None = rows.order_by("-updated_at").values_list("session_id", flat=True).first()
    return found


def origin_of(session_id: str) -> tuple[str, str] | None:
    """The (session id, title) of the conversation this one was branched from, if any."""
    rows = AgentSession.objects.filter(session_id=session_id, branched_from__isnull=False)
    found: tuple[str, str] | None = rows.values_list(
        "branched_from__session_id", "branched_from__title"
    ).first()
    return found


def find(session_id: str) -> tuple[Any, str] | None:
    """The conversation's (owner id, title), or None if it does not exist."""
    rows = AgentSession.objects.filter(session_id=session_id).values_list("owner_id", "title")
    found: tuple[Any, str] | None = rows.first()
    return found


def rename(session_id: str, user: Any, title: str) -> None:
    """The person's title: from now on a model's title never replaces it (``titles``)."""
    rows = AgentSession.objects.filter(session_id=session_id, owner=user)
    updated = rows.update(title=title, title_source=TitleSource.PERSON)
    if not updated:
        raise NotFound(session_id)


def delete(session_id: str, user: Any) -> None:
    """Delete the conversation, its items and its run records."""
    using = router.db_for_write(AgentSession)
    with transaction.atomic(using=using):
        found = _lock_idle(session_id, user, using)
        # One DELETE for the items (never loaded), then the row and its run records.
        delete_items_of(connections[using], [found])
        AgentSession.objects.using(using).filter(pk=found).delete()


def clear(session_id: str, user: Any) -> None:
    """Delete the conversation's items (``items.clear``); its row (owner, title) stays."""
    using = router.db_for_write(AgentSession)
    with transaction.atomic(using=using):
        _lock_idle(session_id, user, using)
        items.clear(Scope(session_id, user.pk, using))


def take_back_turn(session_id: str, user: Any) -> list[Any] | None:
    """Take back the last turn (edit, regenerate): ``items.take_back_last_turn``.

    When that was the conversation's first message, an automatic title (the start of
    that message) goes with it, in the same transaction, so the next first message
    titles the conversation again. A title the user set stays.
    """
    using = router.db_for_write(AgentSession)
    with transaction.atomic(using=using):
        found = _lock_idle(session_id, user, using)
        taken = items.take_back_last_turn(Scope(session_id, user.pk, using))
        if taken:
            _forget_automatic_title(found, taken[0], using)
        return taken


def _forget_automatic_title(session_pk: int, taken_message: Any, using: str) -> None:
    """One UPDATE: the title goes if it is the taken message's automatic one and no user
    message is left (else the title came from an earlier, still stored message)."""
    automatic = serialization.preview(taken_message)[:AUTOMATIC_TITLE_CHARS]
    user_messages = SessionItem.objects.using(using).filter(
        session_id=OuterRef("pk"), item_type="message", role="user"
    )
    AgentSession.objects.using(using).filter(pk=session_pk, title=automatic).exclude(
        Exists(user_messages)
    ).update(title="")


def _lock_idle(session_id: str, user: Any, using: str) -> int:
    """Lock the user's conversation row; its primary key. Raises NotFound or Busy."""
    found = (
        AgentSession.objects.using(using)
        .select_for_update()
        .filter(session_id=session_id, owner=user)
        .values_list("pk", flat=True)
        .first()
    )
    if found is None:
        raise NotFound(session_id)
    # A "running" run whose lease expired belongs to a worker that died: not live.
    held = AgentRun.objects.using(using).holding(timezone.now())
    if held.filter(session_id=found).exists():
        raise Busy(session_id)
    return int(found)
