"""The ASGI application of the test suite: the documented websocket wiring."""

from __future__ import annotations

from django.core.asgi import get_asgi_application

django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from django_agent_sessions.routing import websocket_urlpatterns  # noqa: E402

websocket_application = AllowedHostsOriginValidator(
    AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
)

application = ProtocolTypeRouter({"http": django_asgi_app, "websocket": websocket_application})
