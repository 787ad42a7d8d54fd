"""System checks of the schedules' settings: ``SCHEDULE_MISSED`` (id E100) and
``SCHEDULE_GRACE`` (id E101)."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error

from django_agent_sessions.conf import app_settings
from django_agent_sessions.conf.values import parse_duration
from django_agent_sessions.schedules.timing import MISSED_POLICIES


def check_schedules(**kwargs: Any) -> list[CheckMessage]:
    if not app_settings.is_dict():  # E001 says so
        return []
    errors: list[CheckMessage] = []
    missed = app_settings.SCHEDULE_MISSED
    if missed not in MISSED_POLICIES:
        errors.append(
            Error(
                f"AGENT_SESSIONS['SCHEDULE_MISSED'] is {missed!r}; it must be one of "
                f"{', '.join(map(repr, MISSED_POLICIES))}.",
                hint="'skip' (the default) waits for the next firing in the future after "
                "downtime; 'once' fires once to catch up.",
                id="django_agent_sessions.E100",
            )
        )
    try:
        parse_duration(app_settings.SCHEDULE_GRACE)
    except ValueError as error:
        errors.append(
            Error(
                f"AGENT_SESSIONS['SCHEDULE_GRACE']: {error}",
                hint="How late a firing may start and still count as on time, e.g. '5min'.",
                id="django_agent_sessions.E101",
            )
        )
    return errors
