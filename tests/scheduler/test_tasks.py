"""The ``fire_due_schedules`` task of Django's Tasks framework (``scheduler/tasks.py``):
enqueued, it fires what is due, each firing once however often it is enqueued; a
worker finds it by its module path."""

from __future__ import annotations

import pytest
from django.utils.module_loading import import_string

from django_agent_sessions import task_backends
from django_agent_sessions.models import AgentRun
from tests.schedule_helpers import a_schedule, runs_ended

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not task_backends.available(), reason="Django's Tasks framework"),
]


@pytest.fixture(autouse=True)
def _settings(settings):
    settings.AGENT_SESSIONS = {"RATE_LIMIT": None}


def test_enqueued_on_the_default_backend_it_fires_what_is_due():
    # Without TASKS, the default backend runs a task when it is enqueued (immediate).
    from django_agent_sessions.scheduler.tasks import fire_due_schedules

    a_schedule()
    result = fire_due_schedules.enqueue()
    assert result.return_value == 1
    assert fire_due_schedules.enqueue().return_value == 0  # the firing is not fired twice
    runs_ended([str(AgentRun.objects.get().run_id)])


def test_a_worker_finds_it_by_its_module_path():
    from django_agent_sessions.scheduler.tasks import fire_due_schedules

    assert (
        fire_due_schedules.module_path == "django_agent_sessions.scheduler.tasks.fire_due_schedules"
    )
    assert import_string(fire_due_schedules.module_path) is fire_due_schedules
