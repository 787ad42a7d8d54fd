"""Channel layers without Channels, and which one the HTTP streams (and the runs they start) use.

A websocket consumer gets Channels' layer from Channels. An HTTP stream has no consumer
around it, so it asks here:

1. Channels' default layer when the project configures one (``CHANNEL_LAYERS``): then
   websockets and streams of every worker see the same runs;
2. else, on PostgreSQL, its LISTEN/NOTIFY (``postgres``): several workers
   with no service besides the database they share already;
3. else a layer inside this process (``local``): one worker (SQLite, runserver).
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from django.conf import settings
from django.db import connections

from django_agent_sessions.layers.local import LocalChannelLayer
from django_agent_sessions.layers.postgres import PostgresChannelLayer

_local: LocalChannelLayer | None = None
_postgres: PostgresChannelLayer | None = None


def stream_layer() -> Any:
    """The channel layer for HTTP streams (see the module)."""
    kind = stream_layer_kind()
    if kind == "channels":
        return _channels_layer()
    return postgres_layer() if kind == "postgres" else local_layer()


def stream_layer_kind() -> str:
    """Which layer ``stream_layer()`` gives: "channels", "postgres" or "local"."""
    if getattr(settings, "CHANNEL_LAYERS", None) and _channels_installed():
        return "channels"
    return "postgres" if on_postgresql() and _psycopg3() else "local"


def on_postgresql() -> bool:
    return bool(connections["default"].vendor == "postgresql")


def local_layer() -> LocalChannelLayer:
    global _local
    if _local is None:
        _local = LocalChannelLayer()
    return _local


def postgres_layer() -> PostgresChannelLayer:
    global _postgres
    if _postgres is None:
        _postgres = PostgresChannelLayer()
    return _postgres


def _psycopg3() -> bool:
    """Whether psycopg 3 is installed (Django's backend may run on psycopg2 instead)."""
    return importlib.util.find_spec("psycopg") is not None


def _channels_installed() -> bool:
    # CHANNEL_LAYERS may be configured for a project that also runs without Channels.
    return importlib.util.find_spec("channels") is not None


def _channels_layer() -> Any:
    from channels.layers import get_channel_layer

    return get_channel_layer()


def _after_fork() -> None:
    # A forked worker has its own streams: its parent's queues are not its own.
    global _local, _postgres
    _local = _postgres = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
