"""The websocket transport: the Channels consumer and its routes, nothing more.

- ``consumer``: ``AgentSessionConsumer``: authenticate, read frames, write events
- ``routing``: its URL patterns

Everything it shares with the HTTP transport (runs, events, following a conversation)
lives in ``django_agent_sessions.streaming``. Nothing outside this package imports it,
except the public re-exports ``django_agent_sessions.consumers`` and
``django_agent_sessions.routing``.
"""
