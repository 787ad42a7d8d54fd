"""The system check of ``AGENT_SESSIONS["TELEMETRY"]``."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import checks

from django_agent_sessions.telemetry.checks import check_telemetry
from django_agent_sessions.telemetry.settings import DEFAULTS

E090 = "django_agent_sessions.E090"


@pytest.mark.parametrize(
    "value",
    [
        None,
        {},
        DEFAULTS,
        {"ENABLED": False},
        {"TRACE_URL": "https://jaeger.example/trace/{trace_id}"},
        {"TRACE_URL": "https://tempo.example/explore?q={trace_id}&x={trace_id}"},
    ],
)
def test_what_is_accepted(settings: Any, value: Any) -> None:
    settings.AGENT_SESSIONS = {"TELEMETRY": value}
    assert check_telemetry() == []


@pytest.mark.parametrize(
    ("value", "named"),
    [
        (True, "it must be a dict"),
        ({"TRACE_MESSAGE": True}, "unknown keys ['TRACE_MESSAGE']"),
        ({"ENABLED": "no"}, "['ENABLED'] is 'no'"),
        ({"TRACE_MESSAGES": 1}, "['TRACE_MESSAGES'] is 1"),
        ({"TRACE_URL": "https://jaeger.example/trace/"}, "with {trace_id}"),
        ({"TRACE_URL": "https://x.example/{trace_id}/{span_id}"}, "cannot be formatted"),
        ({"TRACE_URL": "https://x.example/{trace_id}/{"}, "cannot be formatted"),
    ],
)
def test_a_mistake_is_an_error_that_names_it(settings: Any, value: Any, named: str) -> None:
    settings.AGENT_SESSIONS = {"TELEMETRY": value}
    [error] = check_telemetry()
    assert error.id == E090
    assert named in error.msg
    assert "TRACE_URL" in str(error.hint)


@pytest.mark.django_db  # every check runs: Django 6's model checks may ask SQLite its features
def test_the_check_is_registered(settings: Any) -> None:
    settings.AGENT_SESSIONS = {"TELEMETRY": {"TRACE_URL": "no placeholder"}}
    assert E090 in [message.id for message in checks.run_checks()]
