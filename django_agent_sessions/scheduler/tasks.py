"""The task of Django's Tasks framework that fires what is due, for a backend's
periodic mechanism (a Celery beat entry, a cron job's ``enqueue()``) to enqueue.

Imported only by those who enqueue it (and the workers that run it): defining a task
needs the framework, which Django 5.2 has only with the ``tasks`` extra.
"""

from __future__ import annotations

from django_agent_sessions import task_backends
from django_agent_sessions.scheduler.firing import fire_due


@task_backends.task()  # type: ignore[misc,untyped-decorator]  # the framework's decorator, looked up when used
def fire_due_schedules() -> int:
    """One pass of ``fire_due()``: the number of firings it fired. Enqueued twice at once,
    each firing still fires once (the claim)."""
    return len(fire_due())
