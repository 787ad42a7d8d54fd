"""The websocket consumer: authenticate, authorise, decode, dispatch, encode. Nothing more.

A client frame is read by ``frames`` and dispatched by its type to one ``frame_*``
method, which calls ``streaming.actions`` (what a frame does, shared with the HTTP
transport). Following the conversation (history, a run's events, recovering what the
channel layer lost) is the ``streaming.Follower``'s, as it is for an HTTP stream; the
consumer only hands it the layer's messages and its guarded send (``socket_io``).
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import parse_qs

from agents import Agent

try:
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
from django_agent_sessions.streaming import (  # noqa: F401 - public re-export
    CLOSE_ANONYMOUS,
    CLOSE_FORBIDDEN,
    Follower,
    SocketIO,
    Visitor,
    actions,
    anonymous_owner,
    drain,
    encoding,
    frames,
    history,
    load_agent,
    queueing,
    replay,
)

logger = logging.getLogger(__name__)

CLIENT_ID_MAX_LENGTH = frames.CLIENT_ID_MAX_LENGTH
# This worker stops: the page reconnects at once, to another one. (1012, RFC 6455's
# Service Restart, which uvicorn sends as it shuts down, means the same to the page;
# daphne refuses to send it.)
CLOSE_RESTART = 4012


class AgentSessionConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    """Chat with the configured agent in the conversation named by the URL."""

    accepted = False
    follower: Follower | None = None
    visitor: Visitor | None = None

    io_class = SocketIO

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.io = self.io_class()
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

    @property
    def conversation_pk(self) -> int | None:
        return None if self.visitor is None else self.visitor.conversation_pk

    @property
    def session_id(self) -> str:
        """The id the conversation is stored under (namespaced for anonymous sockets)."""
        return "" if self.visitor is None else self.visitor.session_id

    async def connect(self) -> None:
        user = self.scope.get("user")
        if (user is None or not user.is_authenticated) and not app_settings.ALLOW_ANONYMOUS:
            return await self._refuse(CLOSE_ANONYMOUS)
        try:
            self.visitor = self._visitor(user)
            # Connecting writes nothing: a new id stays only an id until its first message.
            await self.visitor.find_conversation()
        except (SessionOwnershipError, ValueError):
            return await self._refuse(CLOSE_FORBIDDEN)
        self.accepted = True
        await self.accept()
        self.follower = Follower(
            self.visitor,
            channel_name=self.channel_name,
            io=self.io,
            send=self.send_json,
            restart=self._restart,
        )
        try:
            await self.follower.open(resume=self._resume_position())
        except SessionOwnershipError:  # someone else's since the lookup above
            await self.close(code=CLOSE_FORBIDDEN)

    def _visitor(self, user: Any) -> Visitor:
        visitor = Visitor(
            user,
            self.scope["url_route"]["kwargs"]["session_id"],
            scope=self.scope,
            channel_layer=self.channel_layer,
            session_key=getattr(self.scope.get("session"), "session_key", None),
        )
        # The consumer's methods decide, looked up at each run as they always were: by
        # default they ask the settings, as the visitor would; a subclass's own decide.
        visitor.agent_source = lambda: self.get_agent()
        visitor.context_source = lambda session: self.get_run_context(session)
        return visitor

    async def _refuse(self, code: int) -> None:
        # Decided before accepting; accepted only so that browsers see the close code
        # (a refused handshake reaches them as 1006). No frame is read or sent.
        await self.accept()
        await self.close(code=code)

    def _resume_position(self) -> tuple[str, int] | None:
        """``?resume=<run_id>:<seq>``: where a reconnecting page was (``replay``)."""
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        return replay.position((query.get("resume") or [""])[0])

    async def _restart(self) -> None:
        """This worker stops (``streaming.drain``): the page reconnects to another."""
        await self.close(code=CLOSE_RESTART)

    async def disconnect(self, code: int) -> None:
        self.io.gone = True
        if self.follower is not None:
            # Sent elsewhere by a drain, the tab still watches the run: nothing to tell.
            await self.follower.close(tell_the_run=not drain.draining())

    async def dispatch(self, message: dict[str, Any]) -> None:
        # The follower's messages go to it directly: channels' dispatch() would hop into
        # the sync thread before each (close_old_connections), which let a fast run
        # outpace its sockets until the layer's capacity dropped events (the end of the
        # run too). The store's hops refresh their connections themselves.
        if str(message.get("type", "")).startswith("agent.") and self.follower is not None:
            await self.follower.handle(message)
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
        assert self.visitor is not None
        try:
            accepted = await actions.send_from_chat(self.visitor, content)
        except SessionOwnershipError:
            # Someone else created this id between our connect and this first message.
            await self.close(code=CLOSE_FORBIDDEN)
            return
        if accepted is not None:  # it joined the reply (WHILE_RUNNING = "steer")
            await self.send_json(accepted)

    async def frame_approval(self, content: dict[str, Any]) -> None:
        assert self.visitor is not None
        await actions.decide(self.visitor, content)

    async def frame_cancel(self, content: dict[str, Any]) -> None:
        assert self.visitor is not None
        await actions.cancel(self.visitor, content)

    async def frame_queue_edit(self, content: dict[str, Any]) -> None:
        assert self.visitor is not None
        await queueing.edit(self.visitor, content)

    async def frame_queue_remove(self, content: dict[str, Any]) -> None:
        assert self.visitor is not None
        await queueing.remove(self.visitor, content)

    async def frame_load_older(self, content: dict[str, Any]) -> None:
        before = frames.load_older(content)
        await history.send_page(self.send_json, self.conversation_pk, before)

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
        """The object tools receive as ``ctx.context``; by default what
        ``AGENT_SESSIONS["RUN_CONTEXT"]`` makes of an ``AgentRunContext``."""
        assert self.visitor is not None
        return self.visitor.configured_run_context(session)

    @classmethod
    async def encode_json(cls, content: Any) -> str:
        return encoding.frame_text(content)
