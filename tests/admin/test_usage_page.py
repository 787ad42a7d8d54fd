"""The usage page in the admin: its totals are the run records', grouped by day, user or
model, within its dates; cost from PRICES; a chart with a bar per day; a CSV that is the
page; only for staff who may view runs."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta
from decimal import Decimal
from html.parser import HTMLParser
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from django_agent_sessions.models import AgentRun
from tests.admin.helpers import staff
from tests.usage_helpers import PRICES, TOKENS, local, run, sample, share, sums

pytestmark = pytest.mark.django_db

PAGE = reverse("admin:django_agent_sessions_runmodelusage_changelist")
CSV = reverse("admin:django_agent_sessions_runmodelusage_csv")
RUNS = reverse("admin:django_agent_sessions_agentrun_changelist")
COLUMNS = ["runs", *TOKENS, "total_tokens"]


class _Table(HTMLParser):
    """The cells of ``#usage-table`` as text, row by row (header, body, total)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._inside = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and ("id", "usage-table") in attrs:
            self._inside = True
        elif self._inside and tag == "tr":
            self.rows.append([])
        elif self._inside and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._inside = False
        elif self._inside and tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def page_table(client: Any, **query: str) -> list[list[str]]:
    response = client.get(PAGE, query)
    assert response.status_code == 200
    parser = _Table()
    parser.feed(response.content.decode())
    return parser.rows


def csv_table(client: Any, **query: str) -> list[list[str]]:
    response = client.get(CSV, query)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    return list(csv.reader(io.StringIO(response.content.decode())))


@pytest.fixture
def data() -> dict[str, Any]:
    return sample(timezone.localdate())


@pytest.fixture
def runs_viewer(client):
    client.force_login(staff("usage-viewer", "view_agentrun"))
    return client


def _dates(data: dict[str, Any]) -> dict[str, str]:
    return {"start": data["days"][0].isoformat(), "end": data["days"][2].isoformat()}


def _numbers(row: list[str]) -> dict[str, int]:
    return dict(zip(COLUMNS, (int(cell) for cell in row[1:8]), strict=True))


@pytest.mark.parametrize("group", ["day", "user", "model"])
def test_the_totals_are_the_sum_of_the_run_records(runs_viewer, data, group):
    rows = page_table(runs_viewer, group=group, **_dates(data))
    header, body, total = rows[0], rows[1:-1], rows[-1]
    assert header[1:] == [
        "Runs", "Requests", "Input tokens", "Cached input tokens", "Output tokens",
        "Reasoning tokens", "Total tokens", "Cost",
    ]  # fmt: skip
    assert total[0] == "Total"
    assert _numbers(total) == {"runs": len(data["runs"]), **sums(data["runs"])}
    for column in TOKENS:  # the rows add up to the total (runs do not when by model)
        assert sum(_numbers(row)[column] for row in body) == _numbers(total)[column]


def test_each_grouping_has_its_rows(runs_viewer, data):
    day1, day2, day3 = (day.isoformat() for day in data["days"])
    by_day = page_table(runs_viewer, **_dates(data))
    assert [(row[0], row[1]) for row in by_day[1:-1]] == [(day1, "1"), (day2, "2"), (day3, "2")]
    by_user = page_table(runs_viewer, group="user", **_dates(data))
    assert [(row[0], row[1]) for row in by_user[1:-1]] == [
        ("alice", "2"), ("bob", "2"), ("(no user)", "1"),
    ]  # fmt: skip
    by_model = page_table(runs_viewer, group="model", **_dates(data))
    assert {row[0]: row[1] for row in by_model[1:-1]} == {
        "gpt-a": "2", "gpt-b": "2", "old-model": "1", "(unknown model)": "1",
    }  # fmt: skip
    assert by_model[-1][1] == "5"  # the run on two models is one run


