"""The channel-layer groups of one socket, in one place.

A socket open on an id whose conversation does not exist yet waits in the id's pending
group; the first message creates the conversation and tells that group its primary key,
so every tab open on the new id joins it. A socket of a conversation is in its group
(the run's events), and this process's runs of it hand their events straight to the
socket's inbox. Leaving tells the conversation's run (``agent.left``), which then asks
whether anybody still watches it.
"""

from __future__ import annotations

from typing import Any, Protocol

from django_agent_sessions.websocket import layer, runs
from django_agent_sessions.websocket.socket_io import SocketIO


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

    async def wait_for_creation(self, session_id: str, owner_id: Any) -> None:
        self._pending = runs.pending_group_name(session_id, owner_id)
        await layer.retrying(self.layer.group_add, self._pending, self.channel)

    async def join(self, conversation_pk: int) -> None:
        await self._leave_pending()
        self.conversation_pk = conversation_pk
        self.io.watch(conversation_pk, self.channel)
        await layer.retrying(self.layer.group_add, runs.group_name(conversation_pk), self.channel)

    async def rejoin(self) -> None:
        """After the layer lost them (a Redis restart)."""
        if self.conversation_pk is not None:
            group = runs.group_name(self.conversation_pk)
            await layer.retrying(self.layer.group_add, group, self.channel)

    async def leave(self, *, tell_the_run: bool = True) -> None:
        """Leave every group; ``tell_the_run``: the run may then ask who still watches."""
        await self._leave_pending()
        if self.conversation_pk is None:
            return
        self.io.close()
        group = runs.group_name(self.conversation_pk)
        await layer.retrying(self.layer.group_discard, group, self.channel)
        if not tell_the_run:
            return
        await layer.retrying(
            self.layer.group_send,
            runs.control_group_name(self.conversation_pk),
            {"type": "agent.left"},
        )

    async def _leave_pending(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, ""
            await layer.retrying(self.layer.group_discard, pending, self.channel)


async def announce_creation(
    channel_layer: Any, session_id: str, owner_id: Any, conversation_pk: int
) -> None:
    """Bring every tab of the owner waiting on the new id into the conversation."""
    await layer.retrying(
        channel_layer.group_send,
        runs.pending_group_name(session_id, owner_id),
        {"type": "agent.created", "conversation_pk": conversation_pk},
    )
