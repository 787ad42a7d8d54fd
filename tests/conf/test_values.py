"""Values written as settings (``conf/values.py``): rates (``"30/m"`` is 30 per 60 seconds)
and durations (``"30d"``, ``"90min"``), refused with the form they take."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django_agent_sessions.conf.values import parse_duration, parse_rate


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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30d", timedelta(days=30)),
        ("12h", timedelta(hours=12)),
        ("90min", timedelta(minutes=90)),
        ("30 days", timedelta(days=30)),
        ("2 Hours", timedelta(hours=2)),
        ("45s", timedelta(seconds=45)),
        ("2w", timedelta(weeks=2)),
        (" 7 d ", timedelta(days=7)),
        (timedelta(hours=1), timedelta(hours=1)),
    ],
)
def test_parse_duration(text, expected):
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["30", "d", "30x", "1.5d", "-3d", "", None, 30])
def test_parse_duration_names_bad_values(text):
    with pytest.raises(ValueError, match=r"Invalid duration .*e\.g\. '30d'"):
        parse_duration(text)


@pytest.mark.parametrize("text", ["1m", "3M", "2 months", "1y"])
def test_parse_duration_refuses_ambiguous_units(text):
    with pytest.raises(ValueError, match=r"Ambiguous duration .*'min'.*'30d'"):
        parse_duration(text)


@pytest.mark.parametrize("text", ["0d", timedelta(0), timedelta(days=-1)])
def test_parse_duration_refuses_zero_and_negative(text):
    with pytest.raises(ValueError, match="longer than zero"):
        parse_duration(text)
