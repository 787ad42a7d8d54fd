"""The usage page's figures: runs, requests and tokens per day, user or model, and cost.

Two aggregate queries, one per table, however many rows the page has:

- ``RunModelUsage`` grouped by (row, model): each model's share of the runs in the range;
- ``AgentRun`` grouped by (row, the run's model, whether it has ``RunModelUsage`` rows):
  how many runs each row has, and the tokens of runs that have no such row (recorded
  before usage was kept per model), counted under the run's own model.

Days are local days of the current time zone (``TruncDate`` with it), so a run at 23:30
in Paris is on the day Paris saw it. Each row keeps its figures per model too, for its
cost (``usage.prices``, applied by the admin) and the chart's stacked bars.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any, Literal

from django.contrib.auth import get_user_model
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from django_agent_sessions.models import AgentRun, RunModelUsage
from django_agent_sessions.usage.counts import COUNTS

Group = Literal["day", "user", "model"]
GROUPS: tuple[Group, ...] = ("day", "user", "model")
#: The default range: this many days up to today, inclusive.
DEFAULT_DAYS = 30


@dataclass(frozen=True)
class Filters:
    """What the page asks for: runs started from ``start`` to ``end`` (local days, both
    included), of one user (their username) and one model when given."""

    start: date
    end: date
    user: str = ""
    model: str = ""

    @classmethod
    def default(cls) -> Filters:
        today = timezone.localdate()
        return cls(start=today - timedelta(days=DEFAULT_DAYS - 1), end=today)

    def bounds(self) -> tuple[datetime, datetime]:
        """The range as aware datetimes: local midnight of ``start`` to that after ``end``."""
        zone = timezone.get_current_timezone()
        since = timezone.make_aware(datetime.combine(self.start, time.min), zone)
        until = timezone.make_aware(datetime.combine(self.end + timedelta(days=1), time.min), zone)
        return since, until

    def days(self) -> list[date]:
        return [self.start + timedelta(days=n) for n in range((self.end - self.start).days + 1)]


@dataclass
class Usage:
    """Requests and tokens, summed."""

    requests: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    total_tokens: int = 0

    def add(self, other: Usage | Mapping[str, Any]) -> None:
        for name in COUNTS:
            value = getattr(other, name) if isinstance(other, Usage) else other.get(name)
            setattr(self, name, getattr(self, name) + (value or 0))


@dataclass
class Row:
    """One row of the page: a day, a user (None: conversations without an owner) or a
    model ("": runs whose model is not known)."""

    key: date | str | None
    runs: int = 0
    usage: Usage = field(default_factory=Usage)
    #: The same figures per model: for the cost and the chart's stacked bars.
    models: dict[str, Usage] = field(default_factory=dict)

    def add(self, model: str, values: Usage | Mapping[str, Any]) -> None:
        self.usage.add(values)
        self.models.setdefault(model, Usage()).add(values)


@dataclass
class Report:
    filters: Filters
    group: Group
    rows: list[Row]
    total: Row


def report(filters: Filters, group: Group) -> Report:
    """The usage of ``filters``'s runs, one row per ``group``."""
    if group not in GROUPS:
        raise ValueError(f"group must be one of {GROUPS}, not {group!r}")
    rows: dict[Any, Row] = {}
    total = Row(key=None)

    def row(key: Any) -> Row:
        return rows.setdefault(key, Row(key=key))

    for values in _model_shares(filters, group):
        model = values["model"]
        row(values["key"]).add(model, values)
        total.add(model, values)
        if group == "model":
            row(values["key"]).runs += values["runs"]
    for values in _runs(filters, group):
        model = values["model"]
        if values["bare"]:  # no per-model rows: the run's own totals, under its model
            row(model if group == "model" else values["key"]).add(model, values)
            total.add(model, values)
        if group != "model":
            row(values["key"]).runs += values["runs"]
        elif values["bare"]:
            row(model).runs += values["runs"]
        total.runs += values["runs"]
    return Report(filters, group, _ordered(rows.values(), group), total)


def _model_shares(filters: Filters, group: Group) -> Iterable[dict[str, Any]]:
    since, until = filters.bounds()
    shares = RunModelUsage.objects.filter(run__started_at__gte=since, run__started_at__lt=until)
    if filters.user:
        shares = shares.filter(**{f"run__session__owner__{_username_field()}": filters.user})
    if filters.model:
        shares = shares.filter(model=filters.model)
    sums = {name: Sum(name) for name in COUNTS}
    grouped: Iterable[dict[str, Any]] = (
        shares.annotate(key=_key(group, "run__"))
        .values("key", "model")
        .annotate(runs=Count("id"), **sums)
        .order_by()
    )
    return grouped


def _runs(filters: Filters, group: Group) -> Iterable[dict[str, Any]]:
    since, until = filters.bounds()
    shares = RunModelUsage.objects.filter(run=OuterRef("pk"))
    bare = ~Exists(shares)
    runs: QuerySet[AgentRun] = AgentRun.objects.filter(started_at__gte=since, started_at__lt=until)
    if filters.user:
        runs = runs.filter(**{f"session__owner__{_username_field()}": filters.user})
    if filters.model:
        runs = runs.filter(
            Exists(shares.filter(model=filters.model)) | (bare & Q(model=filters.model))
        )
    sums = {name: Sum(name) for name in COUNTS}
    grouped: Iterable[dict[str, Any]] = (
        runs.annotate(key=_key(group, ""), bare=bare)
        .values("key", "model", "bare")
        .annotate(runs=Count("id"), **sums)
        .order_by()
    )
    return grouped


def _key(group: Group, run: str) -> Any:
    """The expression a row is grouped by; ``run`` is the path to the run ("" or "run__")."""
    if group == "day":
        return TruncDate(f"{run}started_at", tzinfo=timezone.get_current_timezone())
    if group == "user":
        return F(f"{run}session__owner__{_username_field()}")
    return F("model")


def _ordered(rows: Iterable[Row], group: Group) -> list[Row]:
    """Days in order; users and models by tokens spent, most first."""
    if group == "day":
        return sorted(rows, key=lambda row: _as_date(row.key))
    return sorted(rows, key=lambda row: (-row.usage.total_tokens, str(row.key or "")))


def _as_date(value: Any) -> date:
    # SQLite returns TruncDate's day as text on some versions of the driver.
    return date.fromisoformat(value) if isinstance(value, str) else value


def _username_field() -> str:
    name: str = get_user_model().USERNAME_FIELD
    return name
