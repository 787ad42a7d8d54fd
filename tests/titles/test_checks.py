"""``titles.checks``: E110 for a ``TITLES`` value that would write no titles, with a hint."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import checks

from django_agent_sessions.titles.checks import check_titles


@pytest.mark.parametrize(
    "value",
    [
        None,
        "agent",
        {"MODEL": "gpt-4.1-mini"},
        {"FUNCTION": "tests.title_functions.gated"},
    ],
)
def test_good_values_pass(settings: Any, value: Any) -> None:
    settings.AGENT_SESSIONS = {"TITLES": value}
    assert check_titles() == []


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("yes", "is 'yes'"),
        ({"MODEL": ""}, "non-empty string"),
        ({"MODEL": "a", "FUNCTION": "b"}, "one key"),
        ({"FUNCTION": "tests.title_functions.nowhere"}, "does not import"),
        ({"FUNCTION": "tests.title_functions.not_callable"}, "not callable"),
    ],
)
def test_a_bad_value_is_an_error_with_a_hint(settings: Any, value: Any, says: str) -> None:
    settings.AGENT_SESSIONS = {"TITLES": value}
    [error] = check_titles()
    assert error.id == "django_agent_sessions.E110"
    assert error.level == checks.ERROR
    assert says in error.msg
    assert '"agent"' in (error.hint or "")


def test_it_is_registered(settings: Any) -> None:
    settings.AGENT_SESSIONS = {"TITLES": 3}
    assert "django_agent_sessions.E110" in {message.id for message in checks.run_checks()}
