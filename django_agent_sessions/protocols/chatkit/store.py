"""``DjangoChatKitStore``: ChatKit's ``Store`` on the app's conversations.

A thread is a conversation (``AgentSession``, its id the ``session_id``), owned by the
context's user (``context.owner_id``): another user's thread is not found, as a missing
one. Threads, items and attachments keep ChatKit's JSON exactly (``chatkit_rows``);
user and assistant messages are also the conversation's SDK items (``mirror``), so
``DjangoSession(thread_id)`` reads the same messages. Each method is one hop into one
``store.chatkit`` operation (one transaction), and makes no ORM call itself.
"""

from __future__ import annotations

import json
from typing import Any, Generic, TypeVar

from chatkit.store import NotFoundError, Store
from chatkit.types import Attachment, Page, ThreadItem, ThreadMetadata
from pydantic import TypeAdapter

from django_agent_sessions.protocols.chatkit.context import owner_id
from django_agent_sessions.protocols.chatkit.mirror import chatkit_item, sdk_item
from django_agent_sessions.store.chatkit import Missing, attachments, items, threads
from django_agent_sessions.store.chatkit.adopted import SDK, Row

TContext = TypeVar("TContext")
_ITEM: TypeAdapter[ThreadItem] = TypeAdapter(ThreadItem)
_ATTACHMENT: TypeAdapter[Attachment] = TypeAdapter(Attachment)
# What ThreadMetadata holds: a Thread handed to save_thread keeps its items out.
_THREAD_FIELDS = set(ThreadMetadata.model_fields)


class DjangoChatKitStore(Store[TContext], Generic[TContext]):
    """ChatKit's threads, items and attachment metadata in the project's database.

    The context is anything with a ``user`` attribute (``ChatKitContext``); override
    ``owner_id(context)`` to read the owner elsewhere.
    """

    def owner_id(self, context: TContext) -> Any:
        return owner_id(context)

    async def load_thread(self, thread_id: str, context: TContext) -> ThreadMetadata:
        try:
            return _metadata(await threads.load(self.owner_id(context), thread_id))
        except Missing:
            raise NotFoundError(f"Thread {thread_id} not found") from None

    async def save_thread(self, thread: ThreadMetadata, context: TContext) -> None:
        payload = thread.model_dump_json(include=_THREAD_FIELDS)
        try:
            await threads.save(self.owner_id(context), thread.id, payload, thread.title or "")
        except Missing:
            raise NotFoundError(f"Thread {thread.id} not found") from None

    async def load_threads(
        self, limit: int, after: str | None, order: str, context: TContext
    ) -> Page[ThreadMetadata]:
        try:
            found = await threads.page(self.owner_id(context), after, limit, order)
        except Missing:
            raise NotFoundError(f"Thread {after} not found") from None
        data = [_metadata(thread) for thread in found.threads]
        return Page(data=data, has_more=found.has_more, after=_last_id(data, found.has_more))

    async def delete_thread(self, thread_id: str, context: TContext) -> None:
        await threads.delete(self.owner_id(context), thread_id)

    async def load_thread_items(
        self, thread_id: str, after: str | None, limit: int, order: str, context: TContext
    ) -> Page[ThreadItem]:
        try:
            found = await items.page(self.owner_id(context), thread_id, after, limit, order)
        except Missing:
            raise NotFoundError(f"Item {after} not found") from None
        data = [item for row in found.rows if (item := _item(thread_id, row)) is not None]
        return Page(data=data, has_more=found.has_more, after=_last_id(data, found.has_more))

    async def add_thread_item(self, thread_id: str, item: ThreadItem, context: TContext) -> None:
        await self._write(items.add, thread_id, item, context)

    async def save_item(self, thread_id: str, item: ThreadItem, context: TContext) -> None:
        await self._write(items.save, thread_id, item, context)

    async def _write(self, operation: Any, thread_id: str, item: ThreadItem, context: Any) -> None:
        payload = _ITEM.dump_json(item).decode()
        try:
            await operation(
                self.owner_id(context), thread_id, item.id, item.type, payload, sdk_item(item)
            )
        except Missing:
            raise NotFoundError(f"Thread {thread_id} not found") from None

    async def load_item(self, thread_id: str, item_id: str, context: TContext) -> ThreadItem:
        try:
            item = _item(thread_id, await items.load(self.owner_id(context), thread_id, item_id))
        except Missing:
            item = None
        if item is None:
            raise NotFoundError(f"Item {item_id} not found in thread {thread_id}")
        return item

    async def delete_thread_item(self, thread_id: str, item_id: str, context: TContext) -> None:
        try:
            await items.delete(self.owner_id(context), thread_id, item_id)
        except Missing:
            raise NotFoundError(f"Thread {thread_id} not found") from None

    async def save_attachment(self, attachment: Attachment, context: TContext) -> None:
        payload = _ATTACHMENT.dump_json(attachment).decode()
        owner = self.owner_id(context)
        try:
            await attachments.save(owner, attachment.id, payload, attachment.thread_id)
        except Missing:
            raise NotFoundError(f"File {attachment.id} not found") from None

    async def load_attachment(self, attachment_id: str, context: TContext) -> Attachment:
        try:
            stored = await attachments.load(self.owner_id(context), attachment_id)
        except Missing:
            raise NotFoundError(f"File {attachment_id} not found") from None
        return _ATTACHMENT.validate_json(stored.payload)

    async def delete_attachment(self, attachment_id: str, context: TContext) -> None:
        await attachments.delete(self.owner_id(context), attachment_id)


def _metadata(thread: threads.Thread) -> ThreadMetadata:
    """ChatKit's metadata of a thread: its own JSON (a rename in the packaged chat or the
    admin showing), or for a conversation ChatKit never saved, the conversation's."""
    if thread.payload is None:
        title = thread.title or None
        return ThreadMetadata(id=thread.thread_id, title=title, created_at=thread.created_at)
    metadata = ThreadMetadata.model_validate_json(thread.payload)
    if thread.renamed is None:
        return metadata
    return metadata.model_copy(update={"title": thread.renamed or None})


def _item(thread_id: str, row: Row) -> ThreadItem | None:
    """A row's ChatKit item: its JSON, or the message its SDK item is (``adopted``)."""
    if row.kind == SDK:
        return chatkit_item(row.item_id, thread_id, row.created_at, json.loads(row.sdk))
    return _ITEM.validate_json(row.payload)


def _last_id(data: list[Any], has_more: bool) -> str | None:
    """The cursor of the next page: the last id, when there is one."""
    return data[-1].id if has_more and data else None
