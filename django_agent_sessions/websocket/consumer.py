"""The websocket consumer: authenticate, authorise, validate frames, relay. Nothing more.
(Slightly longer than 300 lines: the approval frame's validation lives here too.)

Running the agent lives in ``runs``/``events``, database work in ``records`` (one hop
per operation). The wire protocol is documented in ``docs/wire-protocol.md``.

Names used for a conversation: ``session_id`` is the id it is stored under (the URL's
id, namespaced for anonymous sockets), ``conversation_pk`` its primary key, from which
channel-layer group names are derived.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from agents import Agent
from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext as _

from django_agent_sessions import DjangoSession
from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.websocket import (
    approvals,
    fanout,
    layer,
    lost,
    paused,
    ratelimit,
    records,
    runs,
    waiting,
    wire,
)
from django_agent_sessions.websocket.agent_loading import load_agent
from django_agent_sessions.websocket.closing import ClosingSafeMixin
from django_agent_sessions.websocket.context import AgentRunContext
from django_agent_sessions.websocket.inbox import InboxMixin
from django_agent_sessions.websocket.relay import RelayMixin

logger = logging.getLogger(__name__)

CLIENT_ID_MAX_LENGTH = 64
CLOSE_ANONYMOUS = 4401
CLOSE_FORBIDDEN = 4403
ANONYMOUS_PREFIX = "anon"
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


class _InvalidJson(ValueError):
    pass


class AgentSessionConsumer(InboxMixin, ClosingSafeMixin, RelayMixin, AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    """Chat with the configured agent in the conversation named by the URL."""

    conversation_pk: int | None = None  # None until the conversation exists
    accepted = False
    session_id = ""
    anonymous_key = ""  # the keyed hash of an anonymous socket's Django session key
    _holds_sweeper = False  # holds lost.sweeper while connected

    async def connect(self) -> None:
        self.start_relay()
        user = self.scope.get("user")
        self.anonymous = user is None or not user.is_authenticated
        if self.anonymous and not app_settings.ALLOW_ANONYMOUS:
            return await self._refuse(CLOSE_ANONYMOUS)
        requested = self.scope["url_route"]["kwargs"]["session_id"]
        try:
            self.session_id = self.stored_session_id(requested)
            DjangoSession(self.session_id)  # validates the id
            # Connecting writes nothing: a new id stays only an id until its first message.
            opened = await records.find_conversation(self.session_id, owner_id=self.owner_id)
        except (SessionOwnershipError, ValueError):
            return await self._refuse(CLOSE_FORBIDDEN)
        self.accepted = True
        await self.accept()
        lost.sweeper.acquire(self.channel_layer)
        self._holds_sweeper = True
        if opened is None:
            await layer.retrying(
                self.channel_layer.group_add,
                runs.pending_group_name(self.session_id),
                self.channel_name,
            )
            await self.send_empty_history()
            return
        await self._join(opened.pk)
        await self.send_history()

    @property
    def owner_id(self) -> Any:
        return None if self.anonymous else self.scope["user"].pk

    async def _join(self, conversation_pk: int) -> None:
        self.conversation_pk = conversation_pk
        self.watch(conversation_pk)  # this process's runs: straight to the inbox
        await layer.retrying(
            self.channel_layer.group_add, runs.group_name(conversation_pk), self.channel_name
        )

    async def _create_conversation(self) -> None:
        """The first message: create the conversation, and bring every tab open on it."""
        opened = await records.open_conversation(self.session_id, owner_id=self.owner_id)
        pending = runs.pending_group_name(self.session_id)
        await layer.retrying(self.channel_layer.group_discard, pending, self.channel_name)
        await self._join(opened.pk)
        await layer.retrying(
            self.channel_layer.group_send,
            pending,
            {"type": "agent.created", "conversation_pk": opened.pk},
        )

    async def agent_created(self, message: dict[str, Any]) -> None:
        """Another tab's first message created this socket's conversation: join it."""
        if self.conversation_pk is not None:
            return
        await layer.retrying(
            self.channel_layer.group_discard,
            runs.pending_group_name(self.session_id),
            self.channel_name,
        )
        await self._join(int(message["conversation_pk"]))
        # The first run may have started before this socket joined (in another worker,
        # its events then go through the layer only once a socket follows it): a
        # catch-up shows it from its beginning. Before it starts, there is nothing to say.
        await self.send_history(unless_empty=True)

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
        self.anonymous_key = anonymous_owner(key)
        return f"{ANONYMOUS_PREFIX}:{self.anonymous_key}:{requested}"

    async def rejoin_groups(self) -> None:
        if self.conversation_pk is not None:
            await layer.retrying(
                self.channel_layer.group_add,
                runs.group_name(self.conversation_pk),
                self.channel_name,
            )

    async def disconnect(self, code: int) -> None:
        self.stop_relay()
        self._gone = True
        if self._holds_sweeper:
            self._holds_sweeper = False
            lost.sweeper.release()
        if self.conversation_pk is None:
            if self.accepted:
                await layer.retrying(
                    self.channel_layer.group_discard,
                    runs.pending_group_name(self.session_id),
                    self.channel_name,
                )
            return
        self.stop_watching()
        await layer.retrying(
            self.channel_layer.group_discard,
            runs.group_name(self.conversation_pk),
            self.channel_name,
        )
        await layer.retrying(
            self.channel_layer.group_send,
            runs.control_group_name(self.conversation_pk),
            {"type": "agent.left"},
        )

    async def dispatch(self, message: dict[str, Any]) -> None:
        if message.get("type") in _RELAYED:
            await getattr(self, get_handler_name(message))(message)
            return
        await super().dispatch(message)

    # Frames from the browser ------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if not self.accepted:
            return  # a refused socket, closing: its frames are never read
        if text_data is None:
            return await self._error("invalid_frame", _("Send JSON text frames."))
        if len(text_data.encode("utf-8", "replace")) > app_settings.MAX_MESSAGE_BYTES:
            return await self._error("too_large", _("The message is too long."))
        try:
            await super().receive(text_data=text_data)  # decode_json, then receive_json
        except _InvalidJson:
            await self._error("invalid_json", _("The frame is not valid JSON."))

    @classmethod
    async def decode_json(cls, text_data: str) -> Any:
        try:
            return json.loads(text_data)
        except (ValueError, RecursionError) as error:  # RecursionError: nested brackets
            raise _InvalidJson from error

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict) or not isinstance(content.get("type"), str):
            return await self._error("invalid_frame", _("A frame is a JSON object with a type."))
        if content["type"] == "user_message":
            return await self._user_message(content)
        if content["type"] == "cancel":
            return await self._cancel(content)
        if content["type"] == "approval":
            return await self._approval(content)
        if content["type"] == "load_older":
            return await self.send_older(content.get("before"))
        return await self._error("unknown_type", _("Unknown frame type."))

    async def _user_message(self, content: dict[str, Any]) -> None:
        client_id = content.get("client_id")
        if client_id is not None and (
            not isinstance(client_id, str)
            or not 0 < len(client_id) <= CLIENT_ID_MAX_LENGTH
            or not client_id.isprintable()
        ):
            return await self._error("invalid_frame", _("client_id must be a short string."))
        client_id = client_id or ""
        text = content.get("text")
        if not isinstance(text, str) or not text.strip():
            return await self._error("empty_text", _("Write a message first."), client_id)
        if not wire.is_valid_unicode(text) or "\x00" in text:
            # A lone surrogate (half an emoji) or NUL: it could be neither relayed (UTF-8,
            # msgpack) nor stored and shown faithfully, so nothing starts or is stored.
            return await self._error(
                "invalid_text", _("The message contains invalid characters."), client_id
            )
        if self.conversation_pk is not None:
            if runs.local_run(self.conversation_pk) is not None:
                return await self._busy(client_id)
            await self.expire_overdue()
        # Counted here, where writing begins: connecting writes nothing, so is not counted.
        retry_after = await ratelimit.retry_after(self.rate_limit_key())
        if retry_after is not None:
            return await self._error(
                "rate_limited",
                _("Too many messages; wait a moment."),
                client_id,
                retry_after=retry_after,
            )
        try:
            if self.conversation_pk is None:
                await self._create_conversation()  # owned by this user
            active = await self._launch(text, client_id)
        except SessionOwnershipError:
            # Someone else created this id between our connect and this first message.
            await self.close(code=CLOSE_FORBIDDEN)
            return
        except Exception:
            # A broken agent factory or an unreachable database: the browser learns that
            # nothing started, the details go to the log, and the socket stays usable.
            logger.exception("Could not start an agent run.")
            return await self._error("unavailable", _("The assistant is not available."), client_id)
        if active is None:
            await self._busy(client_id)

    async def _launch(self, text: str, client_id: str = "") -> runs.ActiveRun | None:
        request = await self._run_request(text, client_id)
        active = await runs.launch_run(request, channel_layer=self.channel_layer)
        if active is not None and active.started.expired:
            # The conversation's previous run had lost its worker: its sockets learn now.
            await lost.announce_expired(self.channel_layer, list(active.started.expired))
        return active

    async def _run_request(self, text: str, client_id: str = "") -> runs.RunRequest:
        assert self.conversation_pk is not None
        agent = await self.get_agent()
        session = DjangoSession(self.session_id, owner=None if self.anonymous else self.user)
        return runs.RunRequest(
            agent=agent,
            text=text,
            session=session,
            context=self.get_run_context(session),
            conversation_pk=self.conversation_pk,
            session_id=self.session_id,
            user=self.user,
            client_id=client_id,
        )

    async def _approval(self, content: dict[str, Any]) -> None:
        """A decision on a tool call the conversation's waiting run asks about."""
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
        if self.conversation_pk is None:  # not created yet: nothing can be waiting
            return await self._error(
                "unknown_approval", _("There is no pending approval with this call id.")
            )
        try:
            # A run past its expiry is ended (and every tab told) before anything counts.
            await self.expire_overdue()
            decided = await approvals.decide(
                self.conversation_pk,
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
        group = runs.group_name(self.conversation_pk)
        await fanout.broadcast(self.channel_layer, group, self.conversation_pk, resolved)
        if decided.resume is not None:
            await self._resume(decided.resume)

    async def _resume(self, resume: approvals.Resume) -> None:
        """Resume a run whose calls are all decided, here: this worker claimed it."""
        assert self.conversation_pk is not None
        try:
            request = await self._run_request("")
            state = await paused.restore(
                request.agent, resume.state, resume.decisions, context=request.context
            )
            await waiting.resume_run(request, resume, state, channel_layer=self.channel_layer)
        except Exception:
            logger.exception("Could not resume run %s.", resume.run_id)
            await waiting.fail_claimed_run(
                resume,
                conversation_pk=self.conversation_pk,
                channel_layer=self.channel_layer,
                user=self.user,
            )

    async def _cancel(self, content: dict[str, Any]) -> None:
        run_id = content.get("run_id")
        if run_id is not None and not isinstance(run_id, str):
            # Not "no run_id": a cancel meant for one run must never stop another.
            return await self._error("invalid_frame", _("run_id must be a string."))
        if self.conversation_pk is None:
            return  # nothing was ever started here
        # A run waiting for approvals has no task to cancel: it is ended in the database.
        if await waiting.end_waiting_run(
            self.conversation_pk,
            reason=approvals.CANCELLED,
            channel_layer=self.channel_layer,
            user=self.user,
        ):
            return
        message: dict[str, Any] = {"type": "agent.cancel"}
        if run_id is not None:
            message["run_id"] = run_id
        await layer.retrying(
            self.channel_layer.group_send, runs.control_group_name(self.conversation_pk), message
        )
        # A run whose worker died cannot answer: if its lease has expired, it ends now
        # (run.failed/worker_lost reaches every socket); otherwise the sweeper ends it.
        await lost.expire_lost_runs(self.channel_layer, self.conversation_pk)

    async def _busy(self, client_id: str = "") -> None:
        await self._error(
            "busy", _("A reply is still being written; wait or cancel it."), client_id
        )

    async def _error(self, code: str, message: str, client_id: str = "", **fields: Any) -> None:
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
