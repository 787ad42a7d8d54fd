"""Which transport the packaged chat uses (``transports.py``)."""

from __future__ import annotations

from django_agent_sessions.conf import transports
from django_agent_sessions.conf.transports import SSE, WEBSOCKET, chat_transport

IN_MEMORY = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


def test_the_setting_decides_when_it_is_set(settings):
    settings.CHANNEL_LAYERS = IN_MEMORY
    settings.AGENT_SESSIONS = {"TRANSPORT": "sse"}
    assert chat_transport() == SSE
    settings.CHANNEL_LAYERS = {}
    settings.AGENT_SESSIONS = {"TRANSPORT": "websocket"}
    assert chat_transport() == WEBSOCKET


def test_else_the_websocket_needs_channels_and_a_channel_layer(settings, monkeypatch):
    settings.AGENT_SESSIONS = {}
    settings.CHANNEL_LAYERS = IN_MEMORY
    assert transports.channels_installed()
    assert chat_transport() == WEBSOCKET
    settings.CHANNEL_LAYERS = {}
    assert chat_transport() == SSE
    settings.CHANNEL_LAYERS = IN_MEMORY
    monkeypatch.setattr(transports, "channels_installed", lambda: False)
    assert chat_transport() == SSE
