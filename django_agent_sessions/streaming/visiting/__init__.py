"""Visiting: who asks, in which conversation, and what their frames do.

``Visitor`` is who asks (owner or anonymous namespace, agent, run context, rate-limit
key) for both transports; ``actions`` does what a client frame asks (send a message,
decide a tool call, cancel); ``access``, ``agent_loading``, ``context`` and ``ratelimit``
decide what starting a run needs. It uses ``running``, ``delivery`` and ``wire``.
"""
