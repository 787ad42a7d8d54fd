"""The websocket consumer: authenticate, authorise, decode, dispatch, encode. Nothing more.

A client frame is read by ``frames`` and dispatched by its type to one ``frame_*``
method, which calls ``actions`` (what a frame does, shared with the HTTP stream) or the
``Relay``. The consumer owns its relay, groups (``groups``) and guarded I/O (``socket_io``); the
database is ``store``'s. ``session_id`` is the id a conversation is stored under (the
URL's, namespaced for anonymous sockets), ``conversation_pk`` its primary key.
"""

from __future__ import annotations

import logging
from typing import Any

from agents import Agent

try:
    from channels.consumer import get_handler_name
    from channels.generic.websocket import AsyncJsonWebsocketConsumer
except ImportError as missing:  # the core and the SSE transport do without Channels
    raise ImportError(
        "The chat's websocket needs Channels and daphne: "
        'pip install "django-agent-sessions[websocket]" '
        '(or set AGENT_SESSIONS["TRANSPORT"] = "sse" and leave the websocket routes out).'
    ) from missing

from django_agent_sessions import DjangoSession
from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.store import conversations
from django_agent_sessions.websocket import (
    access,
    actions,
    frames,
    groups,
    history,
    layer,
    lost,
    wire,
)
from django_agent_sessions.websocket.access import (  # noqa: F401 - public re-export
    CLOSE_ANONYMOUS,
    CLOSE_FORBIDDEN,
    anonymous_owner,
)
from django_agent_sessions.websocket.agent_loading import load_agent
from django_agent_sessions.websocket.context import AgentRunContext
from django_agent_sessions.websocket.groups import Groups
from django_agent_sessions.websocket.relay import Relay
from django_agent_sessions.websocket.socket_io import SocketIO

logger = logging.getLogger(__name__)

CLIENT_ID_MAX_LENGTH = frames.CLIENT_ID_MAX_LENGTH
# Layer messages whose handlers touch no database: channels' dispatch() would hop into
# the sync thread before each (close_old_connections), which let a fast run outpace its
# sockets until the layer's capacity dropped events (the end of the run too).
_RELAYED = frozenset({"agent.event", "agent.presence"})


class AgentSessionConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    """Chat with the configured agent in the conversation named by the URL."""

    conversation_pk: int | None = None  # None until the conversation exists
    accepted = False
    session_id = ""
    anonymous_key = ""  # the keyed hash of an anonymous socket's Django session key
    _holds_sweeper = False  # holds lost.sweeper while connected

    io_class = SocketIO

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.io = self.io_class()
        # Its channel-layer groups (Channels' own ``groups`` list stays empty).
        self.membership = Groups(self, self.io)
        self.relay = Relay(self)
        try:
            await super().__call__(scope, receive, self.io.guarded(send))
        finally:
            self.io.close()

    @property
    def channel_receive(self) -> Any:
        """Channels' receive from the layer, read through the socket's inbox."""
        return self.io.next_message

    @channel_receive.setter
    def channel_receive(self, receive: Any) -> None:
        self.io.layer_receive = receive

    async def connect(self) -> None:
        user = self.scope.get("user")
        self.anonymous = user is None or not user.is_authenticated
        if self.anonymous and not app_settings.ALLOW_ANONYMOUS:
            return await self._refuse(CLOSE_ANONYMOUS)
        requested = self.scope["url_route"]["kwargs"]["session_id"]
        try:
            self.session_id = self.stored_session_id(requested)
            DjangoSession(self.session_id)  # validates the id
            # Connecting writes nothing: a new id stays only an id until its first message.
            opened = await conversations.afind_conversation(self.session_id, owner_id=self.owner_id)
        except (SessionOwnershipError, ValueError):
            return await self._refuse(CLOSE_FORBIDDEN)
        self.accepted = True
        await self.accept()
        lost.sweeper.acquire(self.channel_layer)
        self._holds_sweeper = True
        conversation_pk = None if opened is None else opened.pk
        if conversation_pk is None:
            try:
                conversation_pk = await self.membership.wait_for_creation(
                    self.session_id, self.owner_id
                )
            except SessionOwnershipError:  # someone else's since the lookup above
                await self.close(code=CLOSE_FORBIDDEN)
                return
        if conversation_pk is None:
            await history.send_empty_frame(self.send_json)
            return
        await self._join(conversation_pk)
        await self.relay.send_history()

    @property
    def owner_id(self) -> Any:
        return None if self.anonymous else self.scope["user"].pk

    async def _join(self, conversation_pk: int) -> None:
        self.conversation_pk = conversation_pk
        await self.membership.join(conversation_pk)

    async def create_conversation(self) -> None:
        """The first message: create the conversation, and bring every tab open on it."""
        opened = await conversations.aopen_conversation(self.session_id, owner_id=self.owner_id)
        await self._join(opened.pk)
        await groups.announce_creation(
            self.channel_layer, self.session_id, self.owner_id, opened.pk, created=opened.created
        )

    async def agent_created(self, message: dict[str, Any]) -> None:
        """Another tab's first message created this socket's conversation: join it."""
        if self.conversation_pk is not None:
            return
        await self._join(int(message["conversation_pk"]))
        if not groups.joined_from_start(message):
            # The first run may have started in another worker before this socket
            # joined (its events then go through the layer only once a socket follows
            # it): a catch-up shows it from its beginning. Before it starts, there is
            # nothing to say.
            await self.relay.send_history(unless_empty=True)

    async def _refuse(self, code: int) -> None:
        # Decided before accepting; accepted only so that browsers see the close code
        # (a refused handshake reaches them as 1006). No frame is read or sent.
        await self.accept()
        await self.close(code=code)

    def stored_session_id(self, requested: str) -> str:
        """The conversation id stored for the id in the URL (see ``access``)."""
        if not self.anonymous:
            return requested
        self.anonymous_key = access.anonymous_key(self.scope)
        return access.anonymous_session_id(self.anonymous_key, requested)

    async def disconnect(self, code: int) -> None:
        self.relay.stop()
        self.io.gone = True
        if self._holds_sweeper:
            self._holds_sweeper = False
            lost.sweeper.release()
        if self.accepted:
            await self.membership.leave()

    async def dispatch(self, message: dict[str, Any]) -> None:
        if message.get("type") in _RELAYED:
            await getattr(self, get_handler_name(message))(message)
            return
        await super().dispatch(message)

    # Frames from the browser ------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if not self.accepted:
            return  # a refused socket, closing: its frames are never read
        try:
            content = frames.decode(text_data, max_bytes=app_settings.MAX_MESSAGE_BYTES)
            # Dispatched by type, as channels' get_handler_name does for layer messages.
            await getattr(self, f"frame_{content['type']}")(content)
        except frames.BadFrame as bad:
            await self._error(bad.code, bad.message, bad.client_id, **bad.fields)

    async def frame_user_message(self, content: dict[str, Any]) -> None:
        try:
            await actions.send_message(self, content)
        except SessionOwnershipError:
            # Someone else created this id between our connect and this first message.
            await self.close(code=CLOSE_FORBIDDEN)

    async def frame_approval(self, content: dict[str, Any]) -> None:
        await actions.decide(self, content)

    async def frame_cancel(self, content: dict[str, Any]) -> None:
        await actions.cancel(self, content)

    async def frame_load_older(self, content: dict[str, Any]) -> None:
        before = frames.load_older(content)
        await history.send_page(self.send_json, self.conversation_pk, before)

    # Messages from runs, through the channel layer (or this process's inbox) ---------

    async def agent_event(self, message: dict[str, Any]) -> None:
        await self.relay.on_event(message)

    async def agent_snapshot(self, message: dict[str, Any]) -> None:
        await self.relay.on_snapshot(message["snapshot"])

    async def agent_catchup_timeout(self, message: dict[str, Any]) -> None:
        await self.relay.on_catchup_timeout()

    async def agent_expire(self, message: dict[str, Any]) -> None:
        await self.relay.on_expire()

    async def agent_presence(self, message: dict[str, Any]) -> None:
        await layer.retrying(self.channel_layer.send, message["reply_to"], {"type": "agent.here"})

    async def _error(self, code: str, message: str, client_id: str = "", **fields: Any) -> None:
        await self.send_json(frames.error_frame(code, message, client_id, **fields))

    # Extension points --------------------------------------------------------------

    @property
    def user(self) -> Any:
        return self.scope.get("user")

    async def get_agent(self) -> Agent[Any]:
        """The agent for this connection; by default ``AGENT_SESSIONS["AGENT"]``."""
        return await load_agent(self.scope)

    def get_run_context(self, session: DjangoSession) -> Any:
        """The object tools receive as ``ctx.context``."""
        return AgentRunContext(
            user=self.user, session_id=self.session_id, session=session, scope=self.scope
        )

    def rate_limit_key(self) -> str:
        if self.anonymous:
            return f"anonymous:{self.anonymous_key}"
        return f"user:{self.user.pk}"

    @classmethod
    async def encode_json(cls, content: Any) -> str:
        return wire.frame_text(content)
