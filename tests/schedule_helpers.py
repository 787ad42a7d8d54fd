"""Scheduled runs for the schedules' tests: a schedule of the demo agent (it answers
"You said: ..." at once), and waiting, with a deadline, for the runs it started to end."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from django_agent_sessions.models import AgentRun, ScheduledRun

AGENT = "tests.chat_agent.make_demo_agent"
ENDED = {"completed", "cancelled", "failed"}


def a_schedule(
    name: str = "report",
    *,
    every: timedelta | None = timedelta(hours=1),
    next_fire_at: datetime | None = None,
    **fields: Any,
) -> ScheduledRun:
    """A schedule due now (unless ``next_fire_at`` says otherwise), of the demo agent."""
    fields.setdefault("agent", AGENT)
    return ScheduledRun.objects.create(
        name=name,
        input=fields.pop("input", "Summarise the day."),
        every=every,
        next_fire_at=next_fire_at or timezone.now(),
        **fields,
    )


def runs_ended(run_ids: list[str], *, within: float = 30.0) -> list[AgentRun]:
    """The runs, once none of them is running or waiting any more (fails after ``within``
    seconds): a run started from code may go on after its start returned."""
    deadline = time.monotonic() + within
    while True:
        runs = list(AgentRun.objects.filter(run_id__in=run_ids).select_related("session"))
        if len(runs) == len(run_ids) and all(run.status in ENDED for run in runs):
            return sorted(runs, key=lambda run: run_ids.index(str(run.run_id)))
        assert time.monotonic() < deadline, [(run.run_id, run.status) for run in runs]
        time.sleep(0.05)
