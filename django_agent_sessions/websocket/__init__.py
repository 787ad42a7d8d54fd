"""The streaming wing: agent runs streamed to browsers over Channels websockets.

- ``consumer``: the websocket consumer (thin: authenticate, validate, relay)
- ``routing``: its URL patterns
- ``runs``: a run as an asyncio task publishing to the conversation's sockets
- ``fanout``, ``inbox``: a run's events straight to its own worker's sockets, through
  the channel layer only for other workers
- ``events``: the SDK's stream turned into wire events (no websocket code)
- ``records``: run records and conversations, one database hop each
- ``approvals``, ``paused``, ``waiting``: tool calls that wait for a person's decision
  (database side, SDK side, and the runs that wait)
- ``wire``: frame encoding and display-ready items
- ``protocol``: every frame and display item as data, the source of the JSON Schema
- ``ordering``: putting a run's events back in order per socket
- ``ratelimit``, ``agent_loading``: starting runs
- ``context``: ``AgentRunContext``, what tools receive (public)
- ``checks``: system checks of the streaming settings and deployment

Nothing outside this package imports it, except the public re-exports
``django_agent_sessions.consumers`` and ``django_agent_sessions.routing``.
"""
