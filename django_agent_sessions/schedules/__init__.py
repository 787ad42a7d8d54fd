"""Runs that start by themselves: the ``ScheduledRun`` row (``models``) and when it fires
(``timing``), on an interval or a cron expression (docs/schedules.md). ``scheduler/``
fires them; ``store/schedules.py`` claims each firing once.
"""
