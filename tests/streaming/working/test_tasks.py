"""``working.tasks``: the run task, built on first use against the backend ``RUNS_BACKEND``
names, by the dotted path ``running.dispatch`` enqueues it by; delivered (the immediate
backend: at once, in this process) it hands its run to the run host, once."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.utils.module_loading import import_string

from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.store import orders, runs
from django_agent_sessions.streaming.running import dispatch
from django_agent_sessions.streaming.working import tasks
from tests import order_agent

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _fresh_task(settings: Any) -> Iterator[None]:
    settings.AGENT_SESSIONS = {"AGENT": order_agent.PATH, "RUNS": "tasks", "RATE_LIMIT": None}
    order_agent.reset()
    tasks.__dict__.pop("execute_run", None)
    yield
    tasks.__dict__.pop("execute_run", None)


def test_the_task_is_built_on_first_use_by_the_path_dispatch_names() -> None:
    assert "execute_run" not in tasks.__dict__  # importing the module built nothing
    task = import_string(dispatch.RUN_TASK)
    assert (task.name, task.module_path, task.backend) == (
        "execute_run",
        dispatch.RUN_TASK,
        "default",
    )
    assert tasks.execute_run is task  # built once
    with pytest.raises(AttributeError):
        tasks.__getattr__("other")


def test_a_task_delivered_twice_hands_its_run_to_the_host_once() -> None:
    conversation = AgentSession.objects.create(session_id="by-task")
    order = orders.Order(orders.CODE, {"text": "Count once"}, agent=order_agent.PATH)
    started = runs.start.sync(conversation.pk, agent_name="Counter", lease_seconds=60, order=order)
    assert started is not None
    task = import_string(dispatch.RUN_TASK)
    task.enqueue(started.run_id, 1)
    task.enqueue(started.run_id, 1)
    deadline = time.monotonic() + 15
    while AgentRun.objects.get(pk=started.pk).status == "running":
        assert time.monotonic() < deadline, "the run did not end"
        time.sleep(0.02)
    assert AgentRun.objects.get(pk=started.pk).status == "completed"
    bumps = order_agent.BUMPS
    assert bumps == {"by-task": 1}
