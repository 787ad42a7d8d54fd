"""What both transports use to stream a conversation: runs, their events and their ends,
the channel layer, and following a conversation for one tab.

Transport-neutral: nothing here imports ``websocket/`` (the Channels consumer and its
routes) or ``sse/`` (the HTTP views). A transport reads its client's frames, hands them
to ``actions``, and writes the events a ``follower.Follower`` gives it; see
docs/architecture.md for the module table.
"""
