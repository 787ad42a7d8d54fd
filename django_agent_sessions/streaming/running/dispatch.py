"""Runs as tasks (``AGENT_SESSIONS["RUNS"] = "tasks"``): enqueueing an execution, and
ending a run that no task will execute.

A run executed by a task is recorded first, with its order (``store.orders``), then its
execution is enqueued on the ``TASKS`` backend alias ``RUNS_BACKEND`` names. Its start
is execution 1; a resumption after decisions is one more. The task is named by its
dotted path, as task backends name it to their workers: it lives with the task worker's
run host (``streaming.working``), which this room does not import.
"""

from __future__ import annotations

import logging
from typing import Any

from agents.usage import Usage
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _

from django_agent_sessions.conf import app_settings
from django_agent_sessions.models import AgentRun
from django_agent_sessions.store import approvals as store_approvals
from django_agent_sessions.store import open_calls
from django_agent_sessions.store import orders as store_orders
from django_agent_sessions.store import runs as store_runs
from django_agent_sessions.store.hops import hop
from django_agent_sessions.streaming.running import lifecycle
from django_agent_sessions.streaming.running.outcomes import CANCELLED, FAILED

logger = logging.getLogger(__name__)

RUN_TASK = "django_agent_sessions.streaming.working.tasks.execute_run"
INLINE, TASKS = "inline", "tasks"


def offloaded() -> bool:
    """Whether runs execute as tasks (else in the web worker that took the message)."""
    return bool(app_settings.RUNS == TASKS)


def queue_seconds() -> float:
    """The lease of a queued run: how long it may wait for a task worker."""
    return float(app_settings.RUNS_QUEUE_SECONDS)


async def place(
    session_pk: int,
    order: store_orders.Order,
    *,
    agent_name: str,
    channel_layer: Any,
    user: Any,
    started: store_runs.StartedRun | None = None,
) -> str | None:
    """Record a run with its order (unless ``started``: recorded already, with its new
    conversation) and enqueue its start; its run id, or None if the conversation has a
    run. Runs of the conversation whose worker died are ended on the way, and told."""
    started = started or await store_runs.start(
        session_pk,
        agent_name=agent_name,
        lease_seconds=queue_seconds(),
        client_id=str(order.input.get("client_id", "")),
        order=order,
    )
    if started is None:
        return None
    await lifecycle.tell_lost(channel_layer, started.expired)
    await enqueue(
        started.run_id, 1, session_pk=session_pk, seq=0, channel_layer=channel_layer, user=user
    )
    return started.run_id


def resuming_lease() -> float:
    """The lease of a run its last decision resumes: until a task claims it, or as a
    running run's, on this worker."""
    return queue_seconds() if offloaded() else float(app_settings.RUN_LEASE_SECONDS)


async def enqueue(
    run_id: str, execution: int, *, session_pk: int, seq: int, channel_layer: Any, user: Any
) -> bool:
    """Enqueue execution ``execution`` of a recorded run; False if the backend refused
    it (its broker is down, ...) and no task worker had claimed it ahead of its task:
    the run is ended failed then, and its tabs told."""
    try:
        await _enqueue(run_id, execution)
    except Exception:
        logger.exception("Could not enqueue run %s on the task backend.", run_id)
        unclaimed = await store_orders.stop(session_pk, run_id, claimed_runs_on=True)
        if unclaimed is None:
            return True  # a task worker claimed it ahead of its task: it runs
        await end_unclaimed(channel_layer, session_pk, unclaimed, user, failed=True)
        return False
    return True


@hop(write=True)  # a write: enqueued or not, the caller learns which, even if cancelled
def _enqueue(run_id: str, execution: int) -> None:
    """The task of execution ``execution``, enqueued in one hop to the database's thread.

    The framework's ``aenqueue`` on django-tasks-db makes two: its row through the async
    ORM, then ``task_enqueued.asend``, whose receivers are sync (the framework's own
    logging one). That thread is shared by every tab's database work, and a burst of
    first messages waits for it (``benchmarks/README.md``, "Runs as tasks benchmark")."""
    task = import_string(RUN_TASK).using(backend=app_settings.RUNS_BACKEND)
    task.enqueue(run_id, execution)


async def enqueue_resumption(
    resume: store_approvals.Resume, session_pk: int, channel_layer: Any, user: Any
) -> bool:
    """Enqueue the resumption a last decision handed off (``store.approvals.decide``)."""
    return await enqueue(
        resume.run_id,
        resume.execution,
        session_pk=session_pk,
        seq=resume.seq,
        channel_layer=channel_layer,
        user=user,
    )


async def stop(channel_layer: Any, session_pk: int, *, run_id: str | None, user: Any) -> bool:
    """A Stop of the conversation's ordered run: True if it ended here because no task
    had claimed it yet; False if a task runs it (the Stop is noted on its order, and the
    caller sends it to the run as for any run)."""
    unclaimed = await store_orders.stop(session_pk, run_id)
    if unclaimed is None:
        return False
    await end_unclaimed(channel_layer, session_pk, unclaimed, user, failed=False)
    return True


async def end_unclaimed(
    channel_layer: Any,
    session_pk: int,
    unclaimed: store_orders.Unclaimed,
    user: Any,
    *,
    failed: bool,
) -> None:
    """End a run whose next execution no task will claim: cancelled (a Stop) or failed
    (the backend refused it); every call it holds gets its output (``lifecycle.end``)."""
    terminal: dict[str, Any]
    if failed:
        code, message = "unavailable", _("The assistant is not available.")
        terminal = {"type": "run.failed", "error": {"code": code, "message": message}}
    else:
        code, terminal = "", {"type": "run.cancelled"}
    terminal.update(run_id=unclaimed.run_id, seq=unclaimed.seq + 1)

    async def record() -> AgentRun | None:
        return await store_runs.finish(
            unclaimed.run_pk,
            status=FAILED if failed else CANCELLED,
            usage=Usage(),
            error="The task backend refused the run." if failed else "",
            error_code=code,
            # A handed-off resumption's approved calls were never run: they say so.
            open_call_text=open_calls.NOT_RESUMED_CALL if unclaimed.resumption else "",
            session_pk=session_pk,
        )

    await lifecycle.end(channel_layer, lifecycle.Ending(session_pk, terminal, user), record)
