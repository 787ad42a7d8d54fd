"""Rates written as settings (``rates.py``): ``"30/m"`` is 30 per 60 seconds."""

from __future__ import annotations

import pytest

from django_agent_sessions.rates import parse_rate


@pytest.mark.parametrize(
    ("text", "expected"),
    [("30/m", (30, 60)), ("1/s", (1, 1)), (" 5 / h ", (5, 3600)), ("100/d", (100, 86400))],
)
def test_a_rate_is_a_count_and_a_period_in_seconds(text, expected):
    assert parse_rate(text) == expected


@pytest.mark.parametrize("text", ["30", "30/min", "m/30", "-1/m", "1.5/m", "", "30/M", 30, None])
def test_anything_else_is_refused_naming_the_expected_form(text):
    with pytest.raises(ValueError, match=r"is not a rate like '30/m' \(per s, m, h or d\)"):
        parse_rate(text)
