"""Branches: a new conversation holding a copy of another's history up to one item.

``fork`` reads the source's items up to ``up_to_item_id`` whole (files included, as
``get_items`` gives them), leaves out tool calls whose output is not in the copy (a cut
after a call, a call waiting for approval) and the reasoning that led only to them, and
writes them to the new conversation in one transaction: its row first (same owner,
titled after the source, linked to it), then the items, each file stored again for the
new conversation (a branch's files are its own: deleting either conversation never
takes the other's). Item ids only grow, so the copy
is the same whatever is written to the source meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, router, transaction
from django.utils.translation import gettext as _

from django_agent_sessions import item_views, serialization
from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.files import inline
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.store import attachments
from django_agent_sessions.store import items as stored
from django_agent_sessions.store.items import Scope
from django_agent_sessions.store.owned import NotFound


class BranchExists(ValueError):
    """The new conversation's id is taken."""


#: A copy for someone else (a share link's "continue as a copy"): its owner, and which
#: items it keeps (what the link showed them).
CopyFor = tuple[Any, Callable[[Any], bool]]


def fork(
    source: Scope, new_session_id: str, up_to_item_id: int | None, copy_for: CopyFor | None = None
) -> int:
    """Copy ``source``'s items with ids up to ``up_to_item_id`` (all: None) into a new
    conversation ``new_session_id``; the number of items copied. Raises
    ``SessionOwnershipError`` (not the owner's), ``LookupError`` (no such source),
    ``BranchExists``. ``copy_for``: the copy is that person's, of the items kept, and
    not linked to its source (which is not theirs to open)."""
    conversation = _source(source)
    items = _items_of(conversation.pk, up_to_item_id, source.using)
    if copy_for is not None:
        items = [item for item in items if copy_for[1](item)]
    copied = item_views.drop_unanswered_calls(items)
    # Every file as a file (as the chat stores a message's files), so that a branch shows
    # the files its original showed.
    batch, files = inline.split_batch(copied, 0)
    encoded = serialization.encode_items(
        batch, max_bytes=app_settings.MAX_ITEM_BYTES, max_depth=app_settings.MAX_ITEM_DEPTH
    )
    owner_id = conversation.owner_id if copy_for is None else copy_for[0]
    scope = Scope(new_session_id, owner_id, source.using)
    title = _("%(title)s (copy)") if copy_for else _("%(title)s (branch)")
    try:
        with transaction.atomic(using=source.using):
            AgentSession.objects.using(source.using).create(
                session_id=new_session_id,
                owner_id=owner_id,
                title=(title % {"title": _title_of(conversation)})[:255],
                branched_from=None if copy_for else conversation,
                branched_at_item_id=None if copy_for else up_to_item_id,
                # A temporary chat's branch leaves nothing behind either.
                temporary=conversation.temporary,
            )
            if encoded:
                with attachments.deleted_on_failure() as saved:
                    stored._append_items(scope, encoded, "", shortcut=False, files=(files, saved))
    except IntegrityError:
        if AgentSession.objects.using(source.using).filter(session_id=new_session_id).exists():
            raise BranchExists(f"A conversation {new_session_id!r} exists already.") from None
        raise
    return len(encoded)


def _source(scope: Scope) -> AgentSession:
    found: AgentSession | None = (
        AgentSession.objects.using(scope.using)
        .filter(session_id=scope.session_id)
        .only("pk", "owner_id", "title", "session_id", "temporary")
        .first()
    )
    if found is None:
        raise LookupError(f"No conversation {scope.session_id!r}.")
    if scope.owner_id is not None and found.owner_id != scope.owner_id:
        raise SessionOwnershipError("This conversation belongs to another user.")
    return found


def _items_of(conversation_pk: int, up_to_item_id: int | None, using: str) -> list[Any]:
    rows = SessionItem.objects.using(using).filter(session_id=conversation_pk)
    if up_to_item_id is not None:
        rows = rows.filter(id__lte=up_to_item_id)
    payloads = rows.order_by("id").values_list("payload", flat=True)
    return serialization.decode_payloads(payloads.iterator())


def _title_of(conversation: AgentSession) -> str:
    return conversation.title or conversation.session_id


def branch_before(owner_id: Any, session_id: str, new_session_id: str, item_id: int) -> str:
    """The chat's "Branch from here" on a user message: a branch holding what came before
    the message ``item_id``; the message's text (the page offers it to edit). Raises
    ``owned.NotFound`` for a conversation that is not the owner's, ``LookupError`` when
    that item is not one of its user messages."""
    source = Scope(session_id, owner_id, router.db_for_write(AgentSession))
    owned = AgentSession.objects.using(source.using).filter(session_id=session_id)
    if owner_id is None or not owned.filter(owner_id=owner_id).exists():
        raise NotFound(session_id)
    row = (
        SessionItem.objects.using(source.using)
        .filter(pk=item_id, session__session_id=session_id, role="user")
        .values_list("payload", flat=True)
        .first()
    )
    decoded = serialization.decode_payloads([row]) if row is not None else []
    if not decoded or not item_views.is_user_message(decoded[0]):
        raise LookupError(f"Item {item_id!r} is not a message of the user here.")
    fork(source, new_session_id, item_id - 1)
    return item_views.typed_text(decoded[0])
