"""The usage report: its totals are the run records', grouped by day, user or model, within
the dates asked for, kept per model too; two queries whatever the number of rows."""

from __future__ import annotations

from datetime import date, timedelta
from datetime import timezone as dt_timezone

import pytest
from django.test import override_settings
from django.utils import timezone

from django_agent_sessions.store.usage_report import Filters, Usage, report
from tests.usage_helpers import TOKENS, local, run, sample, share, sums

pytestmark = pytest.mark.django_db


def _tokens(usage: Usage) -> dict[str, int]:
    return {name: getattr(usage, name) for name in (*TOKENS, "total_tokens")}


def _range(data: dict) -> Filters:
    return Filters(start=data["days"][0], end=data["days"][2])


@pytest.mark.parametrize("group", ["day", "user", "model"])
def test_the_totals_are_the_sum_of_the_run_records_in_the_range(group):
    data = sample(timezone.localdate())
    result = report(_range(data), group)
    assert _tokens(result.total.usage) == sums(data["runs"])
    assert result.total.runs == len(data["runs"])
    rows = Usage()
    for row in result.rows:
        rows.add(row.usage)
    assert _tokens(rows) == sums(data["runs"])


def test_grouped_by_day_each_local_day_has_its_runs():
    data = sample(timezone.localdate())
    day1, day2, day3 = data["days"]
    a1, a2, b2, anonymous, started = data["runs"]
    result = report(_range(data), "day")
    assert [row.key for row in result.rows] == [day1, day2, day3]
    assert [row.runs for row in result.rows] == [1, 2, 2]
    expected = [sums([a1]), sums([a2, b2]), sums([anonymous, started])]
    assert [_tokens(row.usage) for row in result.rows] == expected
    assert sorted(result.rows[0].models) == ["gpt-a", "gpt-b"]
    assert sorted(result.rows[2].models) == ["", "old-model"]


def test_grouped_by_user_the_anonymous_conversations_are_a_row_of_their_own():
    data = sample(timezone.localdate())
    a1, a2, b2, anonymous, started = data["runs"]
    result = report(_range(data), "user")
    by_key = {row.key: row for row in result.rows}
    assert set(by_key) == {"alice", "bob", None}
    assert (by_key["alice"].runs, by_key["bob"].runs, by_key[None].runs) == (2, 2, 1)
    assert _tokens(by_key["alice"].usage) == sums([a1, a2])
    assert _tokens(by_key["bob"].usage) == sums([b2, started])
    assert _tokens(by_key[None].usage) == sums([anonymous])
    assert [row.key for row in result.rows] == ["alice", "bob", None]  # most tokens first


def test_grouped_by_model_a_run_on_two_models_counts_in_both():
    data = sample(timezone.localdate())
    result = report(_range(data), "model")
    by_key = {row.key: row for row in result.rows}
    assert set(by_key) == {"gpt-a", "gpt-b", "old-model", ""}
    assert {key: row.runs for key, row in by_key.items()} == {
        "gpt-a": 2, "gpt-b": 2, "old-model": 1, "": 1,
    }  # fmt: skip
    assert _tokens(by_key["gpt-a"].usage) == {
        "requests": 3, "input_tokens": 5000, "cached_tokens": 1200, "output_tokens": 1000,
        "reasoning_tokens": 50, "total_tokens": 6000,
    }  # fmt: skip
    assert by_key["gpt-b"].usage.total_tokens == 600 + 3400
    assert result.total.runs == 5  # each run once


def test_the_dates_exclude_runs_outside_the_range():
    data = sample(timezone.localdate())
    _day1, day2, day3 = data["days"]
    only_day2 = report(Filters(start=day2, end=day2), "day")
    assert [row.key for row in only_day2.rows] == [day2]
    assert _tokens(only_day2.total.usage) == sums(data["runs"][1:3])
    wide = report(Filters(start=day3 - timedelta(days=60), end=day3), "day")
    assert wide.total.runs == len(data["runs"]) + 1
    assert (
        report(Filters(start=day3 + timedelta(days=1), end=day3 + timedelta(days=9)), "day").rows
        == []
    )


def test_the_default_range_is_the_last_30_days_up_to_today():
    data = sample(timezone.localdate())
    filters = Filters.default()
    assert (filters.end - filters.start).days == 29
    assert filters.end == timezone.localdate()
    assert report(filters, "day").total.runs == len(data["runs"])  # 40 days ago: outside


@override_settings(TIME_ZONE="Asia/Tokyo")
def test_days_are_local_days_of_the_current_time_zone():
    day = date(2026, 3, 10)
    late = run(None, local(day, 23, 30), {"gpt-a": share(1, 10, 5)})
    early = run(None, local(day + timedelta(days=1), 0, 30), {"gpt-a": share(1, 20, 5)})
    # In UTC both runs are on the 10th; in Tokyo they are on two days.
    assert (
        late.started_at.astimezone(dt_timezone.utc).date()
        == early.started_at.astimezone(dt_timezone.utc).date()
    )
    result = report(Filters(start=day, end=day + timedelta(days=1)), "day")
    assert [(row.key, row.usage.input_tokens) for row in result.rows] == [
        (day, 10),
        (day + timedelta(days=1), 20),
    ]
    assert report(Filters(start=day, end=day), "day").total.runs == 1


def test_a_user_and_a_model_narrow_the_report():
    data = sample(timezone.localdate())
    a1, a2, _b2, anonymous, _started = data["runs"]
    alice = report(Filters(start=data["days"][0], end=data["days"][2], user="alice"), "model")
    assert {row.key: row.runs for row in alice.rows} == {"gpt-a": 2, "gpt-b": 1}
    assert _tokens(alice.total.usage) == sums([a1, a2])
    gpt_b = report(Filters(start=data["days"][0], end=data["days"][2], model="gpt-b"), "user")
    assert {row.key: row.runs for row in gpt_b.rows} == {"alice": 1, "bob": 1}
    assert gpt_b.total.usage.total_tokens == 600 + 3400
    legacy = report(Filters(start=data["days"][0], end=data["days"][2], model="old-model"), "day")
    assert _tokens(legacy.total.usage) == sums([anonymous])


def test_two_queries_whatever_the_number_of_rows(django_assert_num_queries):
    data = sample(timezone.localdate())
    for group in ("day", "user", "model"):
        with django_assert_num_queries(2):
            report(_range(data), group)


def test_an_unknown_group_is_refused():
    with pytest.raises(ValueError, match="group must be one of"):
        report(Filters.default(), "week")  # type: ignore[arg-type]
