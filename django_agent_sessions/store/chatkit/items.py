"""A ChatKit thread's items, and the SDK items its messages are mirrored to.

Each item's ChatKit JSON is a ``ChatKitItem`` row, ordered by its primary key. An item
with an SDK form (a user or an assistant message: the adapter decides, ``sdk_item``) is
also appended to the conversation's ``SessionItem`` rows through ``store.items``, in the
same transaction, so that ``DjangoSession.get_items()``, the packaged chat and the admin
read it; changing or deleting the item changes or deletes that row with it.
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
from django_agent_sessions.store.chatkit import Missing
from django_agent_sessions.store.chatkit.threads import Page, owned_pk
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
def load(owner_id: Any, thread_id: str, item_id: str) -> str:
    """The item's ChatKit JSON."""
    found = (
        ChatKitItem.objects.using(_using())
        .filter(session__session_id=thread_id, session__owner_id=owner_id, item_id=item_id)
        .values_list("payload", flat=True)
        .first()
    )
    if found is None or owner_id is None:
        raise Missing(item_id)
    return str(found)


@hop
def page(owner_id: Any, thread_id: str, after: str | None, limit: int, order: str) -> Page:
    """``limit`` items after the item ``after`` in the thread's order (``asc``) or
    newest first (``desc``); none for a thread that is not the owner's."""
    using = _using()
    if owner_id is None:
        return Page([], False)
    rows = ChatKitItem.objects.using(using).filter(
        session__session_id=thread_id, session__owner_id=owner_id
    )
    if after:
        mark = rows.filter(item_id=after).values_list("pk", flat=True).first()
        if mark is None:
            raise Missing(after)
        rows = rows.filter(pk__gt=mark) if order == "asc" else rows.filter(pk__lt=mark)
    ordered = rows.order_by("pk" if order == "asc" else "-pk")
    payloads = list(ordered.values_list("payload", flat=True)[: max(limit, 0) + 1])
    return Page(payloads[:limit], len(payloads) > limit)


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
