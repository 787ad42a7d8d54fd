"""The websocket routes' public path (``routing.py``) is the websocket transport's."""

from __future__ import annotations

from django_agent_sessions import routing
from django_agent_sessions.websocket import routing as websocket_routing


def test_the_public_routes_are_the_websocket_transports():
    assert routing.websocket_urlpatterns is websocket_routing.websocket_urlpatterns
    assert routing.__all__ == ["websocket_urlpatterns"]
