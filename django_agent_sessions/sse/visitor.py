"""Who is asking, from an HTTP request: the ``Participant`` of ``websocket.actions``.

The same rules as a socket's (``websocket.access``): signed-in users open conversations
by their id and own what they create; with ``ALLOW_ANONYMOUS``, a visitor with a saved
Django session gets ids namespaced by a keyed hash of its session key.
"""

from __future__ import annotations

from typing import Any

from agents import Agent
from django.http import HttpRequest

from django_agent_sessions import DjangoSession
from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.layers import stream_layer
from django_agent_sessions.store import conversations
from django_agent_sessions.store.hops import hop
from django_agent_sessions.websocket import access, groups
from django_agent_sessions.websocket.agent_loading import load_agent
from django_agent_sessions.websocket.context import AgentRunContext


class Refused(Exception):
    """The visitor may not open this conversation: the response's status."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class HttpVisitor:
    """A visitor in one conversation, over HTTP (see ``websocket.actions.Participant``)."""

    def __init__(self, request: HttpRequest, user: Any, session_id: str) -> None:
        self.request = request
        self._user = user
        self.anonymous = user is None or not user.is_authenticated
        self.anonymous_key = ""
        self.channel_layer = stream_layer()
        self.conversation_pk: int | None = None
        self.session_id = self._stored_session_id(session_id)

    @property
    def user(self) -> Any:
        return self._user

    @property
    def owner_id(self) -> Any:
        return None if self.anonymous else self._user.pk

    @property
    def scope(self) -> dict[str, Any]:
        """The ASGI scope (an agent factory and tools may read it)."""
        return getattr(self.request, "scope", {})

    async def get_agent(self) -> Agent[Any]:
        return await load_agent(self.scope)

    def get_run_context(self, session: DjangoSession) -> Any:
        return AgentRunContext(
            user=self._user, session_id=self.session_id, session=session, scope=self.scope
        )

    def rate_limit_key(self) -> str:
        if self.anonymous:
            return f"anonymous:{self.anonymous_key}"
        return f"user:{self._user.pk}"

    async def create_conversation(self) -> None:
        opened = await conversations.aopen_conversation(self.session_id, owner_id=self.owner_id)
        self.conversation_pk = opened.pk
        await groups.announce_creation(
            self.channel_layer, self.session_id, self.owner_id, opened.pk, created=opened.created
        )

    def _stored_session_id(self, requested: str) -> str:
        if not self.anonymous:
            return requested
        key = self.request.session.session_key
        if not key:
            raise Refused(403)  # no saved Django session: nothing to bind the id to
        self.anonymous_key = access.anonymous_owner(key)
        return access.anonymous_session_id(self.anonymous_key, requested)


def _identified(request: HttpRequest, session_id: str) -> HttpVisitor:
    """Who asks, and their conversation: the session, the user and the conversation
    read in one hop (each would otherwise be a hop of its own, all on one thread)."""
    user = request.user
    if not user.is_authenticated and not app_settings.ALLOW_ANONYMOUS:
        raise Refused(401)
    visitor = HttpVisitor(request, user, session_id)
    try:
        DjangoSession(visitor.session_id)  # validates the id
        found = conversations.find_conversation(visitor.session_id, owner_id=visitor.owner_id)
    except (SessionOwnershipError, ValueError):
        raise Refused(403) from None
    visitor.conversation_pk = None if found is None else found.pk
    return visitor


visitor_for = hop(_identified)
"""The visitor, their conversation found (``conversation_pk`` None while it does not
exist). Raises ``Refused``: 401 anonymous where not allowed, 403 someone else's."""
