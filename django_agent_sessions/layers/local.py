"""A channel layer inside one process, for projects that stream without Channels.

The wing talks to other workers through a channel-layer object (``group_add``,
``group_discard``, ``group_send``, ``send``, ``receive``, ``new_channel``). A project
served by one process (SQLite, ``runserver``, one uvicorn worker) and without Channels
gets this one: the same five calls on dictionaries of asyncio queues. Channels'
``InMemoryChannelLayer`` is the same idea, but needs Channels installed.

A queue may be read from another event loop than the one that sends (code under
``async_to_sync``): a send is then handed to the reader's loop.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

logger = logging.getLogger(__name__)

# Messages kept for a channel nobody reads; past it, new ones are dropped (as the
# channel layers of Channels do past their capacity).
CAPACITY = 1000


class _Mailbox:
    """One channel's queue, bound to the event loop of its reader (until one comes, of
    its first writer)."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.readers = 0  # receives waiting on it

    def put(self, message: dict[str, Any]) -> None:
        if self.queue.qsize() >= CAPACITY:
            logger.warning("A channel's queue is full; a message was dropped.")
            return
        if asyncio.get_running_loop() is self.loop:
            self.queue.put_nowait(message)
        elif not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.queue.put_nowait, message)


class LocalChannelLayer:
    """Groups and channels of this process (see the module)."""

    extensions = ["groups"]

    def __init__(self) -> None:
        self._mailboxes: dict[str, _Mailbox] = {}
        self._groups: dict[str, set[str]] = {}
        self._joined: dict[str, set[str]] = {}  # the groups of each channel

    async def new_channel(self, prefix: str = "specific") -> str:
        return f"{prefix}.local!{uuid.uuid4().hex}"

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        mailbox = self._mailboxes.get(channel)
        if mailbox is None:
            if channel not in self._joined:
                return  # nobody listens there (a closed stream): dropped, as Redis expires it
            mailbox = self._mailboxes[channel] = _Mailbox()
        mailbox.put(dict(message))

    async def receive(self, channel: str) -> dict[str, Any]:
        mailbox = self._mailboxes.get(channel)
        if mailbox is None:
            mailbox = self._mailboxes[channel] = _Mailbox()
        # Bound to its reader's loop: a writer's may be a short-lived one (async_to_sync).
        mailbox.loop = asyncio.get_running_loop()
        mailbox.readers += 1
        try:
            return await mailbox.queue.get()
        finally:
            mailbox.readers -= 1
            self._forget_if_unused(channel)

    async def group_add(self, group: str, channel: str) -> None:
        self._groups.setdefault(group, set()).add(channel)
        self._joined.setdefault(channel, set()).add(group)

    async def group_discard(self, group: str, channel: str) -> None:
        members = self._groups.get(group)
        if members is None:
            return
        members.discard(channel)
        if not members:
            del self._groups[group]
        joined = self._joined.get(channel, set())
        joined.discard(group)
        if not joined:
            self._joined.pop(channel, None)
        self._forget_if_unused(channel)

    def _forget_if_unused(self, channel: str) -> None:
        """Drop a channel's queue once no group reaches it and nobody reads it (a
        channel that changes groups keeps its queue, and its reader)."""
        mailbox = self._mailboxes.get(channel)
        if mailbox is not None and channel not in self._joined and mailbox.readers == 0:
            del self._mailboxes[channel]

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        for channel in list(self._groups.get(group, ())):
            await self.send(channel, message)

    async def tell_every_channel(self, message: dict[str, Any]) -> None:
        """``message`` to every channel in a group (after a layer lost messages)."""
        for channel in list(self._joined):
            await self.send(channel, message)

    def holds(self, channel: str) -> bool:
        """Whether the channel is this layer's: in a group, or read from."""
        return channel in self._joined or channel in self._mailboxes

    async def flush(self) -> None:
        """Forget every group and channel (tests)."""
        self._mailboxes.clear()
        self._groups.clear()
        self._joined.clear()
