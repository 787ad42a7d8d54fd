"""What runs spent: each model's share of a run, and what a person spent in a period.

A run's shares are written with the run's own record (its lease renewals, its pause, its
end: ``write_spent`` joins the caller's transaction), each write adding what the run
spent since the last one, so a share is never counted twice and a run whose worker died
keeps what it had spent up to its last renewal. ``spent_by`` answers a budget's question
in one hop: the sums of every period at once, from the database, so the runs of every
worker count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agents.usage import Usage
from django.db.models import BigIntegerField, Case, F, Q, Sum, Value, When
from django.db.models.functions import Greatest

from django_agent_sessions.models import AgentRun, RunModelUsage
from django_agent_sessions.store import usage_totals
from django_agent_sessions.store.hops import hop


def usage_counts(usage: Usage) -> dict[str, int]:
    """The SDK's usage as the record's columns (cached and reasoning from its details)."""
    cached = getattr(usage.input_tokens_details, "cached_tokens", 0) or 0
    reasoning = getattr(usage.output_tokens_details, "reasoning_tokens", 0) or 0
    return {
        "requests": usage.requests,
        "input_tokens": usage.input_tokens,
        "cached_tokens": cached,
        "output_tokens": usage.output_tokens,
        "reasoning_tokens": reasoning,
        "total_tokens": usage.total_tokens,
    }


@dataclass(frozen=True)
class Spent:
    """What to write of a run's usage: its totals so far (None: unchanged) and, by model,
    what each spent since the last write."""

    totals: Mapping[str, int] | None = None
    by_model: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def run_fields(self) -> dict[str, Any]:
        """The run record's columns to set, for the caller's UPDATE of the run."""
        return grown(self.totals) if self.totals is not None else {}


def grown(counts: Mapping[str, int]) -> dict[str, Any]:
    """Columns set to ``counts`` where that is more: a run's usage only grows (an end
    that knows less than a renewal wrote, as a run that failed to resume, keeps it)."""
    column = BigIntegerField()
    return {
        name: Greatest(name, Value(count), output_field=column) for name, count in counts.items()
    }


NOTHING = Spent()


def write_spent(run_pk: int, spent: Spent, *, model_set: bool = False) -> None:
    """Add each model's share to its row, inside the caller's transaction; the run's
    ``model`` becomes the first one it used (``model_set``: the caller's own UPDATE of
    the record did it, with ``first_model``)."""
    shares = _shares(spent)
    for model, counts in shares.items():
        added = {name: F(name) + count for name, count in counts.items()}
        if not RunModelUsage.objects.filter(run_id=run_pk, model=model).update(**added):
            RunModelUsage.objects.create(run_id=run_pk, model=model, **counts)
    if shares and not model_set:
        AgentRun.objects.filter(pk=run_pk, model="").update(model=next(iter(shares))[:255])


def first_model(spent: Spent) -> dict[str, Any]:
    """For an UPDATE of the run's record: its ``model``, the first one it used unless
    it has one already (nothing when it used none)."""
    shares = _shares(spent)
    if not shares:
        return {}
    first = Value(next(iter(shares))[:255])
    return {"model": Case(When(model="", then=first), default=F("model"))}


def _shares(spent: Spent) -> dict[str, Mapping[str, int]]:
    return {model: counts for model, counts in spent.by_model.items() if any(counts.values())}


@hop
def spent_by(
    owner_id: Any,
    since: Mapping[str, datetime],
    *,
    model: str = "",
    model_since: Mapping[str, datetime] | None = None,
) -> tuple[dict[str, int], dict[str, int]]:
    """The tokens ``owner_id``'s runs spent since each of ``since``'s times, and those
    ``model`` spent since each of ``model_since``'s: one query each, by the same names."""
    every = _sums(AgentRun.objects.filter(session__owner_id=owner_id), "started_at", since)
    of_model = _sums(
        RunModelUsage.objects.filter(run__session__owner_id=owner_id, model=model),
        "run__started_at",
        model_since or {},
    )
    # What removed temporary chats spent (store.usage_totals) counts as well.
    kept = usage_totals.kept_since(owner_id, since)
    # (No model named: no model's row; "" is the row of every model.)
    kept_of_model = usage_totals.kept_since(owner_id, model_since or {}, model=model or "-")
    return _added(every, kept), _added(of_model, kept_of_model)


def _added(sums: dict[str, int], more: Mapping[str, int]) -> dict[str, int]:
    return {name: total + more.get(name, 0) for name, total in sums.items()}


def _sums(rows: Any, started: str, since: Mapping[str, datetime]) -> dict[str, int]:
    if not since:
        return {}
    sums = rows.aggregate(
        **{
            name: Sum("total_tokens", filter=Q(**{f"{started}__gte": at}))
            for name, at in since.items()
        }
    )
    return {name: int(total or 0) for name, total in sums.items()}
