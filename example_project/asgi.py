"""ASGI entry point: ``daphne example_project.asgi:application``.

HTTP goes to Django; websockets go through the origin check (browsers send cookies on
cross-site handshakes, so only pages served from ALLOWED_HOSTS may open one), then the
session/auth middleware (``scope["user"]``), then the app's websocket routes.
"""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
# Set up Django before importing anything that touches models (consumers, auth).
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from django_agent_sessions import Draining  # noqa: E402
from django_agent_sessions.routing import websocket_urlpatterns  # noqa: E402

if getattr(settings, "SERVE_STATIC", True):
    django_asgi_app = ASGIStaticFilesHandler(django_asgi_app)

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)
# SIGTERM drains: replies in progress finish, pages move to another worker.
application = Draining(application)
