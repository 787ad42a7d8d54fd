"""Runs that start by themselves (``models.ScheduledRun``): on an interval or a cron
expression, each firing an ordinary run (docs/schedules.md)."""
