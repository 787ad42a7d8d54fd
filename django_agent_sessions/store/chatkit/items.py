"""A ChatKit thread's items, and the SDK items its messages are mirrored to.

Each item's ChatKit JSON is a ``ChatKitItem`` row, ordered by its primary key. An item
with an SDK form (a user or an assistant message: the adapter decides, ``sdk_item``) is
also appended to the conversation's ``SessionItem`` rows through ``store.items``, in the
same transaction, so that ``DjangoSession.get_items()``, the packaged chat and the admin
read it; changing or deleting the item changes or deletes that row with it. A
conversation ChatKit did not start shows its messages, adopted before ChatKit's first
item there (``adopted``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import router, transaction
from django.db.models import F

from django_agent_sessions import serialization
from django_agent_sessions.conf import app_settings
from django_agent_sessions.models import AgentSession, ChatKitItem, SessionItem
from django_agent_sessions.store import items as session_items
from django_agent_sessions.store.chatkit import Missing, adopted
from django_agent_sessions.store.chatkit.adopted import Row, Rows
from django_agent_sessions.store.chatkit.threads import owned_pk
from django_agent_sessions.store.hops import hop

SdkItem = Mapping[str, Any] | None


def _using() -> str:
    return router.db_for_write(ChatKitItem)


@hop(write=True)
def add(owner_id: Any, thread_id: str, item_id: str, kind: str, payload: str, sdk: SdkItem) -> None:
    """Append the item (and its SDK form) after the thread's last one."""
    using = _using()
    with transaction.atomic(using=using):
        pk = owned_pk(owner_id, thread_id, using, lock=True)
        adopted.adopt(pk, using)
        mirror = _mirrored(owner_id, thread_id, pk, sdk, using)
        ChatKitItem.objects.using(using).create(
            session_id=pk, item_id=item_id, kind=kind, payload=payload, session_item_id=mirror
        )


@hop(write=True)
def save(
    owner_id: Any, thread_id: str, item_id: str, kind: str, payload: str, sdk: SdkItem
) -> None:
    """Change the item in place (its position kept), or append it when it is new."""
    using = _using()
    with transaction.atomic(using=using):
        pk = owned_pk(owner_id, thread_id, using, lock=True)
        adopted.adopt(pk, using)
        row = ChatKitItem.objects.using(using).filter(session_id=pk, item_id=item_id).first()
        if row is None:
            mirror = _mirrored(owner_id, thread_id, pk, sdk, using)
            ChatKitItem.objects.using(using).create(
                session_id=pk, item_id=item_id, kind=kind, payload=payload, session_item_id=mirror
            )
            return
        if row.session_item_id is not None and sdk is not None:
            _rewrite(row.session_item_id, pk, sdk, using)
        elif row.session_item_id is None:
            row.session_item_id = _mirrored(owner_id, thread_id, pk, sdk, using)
        row.kind, row.payload = kind, payload
        row.save(using=using, update_fields=["kind", "payload", "session_item_id"])


@hop
def load(owner_id: Any, thread_id: str, item_id: str) -> Row:
    """The item: its ChatKit JSON, or an SDK message's (``adopted``)."""
    using = _using()
    found = adopted.one(owned_pk(owner_id, thread_id, using), using, item_id)
    if found is None:
        raise Missing(item_id)
    return found


@hop
def page(owner_id: Any, thread_id: str, after: str | None, limit: int, order: str) -> Rows:
    """``limit`` items after the item ``after`` in the thread's order (``asc``) or
    newest first (``desc``); none for a thread that is not the owner's."""
    using = _using()
    try:
        pk = owned_pk(owner_id, thread_id, using)
    except Missing:
        return Rows([], False)
    return adopted.rows(pk, using, after, limit, order)


@hop(write=True)
def delete(owner_id: Any, thread_id: str, item_id: str) -> None:
    """Delete the item and its SDK form; nothing when it is not there."""
    using = _using()
    with transaction.atomic(using=using):
        pk = owned_pk(owner_id, thread_id, using, lock=True)
        row = ChatKitItem.objects.using(using).filter(session_id=pk, item_id=item_id).first()
        if row is None:
            return
        if row.session_item_id is not None:
            gone, _ = (
                SessionItem.objects.using(using)
                .filter(session_id=pk, pk=row.session_item_id)
                .delete()
            )
            AgentSession.objects.using(using).filter(pk=pk).update(
                item_count=F("item_count") - gone
            )
        row.delete(using=using)


def _mirrored(owner_id: Any, thread_id: str, pk: int, sdk: SdkItem, using: str) -> int | None:
    """Append the SDK form as ``DjangoSession`` appends (validation, browsing columns,
    counters, search), joining this transaction; the new row's id."""
    if sdk is None:
        return None
    scope = session_items.Scope(thread_id, owner_id, using)
    session_items.append_items(scope, _encoded(sdk), "")
    newest = SessionItem.objects.using(using).filter(session_id=pk).order_by("-pk")
    found = newest.values_list("pk", flat=True).first()
    return None if found is None else int(found)


def _rewrite(session_item_pk: int, pk: int, sdk: Mapping[str, Any], using: str) -> None:
    encoded = _encoded(sdk)[0]
    SessionItem.objects.using(using).filter(session_id=pk, pk=session_item_pk).update(
        **encoded._asdict()
    )


def _encoded(sdk: Mapping[str, Any]) -> list[serialization.EncodedItem]:
    return serialization.encode_items(
        [dict(sdk)],
        max_bytes=app_settings.MAX_ITEM_BYTES,
        max_depth=app_settings.MAX_ITEM_DEPTH,
    )
