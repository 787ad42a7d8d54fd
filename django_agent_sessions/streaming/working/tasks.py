"""The task that executes a run: ``execute_run``, a task of Django's Tasks framework.

Enqueued by ``running.dispatch`` by its dotted path, on the ``TASKS`` alias that
``RUNS_BACKEND`` names. It is built on first use (a module ``__getattr__``), not at
import: importing this module reads no setting and needs no task backend, and the task
is validated against the backend the project configured when it is used.
"""

from __future__ import annotations

from typing import Any

from django_agent_sessions import task_backends
from django_agent_sessions.conf import app_settings
from django_agent_sessions.streaming.working.host import run_host


def _execute_run(run_id: str, execution: int) -> None:
    """Hand execution ``execution`` (1: the start; more: resumptions) of run ``run_id``
    to this process's run host, which claims it once (a second delivery finds it taken
    and does nothing) and runs it on."""
    run_host().execute(run_id, execution)


# The task's path is this module's ``execute_run``: the name workers import it by.
_execute_run.__name__ = _execute_run.__qualname__ = "execute_run"


def __getattr__(name: str) -> Any:
    if name != "execute_run":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    built = task_backends.task(backend=app_settings.RUNS_BACKEND)(_execute_run)
    globals()["execute_run"] = built
    return built
