"""Delivery: getting a run's events to every tab, in order, across workers.

``layer`` (channel-layer calls that survive a Redis restart), ``fanout`` (a run's events
handed to its own worker's tabs), ``groups`` (the groups' names and a tab's membership),
``socket_io`` (a tab's guarded send and one inbox), ``ordering`` (events put back in
order) and ``replay`` (the log a reconnecting tab resumes from). It uses ``wire``.
"""
