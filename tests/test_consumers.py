"""The consumer's public path (``consumers.py``) names the websocket transport's."""

from __future__ import annotations

from django_agent_sessions import consumers
from django_agent_sessions.streaming import anonymous_owner
from django_agent_sessions.websocket.consumer import AgentSessionConsumer


def test_the_public_names_are_the_websocket_transports():
    assert consumers.AgentSessionConsumer is AgentSessionConsumer
    assert consumers.anonymous_owner is anonymous_owner
    assert sorted(consumers.__all__) == ["AgentSessionConsumer", "anonymous_owner"]
