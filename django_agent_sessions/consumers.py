"""The websocket layer: authenticate, authorise, validate frames, relay. Nothing more.

Running the agent lives in ``runs.py``/``streaming.py``, database work in
``run_records.py`` (reached through ``database_sync_to_async``). The wire protocol is
documented in ``docs/wire-protocol.md``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import datetime
from typing import Any

from agents import Agent
from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext as _

from django_agent_sessions import DjangoSession, display, limits, run_records, runs
from django_agent_sessions.agent_loading import load_agent
from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.sequencing import Sequencer
from django_agent_sessions.streaming import StreamedRun
from django_agent_sessions.websocket import approvals, paused

logger = logging.getLogger(__name__)

CLOSE_ANONYMOUS = 4401
CLOSE_FORBIDDEN = 4403
CATCHUP_TIMEOUT = 1.0
# A socket ends an expired waiting run this long after its expiry.
EXPIRY_MARGIN = 0.5
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

    async def connect(self) -> None:
        self._sequencer = Sequencer()
        self._gap_timers: dict[str, asyncio.Task[None]] = {}
        self._buffer: list[dict[str, Any]] | None = None  # while waiting for a snapshot
        self._expiry_timer: asyncio.Task[None] | None = None
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
        await self.channel_layer.group_add(runs.group_name(opened.pk), self.channel_name)
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
        timers = [
            getattr(self, "_catchup_timer", None),
            getattr(self, "_expiry_timer", None),
            *getattr(self, "_gap_timers", {}).values(),
        ]
        for timer in timers:
            if timer is not None:
                timer.cancel()
        if self.session_pk is None:
            return
        await self.channel_layer.group_discard(runs.group_name(self.session_pk), self.channel_name)
        await self.channel_layer.group_send(
            runs.control_group_name(self.session_pk), {"type": "agent.left"}
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
        if content["type"] == "approval":
            return await self._approval(content)
        return await self._error("unknown_type", _("Unknown frame type."))

    async def _user_message(self, content: dict[str, Any]) -> None:
        text = content.get("text")
        if not isinstance(text, str) or not text.strip():
            return await self._error("empty_text", _("Write a message first."))
        assert self.session_pk is not None
        if runs.local_run(self.session_pk) is not None:
            return await self._busy()
        await self._expire_overdue()
        if not await limits.allow_run(self.rate_limit_key()):
            return await self._error("rate_limited", _("Too many messages; wait a moment."))
        try:
            active = await self._launch(text)
        except Exception:
            # A broken agent factory or an unreachable database: the browser learns that
            # nothing started, the details go to the log, and the socket stays usable.
            logger.exception("Could not start an agent run.")
            return await self._error("unavailable", _("The assistant is not available."))
        if active is None:
            await self._busy()

    async def _launch(self, text: str) -> runs.ActiveRun | None:
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
        )
        return await runs.launch_run(
            streamed,
            session_pk=self.session_pk,
            session_id=self.storage_id,
            channel_layer=self.channel_layer,
            user=self.user,
        )

    async def _cancel(self, content: dict[str, Any]) -> None:
        assert self.session_pk is not None
        # A run waiting for approvals has no task to cancel: it is ended in the database.
        if await runs.end_waiting_run(
            self.session_pk,
            reason=approvals.CANCELLED,
            channel_layer=self.channel_layer,
            user=self.user,
        ):
            return
        message: dict[str, Any] = {"type": "agent.cancel"}
        if isinstance(content.get("run_id"), str):
            message["run_id"] = content["run_id"]
        await self.channel_layer.group_send(runs.control_group_name(self.session_pk), message)

    async def _approval(self, content: dict[str, Any]) -> None:
        """A decision on a tool call the conversation's waiting run asks about."""
        assert self.session_pk is not None
        call_id, approve = content.get("call_id"), content.get("approve")
        message = content.get("message", "")
        if (
            not isinstance(call_id, str)
            or not 0 < len(call_id) <= 255
            or not isinstance(approve, bool)
            or not isinstance(message, str)
            or len(message) > approvals.MAX_MESSAGE_CHARS
        ):
            return await self._error(
                "invalid_approval",
                _("An approval needs a call_id, approve (true or false) and an optional message."),
            )
        try:
            decided = await database_sync_to_async(approvals.decide)(
                self.session_pk,
                call_id,
                approve=approve,
                message=message,
                user_id=None if self.anonymous else self.user.pk,
                lease_seconds=float(app_settings.RUN_LEASE_SECONDS),
            )
        except Exception:
            logger.exception("Could not record an approval decision.")
            return await self._error("unavailable", _("The assistant is not available."))
        if decided is None:
            return await self._error(
                "unknown_approval", _("There is no pending approval with this call id.")
            )
        resolved = {
            "type": "approval.resolved",
            "run_id": decided.run_id,
            "call_id": decided.call_id,
            "approve": decided.approve,
        }
        await self.channel_layer.group_send(
            runs.group_name(self.session_pk), {"type": "agent.event", "event": resolved}
        )
        if decided.resume is not None:
            await self._resume(decided.resume)

    async def _resume(self, resume: approvals.Resume) -> None:
        """Resume a run whose calls are all decided, here: this worker claimed it."""
        assert self.session_pk is not None
        try:
            agent = await self.get_agent()
            session = DjangoSession(self.storage_id, owner=None if self.anonymous else self.user)
            state = await paused.restore(
                agent, resume.state, resume.decisions, context=self.get_run_context(session)
            )
            streamed = StreamedRun(
                agent,
                "",
                run_id=resume.run_id,
                session=session,
                flush_seconds=app_settings.DELTA_FLUSH_SECONDS,
                flush_bytes=app_settings.DELTA_FLUSH_BYTES,
                max_bytes=app_settings.MAX_RUN_BYTES,
                state=state,
                first_seq=resume.seq,
            )
            await runs.resume_run(
                streamed,
                resume,
                session_pk=self.session_pk,
                session_id=self.storage_id,
                channel_layer=self.channel_layer,
                user=self.user,
            )
        except Exception:
            logger.exception("Could not resume run %s.", resume.run_id)
            await runs.fail_claimed_run(
                resume, session_pk=self.session_pk, channel_layer=self.channel_layer, user=self.user
            )

    async def _expire_overdue(self) -> None:
        """End the conversation's waiting run if it is past its expiry."""
        assert self.session_pk is not None
        if await database_sync_to_async(approvals.overdue)(self.session_pk):
            await runs.end_waiting_run(
                self.session_pk,
                reason=approvals.EXPIRED,
                channel_layer=self.channel_layer,
                user=self.user,
                only_overdue=True,
            )

    def _watch_expiry(self, expires_at: Any) -> None:
        """While this socket shows a waiting run, it ends the run when it expires (every
        socket of the conversation does; the database lets one of them do it)."""
        if not isinstance(expires_at, str) or self._expiry_timer is not None:
            return
        try:
            when = datetime.fromisoformat(expires_at)
        except ValueError:
            return
        delay = max(0.0, (when - timezone.now()).total_seconds()) + EXPIRY_MARGIN
        self._expiry_timer = asyncio.create_task(self._expire_later(delay))

    async def _expire_later(self, delay: float) -> None:
        await asyncio.sleep(delay)
        await self.channel_layer.send(self.channel_name, {"type": "agent.expire"})

    async def agent_expire(self, message: dict[str, Any]) -> None:
        self._expiry_timer = None
        await self._expire_overdue()

    async def _busy(self) -> None:
        await self._error("busy", _("A reply is still being written; wait or cancel it."))

    async def _error(self, code: str, message: str) -> None:
        await self.send_json({"type": "error", "code": code, "message": message})

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
        await self._expire_overdue()
        history = await self._load_history(up_to_item_id=None)
        if history.active_run_id is None:
            return await self._send_history_frame(history.items, None)
        # A run is in flight (here or in another worker): ask it where it is, and hold
        # its events until the answer (or the timeout) so nothing is shown twice.
        self._buffer = []
        await self.channel_layer.group_send(
            runs.control_group_name(self.session_pk),
            {"type": "agent.catchup", "reply_to": self.channel_name},
        )
        self._catchup_timer = asyncio.create_task(self._catchup_timeout())

    async def _load_history(self, up_to_item_id: int | None) -> run_records.History:
        assert self.session_pk is not None
        history: run_records.History = await database_sync_to_async(run_records.load_history)(
            self.session_pk, up_to_item_id=up_to_item_id, limit=app_settings.HISTORY_LIMIT
        )
        return history

    async def _send_history_frame(self, items: list[Any], active_run: Any) -> None:
        assert self.session_pk is not None
        pending = await database_sync_to_async(approvals.pending_approvals)(self.session_pk)
        for call in pending:
            # The waiting run's next events continue its numbering.
            self._sequencer.expect(call.run_id, call.seq + 1)
            self._watch_expiry(call.expires_at)
        await self.send_json(
            {
                "type": "history",
                "items": display.display_items(items),
                "active_run": active_run,
                "pending_approvals": [call.wire() for call in pending],
            }
        )

    async def agent_snapshot(self, message: dict[str, Any]) -> None:
        if self._buffer is None:
            return  # late answer after the timeout, or to an earlier request
        snapshot = message["snapshot"]
        history = await self._load_history(up_to_item_id=snapshot.pop("history_item_id"))
        self._sequencer.expect(snapshot["run_id"], snapshot["seq"] + 1)
        await self._send_history_frame(history.items, snapshot)
        await self._flush_buffer()

    async def _catchup_timeout(self) -> None:
        await asyncio.sleep(CATCHUP_TIMEOUT)
        await self.channel_layer.send(self.channel_name, {"type": "agent.catchup_timeout"})

    async def agent_catchup_timeout(self, message: dict[str, Any]) -> None:
        if self._buffer is None:
            return
        # The run did not answer: it ended meanwhile, or its worker is gone.
        history = await self._load_history(up_to_item_id=None)
        active = None if history.active_run_id is None else {"run_id": history.active_run_id}
        if active is None:
            self._buffer = []  # all of it is in the history just read
        await self._send_history_frame(history.items, active)
        await self._flush_buffer()

    async def _flush_buffer(self) -> None:
        buffered, self._buffer = self._buffer or [], None
        for event in buffered:
            await self._relay(event)

    # Messages from runs, through the channel layer --------------------------------

    async def agent_event(self, message: dict[str, Any]) -> None:
        event = message["event"]
        if event.get("type") == "approval.requested":
            self._watch_expiry(event.get("expires_at"))
        elif event.get("type") in runs.TERMINAL_EVENTS and self._expiry_timer is not None:
            self._expiry_timer.cancel()
            self._expiry_timer = None
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
        await self.channel_layer.send(message["reply_to"], {"type": "agent.here"})

    @classmethod
    async def encode_json(cls, content: Any) -> str:
        return display.frame_text(content)
