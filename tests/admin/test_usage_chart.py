"""The usage page's chart drawn from a report (``admin/usage_chart.py``): a bar per day
that spent tokens, stacked by model, on a round scale; ``test_usage_page.py`` shows it
on the page."""

from __future__ import annotations

import re
from datetime import date

import pytest

from django_agent_sessions.admin import usage_chart
from django_agent_sessions.store.usage_report import Filters, Report, Row


def _day(day: int, **models: int) -> Row:
    row = Row(key=date(2026, 3, day))
    for model, tokens in models.items():
        row.add(model.replace("_", "-"), {"requests": 1, "total_tokens": tokens})
    return row


def test_one_bar_per_day_with_tokens_stacked_by_model_the_biggest_first():
    rows = [_day(1, gpt_a=300, gpt_b=100), _day(2), _day(3, gpt_b=50)]
    total = Row(key=None)
    report = Report(Filters(date(2026, 3, 1), date(2026, 3, 3)), "day", rows, total)
    drawn = str(usage_chart.chart(report))
    assert re.findall(r'data-day="([^"]+)"', drawn) == ["2026-03-01", "2026-03-03"]
    assert "<title>2026-03-01: 400 tokens</title>" in drawn
    first_bar = drawn[drawn.index('data-day="2026-03-01"') :]
    assert first_bar.index("gpt-a: 300 tokens") < first_bar.index("gpt-b: 100 tokens")
    # gpt-a spent most: the first colour, in the legend too.
    assert f'fill="{usage_chart.PALETTE[0]}"/></svg>gpt-a</li>' in drawn
    assert "the busiest day spent 400 tokens" in drawn


def test_a_model_name_is_escaped():
    rows = [_day(1, **{"<b>x</b>": 10})]
    report = Report(Filters(date(2026, 3, 1), date(2026, 3, 1)), "day", rows, Row(key=None))
    drawn = str(usage_chart.chart(report))
    assert "<b>x</b>" not in drawn
    assert "&lt;b&gt;x&lt;/b&gt;" in drawn


@pytest.mark.parametrize(
    ("most", "scale"),
    [(0, (1, 1)), (9, (2, 10)), (24740, (5000, 25000)), (101, (25, 125)), (10**6, (250000, 10**6))],
)
def test_the_chart_axis_has_round_steps_up_to_the_busiest_day(most, scale):
    assert usage_chart._scale(most) == scale
