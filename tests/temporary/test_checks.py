"""``temporary.checks``: E130 (TTL), E131 (FORCE_TEMPORARY), E132 (the grace), each with
a hint; good values pass."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from django_agent_sessions.temporary.checks import check_temporary


def ids(settings: Any, **values: Any) -> list[str]:
    settings.AGENT_SESSIONS = values
    found = check_temporary()
    assert all(message.hint for message in found)
    return [message.id or "" for message in found]


def test_good_values_pass(settings):
    assert ids(settings) == []
    good = {"TEMPORARY_TTL": timedelta(hours=3), "TEMPORARY_GRACE_SECONDS": 5}
    assert ids(settings, FORCE_TEMPORARY=True, **good) == []
    assert ids(settings, FORCE_TEMPORARY="tests.temporary.test_settings.members_only") == []


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"TEMPORARY_TTL": "1m"}, "django_agent_sessions.E130"),
        ({"TEMPORARY_TTL": None}, "django_agent_sessions.E130"),
        ({"FORCE_TEMPORARY": "no.such.rule"}, "django_agent_sessions.E131"),
        ({"FORCE_TEMPORARY": "yes"}, "django_agent_sessions.E131"),
        ({"FORCE_TEMPORARY": 1}, "django_agent_sessions.E131"),
        ({"TEMPORARY_GRACE_SECONDS": -1}, "django_agent_sessions.E132"),
        ({"TEMPORARY_GRACE_SECONDS": "30"}, "django_agent_sessions.E132"),
    ],
)
def test_bad_values_are_reported(settings, values, expected):
    assert ids(settings, **values) == [expected]
