"""The chat's runs over plain HTTP: Server-Sent Events down, JSON POSTs up.

For projects served by a plain ASGI server (uvicorn, hypercorn, gunicorn with uvicorn
workers), with or without Channels. The same runs, wire events, ownership, size and rate
rules as the websocket (both are ``streaming``'s: ``actions`` for what a client frame
does, a ``Follower`` for what a tab is shown); only the carrying differs:

- ``framing``: the ``text/event-stream`` text of a frame, heartbeats;
- ``visitor``: the ``streaming.Visitor`` of an ``HttpRequest``, found in one hop;
- ``stream``: one browser's stream of a conversation (a ``Follower`` behind a response);
- ``views``: ``GET .../events/`` and the POST endpoints of the client frames.
"""
