"""The system checks of ``SCHEDULE_MISSED`` (E100) and ``SCHEDULE_GRACE`` (E101)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import checks

from django_agent_sessions.scheduler.checks import check_schedules


@pytest.mark.parametrize(
    "value",
    [{}, {"SCHEDULE_MISSED": "skip"}, {"SCHEDULE_MISSED": "once", "SCHEDULE_GRACE": "90s"}],
)
def test_what_is_accepted(settings: Any, value: Any) -> None:
    settings.AGENT_SESSIONS = value
    assert check_schedules() == []


@pytest.mark.parametrize(
    ("value", "check_id", "named"),
    [
        ({"SCHEDULE_MISSED": "all"}, "E100", "['SCHEDULE_MISSED'] is 'all'; it must be one of"),
        ({"SCHEDULE_MISSED": None}, "E100", "must be one of 'skip', 'once'"),
        ({"SCHEDULE_GRACE": "5m"}, "E101", "Ambiguous duration '5m'"),
        ({"SCHEDULE_GRACE": 300}, "E101", "Invalid duration 300"),
    ],
)
def test_a_mistake_is_an_error_that_names_it(
    settings: Any, value: Any, check_id: str, named: str
) -> None:
    settings.AGENT_SESSIONS = value
    [error] = check_schedules()
    assert error.id == f"django_agent_sessions.{check_id}"
    assert named in error.msg
    assert error.hint


@pytest.mark.django_db  # every check runs: Django 6's model checks may ask SQLite its features
def test_the_check_is_registered(settings: Any) -> None:
    settings.AGENT_SESSIONS = {"SCHEDULE_MISSED": "twice"}
    assert "django_agent_sessions.E100" in [message.id for message in checks.run_checks()]
