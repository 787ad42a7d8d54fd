"""The checks of where runs execute: each misconfiguration reported with its id and a
hint, and the valid ones silent."""

from __future__ import annotations

import pytest
from django.core.checks import run_checks
from django.test import override_settings

WORKERS = {"database": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


def ids(**settings: object) -> set[str]:
    with override_settings(**settings):
        return {str(m.id) for m in run_checks() if (m.id or "")[-3:-1] == "06"}


@pytest.mark.parametrize(
    ("agent_sessions", "tasks", "expected"),
    [
        ({"RUNS": "threads"}, WORKERS, {"django_agent_sessions.E060"}),
        ({"RUNS": "tasks", "RUNS_BACKEND": "nowhere"}, WORKERS, {"django_agent_sessions.E062"}),
        ({"RUNS": "tasks", "RUNS_BACKEND": "default"}, IMMEDIATE, {"django_agent_sessions.W063"}),
        ({"RUNS_PER_WORKER": 0}, WORKERS, {"django_agent_sessions.E065"}),
        ({"RUNS_QUEUE_SECONDS": "soon"}, WORKERS, {"django_agent_sessions.E065"}),
        ({"RUNS_CLAIM_AHEAD": -1}, WORKERS, {"django_agent_sessions.E065"}),
        ({"RUNS_CLAIM_AHEAD": True}, WORKERS, {"django_agent_sessions.E065"}),
        ({"RUNS_CLAIM_AHEAD": 0}, WORKERS, set()),
        ({"RUNS": "tasks", "RUNS_BACKEND": "database"}, WORKERS, set()),
        ({}, WORKERS, set()),
    ],
)
def test_run_settings_are_checked(agent_sessions, tasks, expected):
    assert ids(AGENT_SESSIONS=agent_sessions, TASKS=tasks) == expected


def test_the_immediate_backend_is_fine_while_debugging():
    tasks_on_immediate = {"RUNS": "tasks", "RUNS_BACKEND": "default"}
    assert ids(AGENT_SESSIONS=tasks_on_immediate, TASKS=IMMEDIATE, DEBUG=True) == set()


REDIS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer"}}


@pytest.fixture(autouse=True)
def _a_layer_across_processes(settings):
    settings.CHANNEL_LAYERS = REDIS


def test_channels_in_memory_layer_reaches_no_task():
    tasks_on_workers = {"RUNS": "tasks", "RUNS_BACKEND": "database"}
    in_memory = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    found = ids(AGENT_SESSIONS=tasks_on_workers, TASKS=WORKERS, CHANNEL_LAYERS=in_memory)
    assert found == {"django_agent_sessions.E064"}


def test_runs_as_tasks_need_a_layer_that_reaches_other_processes(settings):
    """Without CHANNEL_LAYERS: an error on SQLite; PostgreSQL's LISTEN/NOTIFY reaches them."""
    on_postgresql = settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
    tasks_on_workers = {"RUNS": "tasks", "RUNS_BACKEND": "database"}
    found = ids(AGENT_SESSIONS=tasks_on_workers, TASKS=WORKERS, CHANNEL_LAYERS={})
    assert found == (set() if on_postgresql else {"django_agent_sessions.E064"})
