"""The usage page's table as text (``admin/usage_table.py``): the cells the page and its
CSV share, each row's cost from PRICES, a dash without a price, an asterisk when only
some of its models have one."""

from __future__ import annotations

from datetime import date

import pytest

from django_agent_sessions.admin import usage_table
from django_agent_sessions.store.usage_report import Filters, Report, Row
from tests.usage_helpers import PRICES

MILLION = 1_000_000


@pytest.fixture(autouse=True)
def priced(settings):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "PRICES": PRICES}


def _row(key: str | None, **models: int) -> Row:
    row = Row(key=key, runs=1)
    for model, tokens in models.items():
        name = model.replace("_", "-")
        row.add(name, {"requests": 1, "input_tokens": tokens, "total_tokens": tokens})
    return row


def test_a_rows_cost_is_its_priced_models_a_dash_or_marked_when_partly_priced():
    assert usage_table.cost_text(_row("a", gpt_a=MILLION, gpt_b=MILLION)) == "3.0000"
    assert usage_table.cost_text(_row("b", gpt_a=MILLION, mystery=MILLION)) == "2.0000*"
    assert usage_table.unpriced(_row("b", gpt_a=MILLION, mystery=5)) == ["mystery"]
    assert usage_table.cost_text(_row("c", mystery=MILLION)) == usage_table.DASH


def test_keys_read_as_a_day_a_user_or_a_model_and_say_when_none_is_known():
    assert usage_table.key_text(date(2026, 3, 1), "day") == "2026-03-01"
    assert usage_table.key_text(None, "user") == "(no user)"
    assert usage_table.key_text("", "model") == "(unknown model)"
    assert usage_table.key_text("alice", "user") == "alice"


def test_the_table_has_a_line_per_row_a_total_and_links_to_narrow_by_model():
    rows = [_row("gpt-a", gpt_a=MILLION), _row("", mystery=10)]
    total = _row(None, gpt_a=MILLION, mystery=10)
    table = usage_table.table(
        Report(Filters(date(2026, 3, 1), date(2026, 3, 2)), "model", rows, total)
    )
    assert (table.header[0], table.header[1], table.header[-1]) == ("Model", "Runs", "Cost")
    assert [line.cells[0] for line in table.lines] == ["gpt-a", "(unknown model)"]
    assert [line.narrows for line in table.lines] == [("model", "gpt-a"), None]
    assert table.lines[0].cells[-1] == "2.0000"
    assert table.total[0] == "Total"
    assert table.total[-1] == "2.0000*"
    assert table.partly_priced
    assert all(len(line.cells) == len(table.header) for line in table.lines)
