"""The app's database operations: every ORM write and transaction of the app lives here.

- ``items``: ``DjangoSession``'s operations, one transaction each.
- ``conversations``: opening, reading the history of, locking and emptying conversations.
- ``runs``: a run's record: start, lease, end (with an output for every open call), lost.
- ``approvals``: a run's pause for tool approvals, the decisions, its end undecided.
- ``pending``: reads of what waits for a decision, and a run's last recorded seq.
- ``removal``: clearing, deleting and pruning conversations (``retention``'s).
- ``importing``: an import's conversations and items, all or nothing (``transfer``'s).
- ``hops``: the async face of an operation, one hop into its sync function.
- ``statements``: the SQL text, per database vendor.
"""
