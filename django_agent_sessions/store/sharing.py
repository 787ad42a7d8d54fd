"""Share links (``sharing.models.SharedLink``): made, listed and revoked by the owner of a
conversation; read, with its files, by whoever has the token.

Every read looks the token up in the database (no cache anywhere): a revoke is one
``UPDATE`` and the next request on any worker finds the link revoked. A link shows only
what its page shows: people's messages and the assistant's replies up to its snapshot,
tool calls and their outputs only when the owner chose so; never reasoning, system or
developer messages. Its files are those of the items it shows, and nothing else: the
scope is the same query (``_shown``), for the page, a file and a copy alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import router, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from django_agent_sessions import item_views
from django_agent_sessions.files import inline
from django_agent_sessions.files.models import Attachment
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.sharing.models import SharedLink
from django_agent_sessions.store import branches
from django_agent_sessions.store.items import Scope
from django_agent_sessions.store.owned import NotFound

#: A link's page shows at most this many items (the oldest first).
MAX_SHOWN = 2000
_PEOPLE = ("user", "assistant")
_HIDDEN_TYPES = ("reasoning",)


class NotShareable(ValueError):
    """A temporary chat (it must leave nothing behind) or one with nothing in it yet."""


@dataclass(frozen=True)
class Shared:
    """A live link, as its page needs it."""

    token: str
    conversation_pk: int
    session_id: str
    title: str
    owner_id: Any
    up_to_item_id: int | None
    show_tools: bool
    created_at: datetime


def create_link(
    owner_id: Any,
    session_id: str,
    *,
    follow: bool = False,
    show_tools: bool = False,
    expires_at: datetime | None = None,
) -> SharedLink:
    """A new link of the owner's conversation: a snapshot up to its newest item, or
    (``follow``) one that shows it as it is. Raises ``NotFound`` (not the owner's),
    ``NotShareable``."""
    conversation = (
        AgentSession.objects.filter(session_id=session_id, owner_id=owner_id)
        .only("pk", "temporary")
        .first()
    )
    if owner_id is None or conversation is None:
        raise NotFound(session_id)
    newest = SessionItem.objects.filter(session=conversation).order_by("-id").values("id")[:1]
    newest_id = newest[0]["id"] if newest else None
    if conversation.temporary or newest_id is None:
        raise NotShareable(session_id)
    link: SharedLink = SharedLink.objects.create(
        session=conversation,
        created_by_id=owner_id,
        up_to_item_id=None if follow else newest_id,
        show_tools=show_tools,
        expires_at=expires_at,
    )
    return link


def links_of(owner_id: Any) -> list[dict[str, Any]]:
    """The owner's links, newest first, with their conversation's id and title."""
    rows = SharedLink.objects.filter(created_by_id=owner_id).select_related("session")
    return [
        {
            "token": link.token,
            "session_id": link.session.session_id,
            "title": link.session.title,
            "follows": link.follows,
            "show_tools": link.show_tools,
            "created_at": link.created_at,
            "expires_at": link.expires_at,
            "revoked_at": link.revoked_at,
            "live": link.is_live(),
        }
        for link in rows[:500]
    ]


def revoke(owner_id: Any, token: str) -> bool:
    """Revoke the owner's link; False when it is not theirs (or does not exist). Revoking
    twice keeps the first time."""
    if owner_id is None:
        return False
    mine = SharedLink.objects.filter(token=token, created_by_id=owner_id)
    mine.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
    return bool(mine.exists())


def revoke_all(links: QuerySet[SharedLink]) -> int:
    """The admin's action: revoke these links (those not revoked yet); how many."""
    return int(links.filter(revoked_at__isnull=True).update(revoked_at=timezone.now()))


def _live(token: str) -> QuerySet[SharedLink]:
    now = timezone.now()
    live: QuerySet[SharedLink] = SharedLink.objects.filter(token=token, revoked_at__isnull=True)
    unexpired: QuerySet[SharedLink] = live.filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=now)
    )
    return unexpired


def find(token: str) -> Shared | None:
    """The live link with this token, or None (none, revoked, expired)."""
    if not token or len(token) > 64:
        return None
    link = _live(token).select_related("session").first()
    if link is None:
        return None
    return Shared(
        token=link.token,
        conversation_pk=link.session_id,
        session_id=link.session.session_id,
        title=link.session.title,
        owner_id=link.session.owner_id,
        up_to_item_id=link.up_to_item_id,
        show_tools=link.show_tools,
        created_at=link.created_at,
    )


def _shown(shared: Shared) -> QuerySet[SessionItem]:
    rows: QuerySet[SessionItem] = SessionItem.objects.filter(session_id=shared.conversation_pk)
    if shared.up_to_item_id is not None:
        rows = rows.filter(id__lte=shared.up_to_item_id)
    if not shared.show_tools:
        people: QuerySet[SessionItem] = rows.filter(item_type="message", role__in=_PEOPLE)
        return people
    shown: QuerySet[SessionItem] = rows.exclude(item_type__in=_HIDDEN_TYPES).exclude(
        Q(item_type="message") & ~Q(role__in=_PEOPLE)
    )
    return shown


def shown_rows(shared: Shared) -> list[tuple[int, datetime, str]]:
    """The link's items as ``(id, created_at, payload)``, oldest first."""
    rows = _shown(shared).order_by("id").values_list("id", "created_at", "payload")
    return list(rows[:MAX_SHOWN])


def shared_file(token: str, attachment_id: int) -> Attachment | None:
    """The attachment if the live link ``token`` shows it (one of its shown items names
    it), else None: never another conversation's file, nor one of a later or hidden item."""
    shared = find(token)
    if shared is None:
        return None
    names: set[str] = set()
    payloads = _shown(shared).filter(payload__startswith=inline.MARK).values_list("payload")
    for (payload,) in payloads[:MAX_SHOWN].iterator():
        names.update(str(reference["name"]) for reference in inline.references(payload))
    found: Attachment | None = (
        Attachment.objects.filter(
            pk=attachment_id, session_id=shared.conversation_pk, storage_name__in=names
        )
        .only("storage_name", "content_type", "name", "size")
        .first()
    )
    return found


def _kept(shared: Shared) -> Any:
    """What a copy keeps of an item: exactly what the link's page shows."""

    def keep(item: Any) -> bool:
        view = item_views.describe(item)
        if view.kind == "message":
            return view.role in _PEOPLE
        return shared.show_tools and view.kind in ("tool_call", "tool_output")

    return keep


def continue_as_copy(token: str, viewer_id: Any, new_session_id: str) -> bool:
    """ "Continue as a copy": a new conversation of the viewer's holding what the link
    shows (up to its snapshot; a following link up to the newest item now). False when
    the link is not live. The link's row is locked meanwhile, so a revoke waits for the
    copy, and a copy never starts after a revoke."""
    using = router.db_for_write(SharedLink)
    with transaction.atomic(using=using):
        locked = _live(token).select_for_update().values_list("id", flat=True).first()
        shared = find(token) if locked is not None else None
        if shared is None:
            return False
        up_to = shared.up_to_item_id
        if up_to is None:
            newest = SessionItem.objects.filter(session_id=shared.conversation_pk)
            up_to = newest.order_by("-id").values_list("id", flat=True).first() or 0
        source = Scope(shared.session_id, None, using)
        branches.fork(source, new_session_id, up_to, copy_for=(viewer_id, _kept(shared)))
    return True
