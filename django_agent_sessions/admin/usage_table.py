"""The usage page's table as text: the very cells the page shows and its CSV export holds.

Both are made from ``table(report)``, so the export is the page. A row's cost is the sum of
``prices.cost`` over its models (``AGENT_SESSIONS["PRICES"]``); a row none of whose
models has a price shows a dash, and one where only some have a price shows what those
cost, marked with an asterisk (the page says why).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.utils.translation import gettext as _

from django_agent_sessions.store.usage_report import Group, Report, Row
from django_agent_sessions.usage import prices
from django_agent_sessions.usage.counts import COUNTS

DASH = "\u2014"
#: Marks a cost that leaves out the models without a price.
PARTLY_PRICED = "*"
COST_PLACES = Decimal("0.0001")


@dataclass(frozen=True)
class Line:
    """One row of the table: its cells, and the filter its first cell may link to."""

    cells: list[str]
    #: ("user" or "model", value): the page filtered to this row's user or model.
    narrows: tuple[str, str] | None = None


@dataclass(frozen=True)
class Table:
    header: list[str]
    lines: list[Line]
    total: list[str]
    #: Some cost leaves out models without a price (the asterisk needs its note).
    partly_priced: bool


def table(report: Report) -> Table:
    lines = [Line(_cells(row, report.group), _narrows(row, report.group)) for row in report.rows]
    total = _cells(report.total, None)
    partly = any(line.cells[-1].endswith(PARTLY_PRICED) for line in lines)
    return Table(header(report.group), lines, total, partly or total[-1].endswith(PARTLY_PRICED))


def header(group: Group) -> list[str]:
    labels = {
        "requests": _("Requests"),
        "input_tokens": _("Input tokens"),
        "cached_tokens": _("Cached input tokens"),
        "output_tokens": _("Output tokens"),
        "reasoning_tokens": _("Reasoning tokens"),
        "total_tokens": _("Total tokens"),
    }
    first = {"day": _("Day"), "user": _("User"), "model": _("Model")}[group]
    return [first, _("Runs"), *(labels[name] for name in COUNTS), _("Cost")]


def cost(row: Row) -> Decimal | None:
    """What the row's priced models cost; None when none of them has a price."""
    costs = [_model_cost(model, row) for model in row.models]
    priced = [value for value in costs if value is not None]
    return sum(priced, Decimal(0)) if priced else None


def unpriced(row: Row) -> list[str]:
    """The row's models without a price: their tokens are not in ``cost(row)``."""
    return sorted(model for model in row.models if _model_cost(model, row) is None)


def cost_text(row: Row) -> str:
    value = cost(row)
    if value is None:
        return DASH
    text = str(value.quantize(COST_PLACES))
    return text + PARTLY_PRICED if unpriced(row) else text


def key_text(key: date | str | None, group: Group) -> str:
    if isinstance(key, date):
        return key.isoformat()
    if group == "user" and not key:
        return _("(no user)")
    if group == "model" and not key:
        return _("(unknown model)")
    return str(key)


def _cells(row: Row, group: Group | None) -> list[str]:
    first = _("Total") if group is None else key_text(row.key, group)
    numbers = [str(getattr(row.usage, name)) for name in COUNTS]
    return [first, str(row.runs), *numbers, cost_text(row)]


def _narrows(row: Row, group: Group) -> tuple[str, str] | None:
    if group == "day" or not isinstance(row.key, str) or not row.key:
        return None
    return (group, row.key)


def _model_cost(model: str, row: Row) -> Decimal | None:
    usage = row.models[model]
    return prices.cost(
        model,
        input_tokens=usage.input_tokens,
        cached_tokens=usage.cached_tokens,
        output_tokens=usage.output_tokens,
    )
