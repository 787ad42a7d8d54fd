"""The websocket consumer's public path (``django_agent_sessions.consumers``).

It lives in ``websocket/consumer.py`` with the rest of the streaming layer.
"""

from django_agent_sessions.streaming import anonymous_owner
from django_agent_sessions.websocket.consumer import AgentSessionConsumer

__all__ = ["AgentSessionConsumer", "anonymous_owner"]
