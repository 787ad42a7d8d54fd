"""The channel-layer groups of one socket, and the groups' names, in one place.

A socket open on an id whose conversation does not exist yet waits in the id's pending
group; the first message creates the conversation and tells that group its primary key,
so every tab open on the new id joins it. Tabs of the creating process are told
directly, before the first run can publish: they watch its runs from their start and
need no catch-up (an HTTP stream's first message waited four database reads and two
layer round trips longer than the socket that sent it). A run a task executes publishes
through the layer only: for one, they join the conversation's group before it is
enqueued, or its first events could pass them by. Other workers' tabs are told
through the layer and catch up. A socket looks the conversation up again once it
waits: one created before that was announced to nobody it could hear.

A socket of a conversation is in its group (the run's events), and this process's runs
of it hand their events straight to the socket's inbox. Leaving tells the
conversation's run (``agent.left``), which then asks whether anybody still watches it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from django_agent_sessions.store import conversations
from django_agent_sessions.streaming.delivery import layer
from django_agent_sessions.streaming.delivery.socket_io import SocketIO

# This process's sockets waiting on a new id: by pending group, then channel name.
_waiting_here: dict[str, dict[str, Callable[[int, bool, bool], Awaitable[None]]]] = {}


def group_name(session_pk: int) -> str:
    """The group of the sockets watching a conversation."""
    return f"agent_sessions.{session_pk}"


def pending_group_name(session_id: str, owner_id: Any) -> str:
    """The group of one owner's sockets open on an id whose conversation does not exist yet.

    The first message creates the conversation and tells this group its primary key, so
    every tab of the owner already open on the new id joins the conversation and sees
    the run. The owner is part of the name: another user's socket open on the same id
    (which will be refused the conversation) never hears of it.
    """
    key = f"{owner_id!r}\x00{session_id}"
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:48]
    return f"agent_sessions.new.{digest}"


def control_group_name(session_pk: int) -> str:
    """The group of the run of a conversation (at most one member at a time)."""
    return f"agent_sessions.{session_pk}.run"


class Socket(Protocol):
    channel_layer: Any
    channel_name: str


class Groups:
    """The groups a socket is in; ``conversation_pk`` once it has joined one."""

    def __init__(self, socket: Socket, io: SocketIO) -> None:
        self.socket, self.io = socket, io
        io.rejoin_groups = self.rejoin
        self.conversation_pk: int | None = None
        self._pending = ""  # the group of the new id this socket waits on

    @property
    def layer(self) -> Any:
        return self.socket.channel_layer

    @property
    def channel(self) -> str:
        return self.socket.channel_name

    async def wait_for_creation(
        self, session_id: str, owner_id: Any, *, look_again: bool = True
    ) -> int | None:
        """Wait in the new id's pending group. Returns the conversation's primary key
        if it was created meanwhile (after the caller found no conversation, before
        this socket waited: nobody will announce it to this socket), else None. Raises
        ``SessionOwnershipError`` if someone else created it.

        ``look_again=False``: no second lookup (one hop less), for a follower whose own
        message comes next: a conversation created meanwhile is then opened by that
        message, which announces it through the layer (or is refused)."""
        self._pending = pending_group_name(session_id, owner_id)
        _waiting_here.setdefault(self._pending, {})[self.channel] = self._created_here
        await layer.retrying(self.layer.group_add, self._pending, self.channel)
        if not look_again:
            return None
        found = await conversations.afind_conversation(session_id, owner_id=owner_id)
        return None if found is None else found.pk

    async def _created_here(self, conversation_pk: int, temporary: bool, offloaded: bool) -> None:
        """This process created the conversation: watch its runs now, before one can
        publish; the inbox's ``agent.created``, ahead of every event, joins it next.
        ``offloaded``: its first run is a task's, heard through the layer only, so the
        socket is in the conversation's group already before that run is enqueued."""
        created = {"type": "agent.created", "conversation_pk": conversation_pk, "here": True}
        self.io.deliver_local({**created, "temporary": True} if temporary else created)
        self.io.watch(conversation_pk, self.channel)
        if offloaded:
            await layer.retrying(self.layer.group_add, group_name(conversation_pk), self.channel)

    async def join(self, conversation_pk: int) -> None:
        await self._leave_pending()
        self.conversation_pk = conversation_pk
        self.io.watch(conversation_pk, self.channel)
        await layer.retrying(self.layer.group_add, group_name(conversation_pk), self.channel)

    async def rejoin(self) -> None:
        """After the layer lost them (a Redis restart)."""
        if self.conversation_pk is not None:
            group = group_name(self.conversation_pk)
            await layer.retrying(self.layer.group_add, group, self.channel)

    async def leave(self, *, tell_the_run: bool = True) -> None:
        """Leave every group; ``tell_the_run``: the run may then ask who still watches."""
        await self._leave_pending()
        self.io.close()  # (watching from a creation here, even before joining)
        if self.conversation_pk is None:
            return
        group = group_name(self.conversation_pk)
        await layer.retrying(self.layer.group_discard, group, self.channel)
        if not tell_the_run:
            return
        await layer.retrying(
            self.layer.group_send,
            control_group_name(self.conversation_pk),
            {"type": "agent.left"},
        )

    async def _leave_pending(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, ""
            waiting = _waiting_here.get(pending, {})
            waiting.pop(self.channel, None)
            if not waiting:
                _waiting_here.pop(pending, None)
            await layer.retrying(self.layer.group_discard, pending, self.channel)


async def announce_creation(
    channel_layer: Any,
    session_id: str,
    owner_id: Any,
    conversation_pk: int,
    *,
    created: bool,
    temporary: bool = False,
    offloaded: bool = False,
) -> None:
    """Bring every tab of the owner waiting on the new id into the conversation: this
    process's directly when this call ``created`` it (nothing can have run in it yet),
    the others, and every tab when it existed already, through the layer. ``temporary``:
    a temporary chat, whose tabs count themselves in (``following.temporary``).
    ``offloaded``: its first run will be a task's (see ``Groups._created_here``)."""
    pending = pending_group_name(session_id, owner_id)
    told_here = _waiting_here.pop(pending, {}) if created else {}
    for created_here in list(told_here.values()):
        await created_here(conversation_pk, temporary, offloaded)
    message = {"type": "agent.created", "conversation_pk": conversation_pk}
    if temporary:
        message["temporary"] = True
    await layer.retrying(channel_layer.group_send, pending, message)


def joined_from_start(message: dict[str, Any]) -> bool:
    """Whether an ``agent.created`` comes from this process's creation, whose runs the
    socket watched from their start; else (another worker's, through the layer) the
    socket catches up on what the first run published before it joined. (The layer's
    copy of a creation told directly finds the socket joined already.)"""
    return message.get("here") is True
