"""Wire: the protocol of docs/wire-protocol.md, as data and as text.

``protocol`` (every frame as data, the JSON Schema's source), ``encoding`` (frames and
display items as browsers get them), ``frames`` (the client's frames checked) and
``text`` (strings every channel can carry). The bottom room: no I/O, no other room.
"""