def test_the_dates_leave_out_runs_outside_them(runs_viewer, data):
    default = page_table(runs_viewer)  # the last 30 days: the run 40 days ago is not in
    assert _numbers(default[-1]) == {"runs": len(data["runs"]), **sums(data["runs"])}
    every = data["runs"] + [data["outside"]]
    start = (data["days"][0] - timedelta(days=60)).isoformat()
    wide = page_table(runs_viewer, start=start, end=data["days"][2].isoformat())
    assert _numbers(wide[-1]) == {"runs": len(every), **sums(every)}
    one_day = data["days"][1].isoformat()
    only = page_table(runs_viewer, start=one_day, end=one_day)
    assert _numbers(only[-1]) == {"runs": 2, **sums(data["runs"][1:3])}


def test_a_user_and_a_model_narrow_the_page(runs_viewer, data):
    alice = page_table(runs_viewer, group="model", user="alice", **_dates(data))
    assert _numbers(alice[-1]) == {"runs": 2, **sums(data["runs"][:2])}
    gpt_b = page_table(runs_viewer, group="user", model="gpt-b", **_dates(data))
    assert [row[0] for row in gpt_b[1:-1]] == ["bob", "alice"]
    assert _numbers(gpt_b[-1])["total_tokens"] == 600 + 3400


@pytest.mark.parametrize(
    "query",
    [{}, {"group": "user"}, {"group": "model", "user": "alice"}, {"model": "gpt-b"}],
)
@override_settings(AGENT_SESSIONS={"PRICES": PRICES})
def test_the_csv_is_the_page(runs_viewer, data, query):
    query = {**_dates(data), **query}
    shown = page_table(runs_viewer, **query)
    assert len(shown) > 2
    assert csv_table(runs_viewer, **query) == shown


def test_the_page_links_its_csv_with_its_filters(runs_viewer, data):
    body = runs_viewer.get(PAGE, {"group": "user", "model": "gpt-a"}).content.decode()
    link = re.search(r'href="([^"]+)" class="usage-csv"', body)
    assert link is not None
    url = link.group(1).replace("&amp;", "&")
    assert url.startswith(CSV + "?")
    for part in ("group=user", "model=gpt-a", f"end={timezone.localdate().isoformat()}"):
        assert part in url


@override_settings(AGENT_SESSIONS={"PRICES": PRICES})
def test_cost_comes_from_prices_and_is_a_dash_without_one(runs_viewer, data):
    by_model = {row[0]: row[-1] for row in page_table(runs_viewer, group="model", **_dates(data))}
    # gpt-a: 3800 input at 2.00, 1200 cached at 0.50, 1000 output at 8.00 per million.
    gpt_a = (Decimal(3800) * 2 + Decimal(1200) * Decimal("0.5") + Decimal(1000) * 8) / 10**6
    gpt_b = (Decimal(3000) * 1 + Decimal(1000) * 4) / 10**6
    assert by_model["gpt-a"] == str(gpt_a.quantize(Decimal("0.0001"))) == "0.0162"
    assert by_model["gpt-b"] == "0.0070"
    assert by_model["old-model"] == "\u2014"
    assert by_model["(unknown model)"] == "\u2014"
    assert by_model["Total"] == f"{(gpt_a + gpt_b).quantize(Decimal('0.0001'))}*"
    by_day = page_table(runs_viewer, **_dates(data))
    # Day 1: gpt-a (800 * 2 + 200 * 0.5 + 300 * 8) + gpt-b (500 * 1 + 100 * 4) = 5000.
    # Day 2: gpt-a (3000 * 2 + 1000 * 0.5 + 700 * 8) + gpt-b (2500 * 1 + 900 * 4) = 18200.
    assert [row[-1] for row in by_day[1:-1]] == ["0.0050", "0.0182", "\u2014"]


def test_without_prices_every_cost_is_a_dash(runs_viewer, data):
    rows = page_table(runs_viewer, group="model", **_dates(data))
    assert {row[-1] for row in rows[1:]} == {"\u2014"}


