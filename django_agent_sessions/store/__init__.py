"""The app's database operations: the single owner of its raw SQL.

- ``items``: ``DjangoSession``'s operations, one transaction each.
- ``conversations``: opening, reading the history of, locking and emptying conversations.
- ``statements``: the SQL text, per database vendor.

Run records, which need no raw SQL, are written through the ``AgentRun`` QuerySet by
``websocket.records``.
"""
