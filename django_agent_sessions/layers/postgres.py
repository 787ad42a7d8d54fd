"""PostgreSQL's LISTEN/NOTIFY as a channel layer: several workers without Channels.

A project on PostgreSQL that serves the chat over HTTP streams, with no channel layer
configured, already runs the one service its workers share. Each process keeps its
channels and groups in a ``LocalChannelLayer`` and tells the others, on one
notification channel, what it sends to groups and to channels it does not hold; each
process hands what it hears to its own members. Most of a run's events never leave its
process (``fanout``): the layer carries a run's start and end, and every event only once
a stream of another worker follows it.

- **Two connections per process**, opened on first use in the serving event loop: one
  listens (psycopg's ``notifies()`` holds its connection), one sends, each message
  ``SELECT pg_notify(...)`` in autocommit.
- **The 8,000-byte payload limit**: a longer message goes as numbered parts of one
  transaction (PostgreSQL delivers a transaction's notifications together and in
  order), put back together by the listener.
- **A restarted server**: the listener connects again, and then tells every channel of
  its process ``agent.resync``: notifications sent while nobody listened are lost, so
  each stream reads its conversation's state again (a ``history`` frame, with the run in
  flight). A send is tried again once on a new connection.
- **Not through pgBouncer in transaction pooling**: LISTEN needs a session of its own.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import Any

from django.db import connections

from django_agent_sessions.layers.local import LocalChannelLayer
from django_agent_sessions.store.statements import LISTEN, NOTIFY, NOTIFY_CHANNEL

logger = logging.getLogger(__name__)

CHANNEL = NOTIFY_CHANNEL
# What every channel of the process is told once the listener listens again.
RESYNC = "agent.resync"
# Below PostgreSQL's 8,000-byte payload limit, with room for a part's envelope.
PART_BYTES = 7000
_RECONNECT_DELAYS = (0.1, 0.5, 1.0, 2.0, 5.0)
# How long a caller waits for the listener before the layer call fails (a server that
# cannot be reached must fail a stream or a run, not hang it).
LISTEN_TIMEOUT = 10.0
# Every connection: a bounded connect, and TCP keepalives so that a half-open connection
# (a server that vanished without closing it) is noticed in about a minute.
_CONNECTION = {
    "connect_timeout": 5,
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
}
# Connection parameters of Django's psycopg backend that are not libpq's.
_NOT_LIBPQ = {"context", "cursor_factory", "prepare_threshold", "server_side_binding", "pool"}


class PostgresChannelLayer:
    """A channel layer over LISTEN/NOTIFY on the ``default`` database (see the module)."""

    extensions = ["groups"]

    def __init__(self, alias: str = "default") -> None:
        self.alias = alias
        self.origin = uuid.uuid4().hex
        self.local = LocalChannelLayer()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._listening = asyncio.Event()
        self._listener: asyncio.Task[None] | None = None
        self._sender: Any = None
        self._send_lock: asyncio.Lock | None = None
        self._parts: dict[str, list[str]] = {}

    # The channel-layer interface ---------------------------------------------------

    async def new_channel(self, prefix: str = "specific") -> str:
        return await self.local.new_channel(prefix)

    async def receive(self, channel: str) -> dict[str, Any]:
        return await self.local.receive(channel)

    async def group_add(self, group: str, channel: str) -> None:
        await self._started()  # listening before anybody may send to the group
        await self.local.group_add(group, channel)

    async def group_discard(self, group: str, channel: str) -> None:
        await self.local.group_discard(group, channel)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await self.local.group_send(group, message)
        await self._notify({"g": group, "m": message})

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        if self.local.holds(channel):
            await self.local.send(channel, message)
        else:
            await self._notify({"c": channel, "m": message})

    async def flush(self) -> None:
        await self.local.flush()

    # Sending -------------------------------------------------------------------------

    async def _notify(self, envelope: dict[str, Any]) -> None:
        await self._started()
        payload = json.dumps({**envelope, "o": self.origin}, ensure_ascii=True)
        parts = _split(payload)
        assert self._send_lock is not None
        async with self._send_lock:
            for attempt in (1, 2):
                try:
                    return await self._send_parts(parts)
                except Exception:
                    if attempt == 2:
                        raise
                    logger.warning("Sending a notification failed; once more, reconnected.")
                    await self._close_sender()

    async def _send_parts(self, parts: list[str]) -> None:
        if self._sender is None or self._sender.closed:
            self._sender = await self._connect()
        if len(parts) == 1:
            await self._sender.execute(NOTIFY, (CHANNEL, parts[0]))
            return
        async with self._sender.transaction():
            for part in parts:
                await self._sender.execute(NOTIFY, (CHANNEL, part))

    async def _close_sender(self) -> None:
        sender, self._sender = self._sender, None
        if sender is not None:
            try:
                await sender.close()
            except Exception:
                logger.debug("Closing a broken sender failed.", exc_info=True)

    # Listening -----------------------------------------------------------------------

    async def _started(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # First use, or another event loop: the layer follows the loop that uses it
            # (a server has one; tests have one per test), and leaves the previous one.
            self._leave_loop()
            self._loop = loop
            self._listening = asyncio.Event()
            self._send_lock = asyncio.Lock()
            self._listener = loop.create_task(self._listen())
        try:
            await asyncio.wait_for(self._listening.wait(), LISTEN_TIMEOUT)
        except asyncio.TimeoutError:
            raise ConnectionError("PostgreSQL's notifications are unavailable.") from None

    def _leave_loop(self) -> None:
        old_loop, listener, self._sender = self._loop, self._listener, None
        self._parts.clear()
        if old_loop is not None and listener is not None and not old_loop.is_closed():
            old_loop.call_soon_threadsafe(listener.cancel)

    async def _listen(self) -> None:
        failures = 0
        while True:
            try:
                connection = await self._connect()
                async with connection:
                    await connection.execute(LISTEN)
                    self._parts.clear()  # parts of a message cut by a lost connection
                    if self._listening.is_set():
                        # Listening again: what was sent meanwhile is lost. Every stream
                        # of this process reads the conversation's state again.
                        await self.local.tell_every_channel({"type": RESYNC})
                    self._listening.set()
                    failures = 0
                    async for notification in connection.notifies():
                        await self._heard(notification.payload)
            except asyncio.CancelledError:
                raise
            except Exception:
                delay = _RECONNECT_DELAYS[min(failures, len(_RECONNECT_DELAYS) - 1)]
                failures += 1
                logger.warning("Listening for notifications failed; again in %s s.", delay)
                await asyncio.sleep(delay)

    async def _heard(self, payload: str) -> None:
        try:
            text = self._whole(payload)
            envelope = json.loads(text) if text is not None else None
        except ValueError:
            logger.warning("An unreadable notification was ignored.")
            return
        if envelope is None or envelope.get("o") == self.origin:
            return  # a part of a longer one, or this process's own (delivered already)
        if "g" in envelope:
            await self.local.group_send(envelope["g"], envelope["m"])
        elif self.local.holds(envelope.get("c", "")):
            await self.local.send(envelope["c"], envelope["m"])

    def _whole(self, payload: str) -> str | None:
        """The message, once all of its parts arrived (a short one is its only part)."""
        if not payload.startswith("#"):
            return payload
        header, _, piece = payload.partition("|")
        message_id, index, count = header[1:].split(":")
        parts = self._parts.setdefault(message_id, [])
        parts.append(piece)
        if int(index) + 1 < int(count):
            return None
        del self._parts[message_id]
        return "".join(parts)

    async def _connect(self) -> Any:
        import psycopg  # psycopg 3: Django's PostgreSQL backend may run on psycopg2

        params = connections[self.alias].get_connection_params()
        params = {k: v for k, v in params.items() if k not in _NOT_LIBPQ}
        return await psycopg.AsyncConnection.connect(**{**_CONNECTION, **params}, autocommit=True)


def _split(payload: str) -> list[str]:
    """``payload`` as one notification, or as numbered parts ``#<id>:<i>:<n>|<piece>``
    (JSON text never starts with ``#``)."""
    if len(payload) <= PART_BYTES:
        return [payload]
    message_id = uuid.uuid4().hex[:12]
    pieces = [payload[i : i + PART_BYTES] for i in range(0, len(payload), PART_BYTES)]
    return [f"#{message_id}:{i}:{len(pieces)}|{piece}" for i, piece in enumerate(pieces)]