def test_the_chart_has_one_bar_per_day_with_tokens(runs_viewer, data):
    for group in ("day", "user"):  # the chart is per day whatever the table's rows
        body = runs_viewer.get(PAGE, {"group": group, **_dates(data)}).content.decode()
        svg = body[
            body.index('<svg class="usage-chart-svg"') : body.index(
                "</svg>", body.index("usage-chart-svg")
            )
        ]
        assert '<title id="usage-chart-title">Tokens per day</title>' in svg
        assert '<desc id="usage-chart-desc">' in svg
        bars = re.findall(
            r'<g class="usage-bar" data-day="([\d-]+)"><title>[^<]*: (\d+) tokens', svg
        )
        day1, day2, day3 = data["days"]
        # day 3's tokens are the anonymous run's (the other run that day spent nothing)
        assert bars == [
            (day1.isoformat(), str(sums(data["runs"][:1])["total_tokens"])),
            (day2.isoformat(), str(sums(data["runs"][1:3])["total_tokens"])),
            (day3.isoformat(), "120"),
        ]
        assert svg.count("<rect") == 2 + 1 + 1 + 1  # day 1 is on two models
    empty = runs_viewer.get(PAGE, {"start": "2001-01-01", "end": "2001-01-31"}).content.decode()
    assert 'class="usage-chart-svg"' in empty
    assert 'class="usage-bar"' not in empty
    assert "No runs in this range." in empty


def test_staff_without_the_view_runs_permission_are_refused(client, data):
    client.force_login(staff("conversations-only", "view_agentsession"))
    assert client.get(PAGE).status_code == 403
    assert client.get(CSV).status_code == 403
    index = client.get(reverse("admin:index")).content.decode()
    assert PAGE not in index


def test_people_who_are_not_staff_are_sent_to_log_in(client, data):
    assert client.get(PAGE).status_code == 302
    client.force_login(data["alice"])
    response = client.get(CSV)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_the_admin_index_and_the_run_list_link_to_the_page(runs_viewer, data):
    assert PAGE in runs_viewer.get(reverse("admin:index")).content.decode()
    assert f'href="{PAGE}"' in runs_viewer.get(RUNS).content.decode()


def test_the_run_list_filters_by_model(runs_viewer, data):
    body = runs_viewer.get(RUNS, {"model": "gpt-b"}).content.decode()
    listed = {str(run.run_id) for run in AgentRun.objects.all() if str(run.run_id) in body}
    assert listed == {str(data["runs"][2].run_id)}  # bob's run; alice's began on gpt-a
    detail = runs_viewer.get(
        reverse("admin:django_agent_sessions_agentrun_change", args=[data["runs"][0].pk])
    ).content.decode()
    assert "Reasoning tokens" in detail or "reasoning tokens" in detail


def test_a_first_day_after_the_last_is_an_error(runs_viewer, data):
    body = runs_viewer.get(PAGE, {"start": "2026-02-02", "end": "2026-02-01"}).content.decode()
    assert "The first day is after the last." in body
    assert 'id="usage-table"' not in body
    assert runs_viewer.get(CSV, {"start": "2026-02-02", "end": "2026-02-01"}).status_code == 400
    assert runs_viewer.get(PAGE, {"start": "not a date"}).status_code == 200


def test_the_page_makes_as_many_queries_for_many_rows_as_for_few(runs_viewer, data):
    def queries(group: str) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert runs_viewer.get(PAGE, {"group": group}).status_code == 200
        return len(captured)

    few = {group: queries(group) for group in ("day", "user", "model")}
    for n in range(8):
        owner = User.objects.create_user(f"more-{n}")
        day = timezone.localdate() - timedelta(days=n + 3)
        run(owner, local(day), {f"model-{n}": share(1, 10, 10), "gpt-a": share(1, 5, 5)})
    assert {group: queries(group) for group in ("day", "user", "model")} == few


def test_names_are_escaped_in_the_table_and_the_chart(runs_viewer, data):
    hostile = '<img src=x onerror="alert(1)">'
    owner = User.objects.create_user("<b>mallory</b>")
    run(owner, local(timezone.localdate()), {hostile: share(1, 10, 10)})
    for group in ("user", "model"):
        body = runs_viewer.get(PAGE, {"group": group}).content.decode()
        assert hostile not in body
        assert "<b>mallory</b>" not in body
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in body
