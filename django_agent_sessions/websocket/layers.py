"""Which channel layer the HTTP streams (and the runs they start) use.

A websocket consumer gets Channels' layer from Channels. An HTTP stream has no consumer
around it, so it asks here: Channels' default layer when the project configures one
(``CHANNEL_LAYERS``: then websockets and streams of every worker see the same runs),
else a layer inside this process (``local_layer``), which serves one worker.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings

from django_agent_sessions.websocket.local_layer import LocalChannelLayer

_local: LocalChannelLayer | None = None


def stream_layer() -> Any:
    """The channel layer for HTTP streams (see the module)."""
    configured = _channels_layer()
    return configured if configured is not None else local_layer()


def local_layer() -> LocalChannelLayer:
    global _local
    if _local is None:
        _local = LocalChannelLayer()
    return _local


def _channels_layer() -> Any:
    if not getattr(settings, "CHANNEL_LAYERS", None):
        return None
    try:
        from channels.layers import get_channel_layer
    except ImportError:  # configured for a project that also runs without Channels
        return None
    return get_channel_layer()


def _after_fork() -> None:
    # A forked worker has its own streams: its parent's queues are not its own.
    global _local
    _local = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
