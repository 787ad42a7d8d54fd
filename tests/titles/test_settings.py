"""``titles.settings``: the values ``AGENT_SESSIONS["TITLES"]`` takes, as read on use."""

from __future__ import annotations

from typing import Any

import pytest

from django_agent_sessions.titles import settings as titles
from django_agent_sessions.titles.settings import Titles


@pytest.mark.parametrize(
    ("value", "configured"),
    [
        (None, None),
        ("agent", Titles("agent")),
        ({"MODEL": " gpt-4.1-mini "}, Titles("MODEL", "gpt-4.1-mini")),
        (
            {"FUNCTION": "tests.title_functions.gated"},
            Titles("FUNCTION", "tests.title_functions.gated"),
        ),
        ("model", None),  # a bad value writes no titles (the check says why)
        ({"MODEL": ""}, None),
        ({"MODEL": "a", "FUNCTION": "b"}, None),
        ({"PROMPT": "x"}, None),
        (True, None),
    ],
)
def test_the_setting_is_read_on_use(settings: Any, value: Any, configured: Any) -> None:
    settings.AGENT_SESSIONS = {"TITLES": value}
    assert titles.configured() == configured
    assert (titles.problem_of(value) is None) == (configured is not None or value is None)


def test_unset_means_the_first_messages_title(settings: Any) -> None:
    settings.AGENT_SESSIONS = {}
    assert titles.configured() is None
