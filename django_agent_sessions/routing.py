"""The websocket routes' public path (``django_agent_sessions.routing``).

They live in ``websocket/routing.py`` with the rest of the streaming layer.
"""

from django_agent_sessions.websocket.routing import websocket_urlpatterns

__all__ = ["websocket_urlpatterns"]
