"""A conversation that ChatKit did not start, as ChatKit's items: its SDK messages.

A conversation of the packaged chat (or of any ``DjangoSession``) is a ChatKit thread
too. While ChatKit has written nothing to it, its items are read from its user and
assistant messages (``sdk_rows``). Before ChatKit's first item there, each of those
messages gets a ``ChatKitItem`` row of kind ``SDK`` that names it (``adopt``, in the
write's transaction), so that from then on ChatKit's rows hold the whole thread in one
order: the messages from before, then ChatKit's own. Such a row's ChatKit form is made
from its SDK item whenever it is read (the adapter's ``mirror.chatkit_item``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from django.db.models import QuerySet

from django_agent_sessions.models import ChatKitItem, SessionItem
from django_agent_sessions.store.chatkit import Missing

# The kind of a ChatKitItem row that stands for an SDK message, and its id's prefix.
SDK = "sdk"
PREFIX = "sdk_"
MESSAGE_ROLES = ("user", "assistant")


class Row(NamedTuple):
    """One item of a thread: ChatKit's JSON, or (kind ``SDK``) its SDK item's JSON."""

    item_id: str
    kind: str
    payload: str
    sdk: str
    created_at: datetime


class Rows(NamedTuple):
    rows: list[Row]
    has_more: bool


def sdk_messages(pk: int, using: str) -> QuerySet[SessionItem]:
    """The conversation's user and assistant messages, the ones ChatKit can show."""
    messages: QuerySet[SessionItem] = SessionItem.objects.using(using).filter(
        session_id=pk, item_type="message", role__in=MESSAGE_ROLES
    )
    return messages


def adopt(pk: int, using: str) -> None:
    """Give the conversation's messages ChatKit rows, unless ChatKit has rows there
    already (the caller holds the conversation's lock)."""
    if ChatKitItem.objects.using(using).filter(session_id=pk).exists():
        return
    messages = sdk_messages(pk, using).order_by("pk").values_list("pk", flat=True)
    ChatKitItem.objects.using(using).bulk_create(
        ChatKitItem(
            session_id=pk, item_id=f"{PREFIX}{spk}", kind=SDK, payload="", session_item_id=spk
        )
        for spk in messages
    )


def rows(pk: int, using: str, after: str | None, limit: int, order: str) -> Rows:
    """A page of the thread: ChatKit's rows, or while it has none, its messages."""
    chatkit = ChatKitItem.objects.using(using).filter(session_id=pk)
    if chatkit.exists():
        if after:
            mark = chatkit.filter(item_id=after).values_list("pk", flat=True).first()
            chatkit = _after(chatkit, mark, after, order)
        fields = ("item_id", "kind", "payload", "session_item_id", "created_at")
        found = list(_ordered(chatkit, order).values_list(*fields)[: max(limit, 0) + 1])
        return Rows(_with_sdk(found[:limit], using), len(found) > limit)
    messages = sdk_messages(pk, using)
    if after:
        mark = int(after[len(PREFIX) :]) if _is_sdk_id(after) else None
        messages = _after(messages, mark, after, order)
    found = list(
        _ordered(messages, order).values_list("pk", "payload", "created_at")[: max(limit, 0) + 1]
    )
    page = [Row(f"{PREFIX}{spk}", SDK, "", str(sdk), made) for spk, sdk, made in found[:limit]]
    return Rows(page, len(found) > limit)


def one(pk: int, using: str, item_id: str) -> Row | None:
    """The thread's item ``item_id``, or None."""
    fields = ("item_id", "kind", "payload", "session_item_id", "created_at")
    chatkit = ChatKitItem.objects.using(using).filter(session_id=pk)
    found = chatkit.filter(item_id=item_id).values_list(*fields).first()
    if found is not None:
        return next(iter(_with_sdk([found], using)), None)
    if chatkit.exists() or not _is_sdk_id(item_id):
        return None
    message = sdk_messages(pk, using).filter(pk=int(item_id[len(PREFIX) :]))
    row = message.values_list("payload", "created_at").first()
    return None if row is None else Row(item_id, SDK, "", str(row[0]), row[1])


def _is_sdk_id(item_id: str) -> bool:
    return item_id.startswith(PREFIX) and item_id[len(PREFIX) :].isdigit()


def _after(rows: QuerySet[Any], mark: int | None, after: str, order: str) -> QuerySet[Any]:
    if mark is None:
        raise Missing(after)
    later: QuerySet[Any] = rows.filter(pk__gt=mark) if order == "asc" else rows.filter(pk__lt=mark)
    return later


def _ordered(rows: QuerySet[Any], order: str) -> QuerySet[Any]:
    ordered: QuerySet[Any] = rows.order_by("pk" if order == "asc" else "-pk")
    return ordered


def _with_sdk(found: list[Any], using: str) -> list[Row]:
    """The rows, an SDK row with its SDK item's JSON (one query); an SDK row whose
    message is gone (taken back in the packaged chat) is left out."""
    wanted = [row[3] for row in found if row[1] == SDK]
    sdk = dict(SessionItem.objects.using(using).filter(pk__in=wanted).values_list("pk", "payload"))
    return [
        Row(item_id, kind, payload, str(sdk.get(spk, "")), made)
        for item_id, kind, payload, spk, made in found
        if kind != SDK or spk in sdk
    ]
