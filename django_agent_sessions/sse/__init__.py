"""The chat's runs over plain HTTP: Server-Sent Events down, JSON POSTs up.

For projects served by a plain ASGI server (uvicorn, hypercorn, gunicorn with uvicorn
workers), with or without Channels. The same runs, wire events, ownership, size and rate
rules as the websocket (the run's life is the wing's, ``websocket.actions`` and
``websocket.relay``); only the carrying differs:

- ``framing``: the ``text/event-stream`` text of a frame, heartbeats;
- ``visitor``: who asks, from an ``HttpRequest``, for ``websocket.actions``;
- ``stream``: one browser's stream of a conversation (history, then live events);
- ``views``: ``GET .../events/`` and the POST endpoints of the client frames.
"""
