"""Following: one tab following one conversation, whichever transport carries it.

``Follower`` opens (waits for the conversation, joins its groups, sends the history),
dispatches what the layer brings, and closes; ``Relay`` relays a run's events in order
and recovers what the layer lost; ``Watch`` is what the tab knows of the run it follows
and the timers that make it check; ``history`` reads the history frame and its pages.
The top room: it uses ``visiting``, ``running``, ``delivery`` and ``wire``.
"""
