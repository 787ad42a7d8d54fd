"""Who asks, in one conversation, whichever transport carries them.

A ``Visitor`` is the ``actions.Participant`` of both transports: the websocket consumer
builds one from its scope, the HTTP views from their request. Signed-in users open
conversations by their id and own what they create; with ``ALLOW_ANONYMOUS``, a visitor
with a saved Django session gets ids namespaced by a keyed hash of its session key
(``access``). The agent, the run context and the rate-limit key are decided here once,
for both transports, from ``AGENT_SESSIONS["AGENT"]`` and ``["RUN_CONTEXT"]``; a websocket
consumer subclass that overrides ``get_agent`` or ``get_run_context`` (the older way,
kept) is plugged in as ``agent_source`` or ``context_source``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agents import Agent

from django_agent_sessions.conf import app_settings
from django_agent_sessions.session import DjangoSession
from django_agent_sessions.store import conversations, first_messages
from django_agent_sessions.store.orders import Order
from django_agent_sessions.store.runs import StartedRun
from django_agent_sessions.streaming.delivery import groups
from django_agent_sessions.streaming.running import dispatch
from django_agent_sessions.streaming.visiting import access
from django_agent_sessions.streaming.visiting.agent_loading import load_agent
from django_agent_sessions.streaming.visiting.context import AgentRunContext, run_context


class Visitor:
    """A visitor in one conversation (see the module).

    Raises ``ValueError`` for an id that cannot name a conversation, or an anonymous
    visitor without a saved Django session (nothing to bind its conversations to).
    """

    def __init__(
        self,
        user: Any,
        requested_id: str,
        *,
        scope: dict[str, Any],
        channel_layer: Any,
        session_key: str | None = None,
    ) -> None:
        self.user = user
        self.scope = scope
        self.channel_layer = channel_layer
        self.anonymous = user is None or not user.is_authenticated
        self.anonymous_key = ""
        if self.anonymous:
            if not session_key:
                raise ValueError("anonymous visitors need a saved Django session")
            self.anonymous_key = access.anonymous_owner(session_key)
            requested_id = access.anonymous_session_id(self.anonymous_key, requested_id)
        self.session_id = requested_id
        DjangoSession(self.session_id)  # validates the id
        # None until the conversation exists (found, created, or joined by a follower).
        self.conversation_pk: int | None = None
        self.temporary = False  # a temporary chat, once found or created

        self.agent_source: Callable[[], Awaitable[Agent[Any]]] | None = None
        self.context_source: Callable[[DjangoSession], Any] | None = None

    @property
    def owner_id(self) -> Any:
        return None if self.anonymous else self.user.pk

    async def get_agent(self) -> Agent[Any]:
        if self.agent_source is not None:
            return await self.agent_source()
        return await load_agent(self.scope)

    def get_run_context(self, session: DjangoSession) -> Any:
        if self.context_source is not None:
            return self.context_source(session)
        return self.configured_run_context(session)

    def configured_run_context(self, session: DjangoSession) -> Any:
        """``AGENT_SESSIONS["RUN_CONTEXT"]`` applied to the default context."""
        return run_context(self.default_run_context(session))

    def default_run_context(self, session: DjangoSession) -> AgentRunContext:
        """What tools receive as ``ctx.context`` unless the project says otherwise."""
        return AgentRunContext(
            user=self.user, session_id=self.session_id, session=session, scope=self.scope
        )

    def rate_limit_key(self) -> str:
        if self.anonymous:
            return f"anonymous:{self.anonymous_key}"
        return f"user:{self.user.pk}"

    async def find_conversation(self) -> None:
        """Look the conversation up (writes nothing); ``SessionOwnershipError`` if it
        is someone else's."""
        found = await conversations.afind_conversation(self.session_id, owner_id=self.owner_id)
        self.conversation_pk = None if found is None else found.pk
        self.temporary = found is not None and found.temporary

    def find_conversation_now(self) -> None:
        """``find_conversation`` from sync code already on the database thread."""
        found = conversations.find_conversation(self.session_id, owner_id=self.owner_id)
        self.conversation_pk = None if found is None else found.pk
        self.temporary = found is not None and found.temporary

    async def create_conversation(
        self,
        *,
        agent_name: str,
        client_id: str,
        order: Order | None = None,
        temporary: bool = False,
    ) -> StartedRun | None:
        """The first message: create the conversation (the visitor's) with its run's
        record (and ``order``, for a task) in one hop (``store.first_messages``), and
        bring every tab of the visitor open on its id into it
        (``groups.announce_creation``) before the run publishes."""
        lease = app_settings.RUN_LEASE_SECONDS if order is None else dispatch.queue_seconds()
        opened, started = await first_messages.open_and_start(
            self.session_id,
            owner_id=self.owner_id,
            agent_name=agent_name,
            lease_seconds=float(lease),
            client_id=client_id,
            order=order,
            temporary=temporary,
            user=self.user,
        )
        self.conversation_pk, self.temporary = opened.pk, opened.temporary
        await groups.announce_creation(
            self.channel_layer,
            self.session_id,
            self.owner_id,
            opened.pk,
            created=opened.created,
            temporary=opened.temporary,
            offloaded=order is not None,
        )
        return started
