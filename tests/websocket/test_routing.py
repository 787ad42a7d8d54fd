"""The websocket route (``websocket/routing.py``): a conversation's URL reaches the
consumer with its session id."""

from __future__ import annotations

from django.urls import URLResolver
from django.urls.resolvers import RegexPattern

from django_agent_sessions.websocket.consumer import AgentSessionConsumer
from django_agent_sessions.websocket.routing import websocket_urlpatterns


def test_a_conversations_url_resolves_to_the_consumer_with_its_session_id():
    resolver = URLResolver(RegexPattern(r"^/"), websocket_urlpatterns)
    match = resolver.resolve("/ws/agent-sessions/c-42/")
    assert match.url_name == "agent-session-websocket"
    assert match.kwargs == {"session_id": "c-42"}
    assert match.func.consumer_class is AgentSessionConsumer  # type: ignore[attr-defined]
    assert resolver.reverse("agent-session-websocket", session_id="c-1") == (
        "ws/agent-sessions/c-1/"
    )
