"""The websocket layer: authenticate, authorise, validate frames, relay. Nothing more.

Running the agent lives in ``runs.py``/``streaming.py``, database work in
``run_records.py`` (reached through ``database_sync_to_async``). The wire protocol is
documented in ``docs/wire-protocol.md``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from agents import Agent
from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext as _

from django_agent_sessions import (
    DjangoSession,
    display,
    limits,
    run_records,
    runs,
    serialization,
)
from django_agent_sessions.agent_loading import load_agent
from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.sequencing import Sequencer
from django_agent_sessions.streaming import StreamedRun

logger = logging.getLogger(__name__)

PROTOCOL_VERSION = 2
CLIENT_ID_MAX_LENGTH = 64
CLOSE_ANONYMOUS = 4401
CLOSE_FORBIDDEN = 4403
CATCHUP_TIMEOUT = 1.0
GAP_TIMEOUT = 0.5
ANONYMOUS_PREFIX = "anon"
_MAX_BUFFERED = 1000
# Channel-layer messages whose handlers touch no database: a run's events and its
# presence question. channels' dispatch() would hop into the sync thread before each
# (close_old_connections); per streamed frame, that hop let a fast run outpace its
# sockets until the channel layer's capacity dropped events (the end of the run too).
_RELAYED = frozenset({"agent.event", "agent.presence"})


def anonymous_owner(session_key: str) -> str:
    """A stable, secret-free name for a Django session.

    The session key is a credential: stored in a conversation id it would show in the
    admin and in exports, so the id holds a keyed hash of it instead.
    """
    return salted_hmac(
        "django_agent_sessions.anonymous", session_key, algorithm="sha256"
    ).hexdigest()[:32]


class AgentSessionConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    """Chat with the configured agent in the conversation named by the URL."""

    session_pk: int | None = None
    storage_id = ""
    # Set once the socket is closing: sends are dropped from then on (see _guarded).
    _gone = False
    _holds_sweeper = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await super().__call__(scope, receive, self._guarded(send))

    def _guarded(self, send: Any) -> Any:
        """The server's send, made safe for a socket that is closing.

        daphne raises ``autobahn.exception.Disconnected`` on a send once the browser's
        close handshake has begun, before the consumer reads ``websocket.disconnect``.
        Uncaught, it would end the consumer and ``disconnect()`` would never run (the
        run would go on for nobody). Such a send is dropped instead, and so is every
        later one; the disconnect is handled as usual when it is read.
        """

        async def guarded(message: dict[str, Any]) -> None:
            if self._gone and message.get("type") in ("websocket.send", "websocket.close"):
                return
            try:
                await send(message)
            except Exception as error:
                if not _is_disconnected(error):
                    raise
                self._gone = True
                logger.debug("Dropped a frame for a closing socket.")

        return guarded

    @property
    def channel_receive(self) -> Any:
        return self._receive_from_layer

    @channel_receive.setter
    def channel_receive(self, receive: Any) -> None:
        self._layer_receive = receive

    async def _receive_from_layer(self) -> Any:
        # A Redis restart breaks the pooled connection this waits on; one retry gets a
        # new one instead of closing a socket that just (re)connected.
        return await runs.retrying(self._layer_receive)

    async def connect(self) -> None:
        self._sequencer = Sequencer()
        self._gap_timers: dict[str, asyncio.Task[None]] = {}
        self._buffer: list[dict[str, Any]] | None = None  # while waiting for a snapshot
        user = self.scope.get("user")
        self.anonymous = user is None or not user.is_authenticated
        if self.anonymous and not app_settings.ALLOW_ANONYMOUS:
            return await self._refuse(CLOSE_ANONYMOUS)
        requested = self.scope["url_route"]["kwargs"]["session_id"]
        try:
            self.storage_id = self.stored_session_id(requested)
            DjangoSession(self.storage_id)  # validates the id
            opened = await database_sync_to_async(run_records.open_session)(
                self.storage_id,
                owner_id=None if self.anonymous else user.pk,
                anonymous=self.anonymous,
            )
        except (SessionOwnershipError, ValueError):
            return await self._refuse(CLOSE_FORBIDDEN)
        self.session_pk = opened.pk
        await self.accept()
        await runs.retrying(
            self.channel_layer.group_add, runs.group_name(opened.pk), self.channel_name
        )
        runs.sweeper.acquire(self.channel_layer)
        self._holds_sweeper = True
        await self._send_history()

    async def _refuse(self, code: int) -> None:
        # Decided before accepting; accepted only so that browsers see the close code
        # (a refused handshake reaches them as 1006). No frame is read or sent.
        await self.accept()
        await self.close(code=code)

    def stored_session_id(self, requested: str) -> str:
        """The conversation id stored for the id in the URL.

        Anonymous sockets get ids namespaced by their Django session key, so they can
        only ever reach their own conversations; signed-in users use the id as is.
        """
        if not self.anonymous:
            return requested
        key = getattr(self.scope.get("session"), "session_key", None)
        if not key:
            raise ValueError("anonymous sockets need a saved Django session")
        return f"{ANONYMOUS_PREFIX}:{anonymous_owner(key)}:{requested}"

    async def disconnect(self, code: int) -> None:
        timers = [getattr(self, "_catchup_timer", None), *getattr(self, "_gap_timers", {}).values()]
        for timer in timers:
            if timer is not None:
                timer.cancel()
        self._gone = True
        if self._holds_sweeper:
            self._holds_sweeper = False
            runs.sweeper.release()
        if self.session_pk is None:
            return
        await runs.retrying(
            self.channel_layer.group_discard, runs.group_name(self.session_pk), self.channel_name
        )
        await runs.retrying(
            self.channel_layer.group_send,
            runs.control_group_name(self.session_pk),
            {"type": "agent.left"},
        )

    async def dispatch(self, message: dict[str, Any]) -> None:
        if message.get("type") in _RELAYED:
            await getattr(self, get_handler_name(message))(message)
            return
        await super().dispatch(message)

    # Frames from the browser ------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.session_pk is None:
            return  # a refused socket, closing: its frames are never read
        if text_data is None:
            return await self._error("invalid_frame", _("Send JSON text frames."))
        if len(text_data.encode("utf-8", "replace")) > app_settings.MAX_MESSAGE_BYTES:
            return await self._error("too_large", _("The message is too long."))
        try:
            content = json.loads(text_data)
        except (ValueError, RecursionError):  # RecursionError: deeply nested brackets
            return await self._error("invalid_json", _("The frame is not valid JSON."))
        if not isinstance(content, dict) or not isinstance(content.get("type"), str):
            return await self._error("invalid_frame", _("A frame is a JSON object with a type."))
        if content["type"] == "user_message":
            return await self._user_message(content)
        if content["type"] == "cancel":
            return await self._cancel(content)
        if content["type"] == "load_older":
            return await self._load_older(content)
        return await self._error("unknown_type", _("Unknown frame type."))

    async def _user_message(self, content: dict[str, Any]) -> None:
        client_id = content.get("client_id")
        if client_id is not None and (
            not isinstance(client_id, str)
            or not 0 < len(client_id) <= CLIENT_ID_MAX_LENGTH
            or not client_id.isprintable()
        ):
            return await self._error(
                "invalid_frame", _("client_id must be a short string."), client_id=None
            )
        client_id = client_id or ""
        text = content.get("text")
        if not isinstance(text, str) or not text.strip():
            return await self._error("empty_text", _("Write a message first."), client_id)
        if not serialization.is_valid_unicode(text) or "\x00" in text:
            # A lone surrogate (half an emoji) or NUL: it could be neither relayed (UTF-8,
            # msgpack) nor shown faithfully, so nothing is started or stored.
            return await self._error(
                "invalid_text", _("The message contains invalid characters."), client_id
            )
        assert self.session_pk is not None
        if runs.local_run(self.session_pk) is not None:
            return await self._busy(client_id)
        retry_after = await limits.retry_after(self.rate_limit_key())
        if retry_after is not None:
            return await self._error(
                "rate_limited",
                _("Too many messages; wait a moment."),
                client_id,
                retry_after=retry_after,
            )
        try:
            active = await self._launch(text, client_id)
        except Exception:
            # A broken agent factory or an unreachable database: the browser learns that
            # nothing started, the details go to the log, and the socket stays usable.
            logger.exception("Could not start an agent run.")
            return await self._error("unavailable", _("The assistant is not available."), client_id)
        if active is None:
            await self._busy(client_id)

    async def _launch(self, text: str, client_id: str = "") -> runs.ActiveRun | None:
        assert self.session_pk is not None
        agent = await self.get_agent()
        session = DjangoSession(self.storage_id, owner=None if self.anonymous else self.user)
        streamed = StreamedRun(
            agent,
            text,
            run_id="",
            session=session,
            context=self.get_run_context(session),
            flush_seconds=app_settings.DELTA_FLUSH_SECONDS,
            flush_bytes=app_settings.DELTA_FLUSH_BYTES,
            max_bytes=app_settings.MAX_RUN_BYTES,
            client_id=client_id,
        )
        return await runs.launch_run(
            streamed,
            session_pk=self.session_pk,
            session_id=self.storage_id,
            channel_layer=self.channel_layer,
            user=self.user,
            client_id=client_id,
        )

    async def _cancel(self, content: dict[str, Any]) -> None:
        assert self.session_pk is not None
        message: dict[str, Any] = {"type": "agent.cancel"}
        if isinstance(content.get("run_id"), str):
            message["run_id"] = content["run_id"]
        await runs.retrying(
            self.channel_layer.group_send, runs.control_group_name(self.session_pk), message
        )
        # A run whose worker died cannot answer: if its lease has expired, end it now
        # (run.failed/worker_lost reaches every socket); otherwise the sweeper does.
        await runs.expire_lost_runs(self.channel_layer, self.session_pk)

    async def _busy(self, client_id: str = "") -> None:
        await self._error(
            "busy", _("A reply is still being written; wait or cancel it."), client_id
        )

    async def _error(
        self, code: str, message: str, client_id: str | None = None, **fields: Any
    ) -> None:
        frame: dict[str, Any] = {"type": "error", "code": code, "message": message, **fields}
        if client_id:
            frame["client_id"] = client_id
        await self.send_json(frame)

    # Extension points --------------------------------------------------------------

    @property
    def user(self) -> Any:
        return self.scope.get("user")

    async def get_agent(self) -> Agent[Any]:
        """The agent for this connection; by default ``AGENT_SESSIONS["AGENT"]``."""
        return await load_agent(self.scope)

    def get_run_context(self, session: DjangoSession) -> Any:
        """The object tools receive as ``ctx.context``."""
        return runs.AgentRunContext(
            user=self.user, session_id=self.storage_id, session=session, scope=self.scope
        )

    def rate_limit_key(self) -> str:
        if self.anonymous:
            return f"anonymous:{self.storage_id.split(':')[1]}"
        return f"user:{self.user.pk}"

    # History and catch-up ----------------------------------------------------------

    async def _send_history(self) -> None:
        assert self.session_pk is not None
        history = await self._load_history(up_to_item_id=None)
        if history.active_run_id is None:
            return await self._send_history_frame(history, None)
        # A run is in flight (here or in another worker): ask it where it is, and hold
        # its events until the answer (or the timeout) so nothing is shown twice.
        self._buffer = []
        await runs.retrying(
            self.channel_layer.group_send,
            runs.control_group_name(self.session_pk),
            {"type": "agent.catchup", "reply_to": self.channel_name},
        )
        self._catchup_timer = asyncio.create_task(self._catchup_timeout())

    async def _load_history(
        self, up_to_item_id: int | None, before_id: int | None = None
    ) -> run_records.History:
        assert self.session_pk is not None
        budget = app_settings.HISTORY_MAX_BYTES
        history: run_records.History = await database_sync_to_async(run_records.load_history)(
            self.session_pk,
            up_to_item_id=up_to_item_id,
            limit=app_settings.HISTORY_LIMIT,
            max_chars=budget,
            before_id=before_id,
        )
        return history

    def _history_fields(self, history: run_records.History) -> dict[str, Any]:
        """The items of a history frame or page, within ``HISTORY_MAX_BYTES``."""
        items = display.history_items(history.entries, history.runs)
        has_more = history.has_more
        budget = app_settings.HISTORY_MAX_BYTES
        if budget is not None:
            # The query bounded the stored JSON's characters; this bounds the frame's bytes.
            sizes = [display.frame_size(item) + 1 for item in items]
            total = sum(sizes)
            while len(items) > 1 and total > budget:
                total -= sizes.pop(0)
                items.pop(0)
                has_more = True
        oldest = next((item["id"] for item in items if item.get("id") is not None), None)
        return {"items": items, "has_more": has_more, "oldest_id": oldest}

    async def _send_history_frame(self, history: run_records.History, active_run: Any) -> None:
        last_id = history.entries[-1].id if history.entries else None
        await self.send_json(
            {
                "type": "history",
                "protocol": PROTOCOL_VERSION,
                **self._history_fields(history),
                "last_item_id": last_id,
                "active_run": active_run,
            }
        )

    async def _load_older(self, content: dict[str, Any]) -> None:
        before = content.get("before")
        if isinstance(before, bool) or not isinstance(before, int) or before < 1:
            return await self._error("invalid_frame", _("before must be an item id."))
        history = await self._load_history(up_to_item_id=None, before_id=before)
        await self.send_json(
            {"type": "history.page", "before": before, **self._history_fields(history)}
        )

    async def agent_snapshot(self, message: dict[str, Any]) -> None:
        if self._buffer is None:
            return  # late answer after the timeout, or to an earlier request
        snapshot = message["snapshot"]
        history = await self._load_history(up_to_item_id=snapshot.pop("history_item_id"))
        self._sequencer.expect(snapshot["run_id"], snapshot["seq"] + 1)
        await self._send_history_frame(history, snapshot)
        await self._flush_buffer()

    async def _catchup_timeout(self) -> None:
        await asyncio.sleep(CATCHUP_TIMEOUT)
        await runs.retrying(
            self.channel_layer.send, self.channel_name, {"type": "agent.catchup_timeout"}
        )

    async def agent_catchup_timeout(self, message: dict[str, Any]) -> None:
        if self._buffer is None:
            return
        # The run did not answer: it ended meanwhile, or its worker is gone.
        history = await self._load_history(up_to_item_id=None)
        active = None if history.active_run_id is None else {"run_id": history.active_run_id}
        if active is None:
            self._buffer = []  # all of it is in the history just read
        await self._send_history_frame(history, active)
        await self._flush_buffer()

    async def _flush_buffer(self) -> None:
        buffered, self._buffer = self._buffer or [], None
        for event in buffered:
            await self._relay(event)

    # Messages from runs, through the channel layer --------------------------------

    async def agent_event(self, message: dict[str, Any]) -> None:
        event = message["event"]
        if self._buffer is not None:
            if len(self._buffer) < _MAX_BUFFERED:
                self._buffer.append(event)
            return
        await self._relay(event)

    async def _relay(self, event: dict[str, Any]) -> None:
        for ready in self._sequencer.push(event):
            await self.send_json(ready)
        run_id = str(event.get("run_id", ""))
        if self._sequencer.has_gap(run_id) and run_id not in self._gap_timers:
            self._gap_timers[run_id] = asyncio.create_task(self._close_gap(run_id))

    async def _close_gap(self, run_id: str) -> None:
        """An event is late or lost: wait a little for it, then go on without it."""
        await asyncio.sleep(GAP_TIMEOUT)
        del self._gap_timers[run_id]
        for ready in self._sequencer.give_up_gap(run_id):
            await self.send_json(ready)

    async def agent_presence(self, message: dict[str, Any]) -> None:
        await runs.retrying(self.channel_layer.send, message["reply_to"], {"type": "agent.here"})

    @classmethod
    async def encode_json(cls, content: Any) -> str:
        return display.frame_text(content)


def _is_disconnected(error: BaseException) -> bool:
    """Whether ``error`` is the server refusing a send on a socket that is closing."""
    try:
        from autobahn.exception import Disconnected
    except ImportError:  # another ASGI server than daphne
        return False
    return isinstance(error, Disconnected)
