"""Who is asking, from an HTTP request: a ``streaming.Visitor`` built from the request.

The same rules as a socket's: signed-in users open conversations by their id and own
what they create; with ``ALLOW_ANONYMOUS``, a visitor with a saved Django session gets
ids namespaced by a keyed hash of its session key.
"""

from __future__ import annotations

from django.http import HttpRequest

from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.layers import stream_layer
from django_agent_sessions.store.hops import hop
from django_agent_sessions.streaming import Visitor


class Refused(Exception):
    """The visitor may not open this conversation: the response's status."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _identified(request: HttpRequest, session_id: str) -> Visitor:
    """Who asks, and their conversation: the session, the user and the conversation
    read in one hop (each would otherwise be a hop of its own, all on one thread)."""
    user = request.user
    if not user.is_authenticated and not app_settings.ALLOW_ANONYMOUS:
        raise Refused(401)
    try:
        visitor = Visitor(
            user,
            session_id,
            scope=getattr(request, "scope", {}),
            channel_layer=stream_layer(),
            session_key=request.session.session_key if not user.is_authenticated else None,
        )
        visitor.find_conversation_now()
    except (SessionOwnershipError, ValueError):
        raise Refused(403) from None
    return visitor


visitor_for = hop(_identified)
"""The visitor, their conversation found (``conversation_pk`` None while it does not
exist). Raises ``Refused``: 401 anonymous where not allowed, 403 someone else's or an
anonymous visitor without a saved Django session."""
