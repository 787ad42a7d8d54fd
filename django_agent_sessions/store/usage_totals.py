"""The tokens of removed temporary chats, kept as totals while budgets need them.

A temporary chat leaves nothing behind, but a person's budgets (``QUOTAS``) count what
their runs spent in the day and the month: removing the runs would give the tokens back.
So, when budgets are configured, the runs' tokens are added to the owner's
``UsageTotal`` rows of the run's local day (one of every model, one per model) in the
removal's own transaction, and ``spent_by`` counts them. Only totals are kept: no text,
no conversation, no run. Without ``QUOTAS`` nothing is kept. Anonymous chats have no
budgets (``RATE_LIMIT`` instead), so theirs are not kept either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from django.db.models import F, Q, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from django_agent_sessions.conf import app_settings
from django_agent_sessions.models import AgentRun, RunModelUsage, UsageTotal


def keep_totals_of(using: str, conversation_pks: Sequence[int]) -> None:
    """Add the tokens of these conversations' runs to their owners' totals (in the
    caller's transaction, before the runs are deleted); nothing without ``QUOTAS``."""
    if not app_settings.QUOTAS:
        return
    tz = timezone.get_current_timezone()
    runs = AgentRun.objects.using(using).filter(
        session_id__in=conversation_pks, session__owner_id__isnull=False, total_tokens__gt=0
    )
    every = runs.values(owner=F("session__owner_id"), day=TruncDate("started_at", tzinfo=tz))
    _add(using, every.annotate(tokens=Sum("total_tokens")))
    shares = RunModelUsage.objects.using(using).filter(run__in=runs).exclude(model="")
    by_model = shares.values(
        "model", owner=F("run__session__owner_id"), day=TruncDate("run__started_at", tzinfo=tz)
    )
    _add(using, by_model.annotate(tokens=Sum("total_tokens")))


def _add(using: str, sums: QuerySet[Any, dict[str, Any]]) -> None:
    """Add each sum to its row: a model's, or (no model in the sum) every model's."""
    totals = UsageTotal.objects.using(using)
    for row in sums:
        key = {"owner_id": row["owner"], "day": row["day"], "model": row.get("model", "")}
        if not totals.filter(**key).update(total_tokens=F("total_tokens") + row["tokens"]):
            totals.create(total_tokens=row["tokens"], **key)


def kept_since(owner_id: Any, since: Mapping[str, datetime], *, model: str = "") -> dict[str, int]:
    """The kept totals of ``owner_id`` (of every model, or of ``model``) since each of
    ``since``'s times, which are local midnights (a day's or a month's start)."""
    if not since:
        return {}
    rows = UsageTotal.objects.filter(owner_id=owner_id, model=model)
    sums = rows.aggregate(  # (aliased: a name may be a column's, "day")
        **{
            f"kept_{name}": Sum("total_tokens", filter=Q(day__gte=_local_day(at)))
            for name, at in since.items()
        }
    )
    return {name: int(sums[f"kept_{name}"] or 0) for name in since}


def _local_day(at: datetime) -> date:
    return timezone.localtime(at).date()
