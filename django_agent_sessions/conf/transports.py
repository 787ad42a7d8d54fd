"""Which transport the packaged chat uses: the websocket (Channels) or SSE (plain HTTP).

``AGENT_SESSIONS["TRANSPORT"]`` when set; else the websocket when Channels is installed
and the project configures ``CHANNEL_LAYERS`` (it then has the wiring the websocket
needs), else Server-Sent Events, which any ASGI server serves.
"""

from __future__ import annotations

import importlib.util

from django.conf import settings

from django_agent_sessions.conf import app_settings

WEBSOCKET, SSE = "websocket", "sse"


def chat_transport() -> str:
    chosen = app_settings.TRANSPORT
    if chosen:
        return str(chosen)
    configured = bool(getattr(settings, "CHANNEL_LAYERS", None))
    return WEBSOCKET if configured and channels_installed() else SSE


def channels_installed() -> bool:
    return importlib.util.find_spec("channels") is not None
