"""Websocket routes. Include them in your ASGI application (see docs/integration.md)::

from channels.auth import AuthMiddlewareStack
from channels.routing import ProtocolTypeRouter, URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from django_agent_sessions.routing import websocket_urlpatterns

application = ProtocolTypeRouter({
    "http": django_asgi_app,
    "websocket": AllowedHostsOriginValidator(
        AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
    ),
})
"""

from __future__ import annotations

from django.urls import path

from django_agent_sessions.websocket.consumer import AgentSessionConsumer

websocket_urlpatterns = [
    path(
        "ws/agent-sessions/<str:session_id>/",
        AgentSessionConsumer.as_asgi(),
        name="agent-session-websocket",
    ),
]
