"""Run records with usage, written with the ORM as the runs write them, for the tests of the
usage report and the usage page."""

from __future__ import annotations

import itertools
from datetime import date, datetime, time, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.usage.models import RunModelUsage

TOKENS = ("requests", "input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens")
PRICES = {
    "gpt-a": {"input": "2.00", "cached_input": "0.50", "output": "8.00"},
    "gpt-b": {"input": "1.00", "output": "4.00"},
}
_numbers = itertools.count(1)


def share(
    requests: int, input_tokens: int, output_tokens: int, cached: int = 0, reasoning: int = 0
):
    """One model's usage in a run."""
    return {
        "requests": requests,
        "input_tokens": input_tokens,
        "cached_tokens": cached,
        "output_tokens": output_tokens,
        "reasoning_tokens": reasoning,
        "total_tokens": input_tokens + output_tokens,
    }


def local(day: date, hour: int = 12, minute: int = 0) -> datetime:
    return timezone.make_aware(datetime.combine(day, time(hour, minute)))


def run(
    owner: User | None,
    started_at: datetime,
    shares: dict[str, dict[str, int]],
    *,
    model: str | None = None,
    legacy: dict[str, int] | None = None,
) -> AgentRun:
    """A finished run of a new conversation of ``owner``: its totals are the sum of its
    ``shares`` (one RunModelUsage row per model), or ``legacy`` (no rows, as a run recorded
    before usage was kept per model)."""
    conversation = AgentSession.objects.create(session_id=f"usage-{next(_numbers)}", owner=owner)
    totals = dict(legacy or {})
    for values in shares.values():
        for name, value in values.items():
            totals[name] = totals.get(name, 0) + value
    record = AgentRun.objects.create(
        session=conversation,
        status="completed",
        started_at=started_at,
        finished_at=started_at + timedelta(seconds=2),
        model=next(iter(shares), "") if model is None else model,
        **totals,
    )
    for name, values in shares.items():
        RunModelUsage.objects.create(run=record, model=name, **values)
    return record


def sample(today: date) -> dict[str, Any]:
    """Runs of two users and one anonymous conversation over three days up to ``today``,
    one of them on two models, one recorded without per-model rows, one long before."""
    alice = User.objects.create_user("alice")
    bob = User.objects.create_user("bob")
    day1, day2, day3 = today - timedelta(days=2), today - timedelta(days=1), today
    runs = [
        run(
            alice,
            local(day1, 9),
            {"gpt-a": share(2, 1000, 300, 200, 50), "gpt-b": share(1, 500, 100)},
        ),
        run(alice, local(day2, 10), {"gpt-a": share(1, 4000, 700, 1000)}),
        run(bob, local(day2, 18), {"gpt-b": share(3, 2500, 900, 0, 300)}),
        run(None, local(day3, 8), {}, model="old-model", legacy=share(1, 100, 20)),
        run(bob, local(day3, 9), {}, model=""),  # started, nothing spent yet
    ]
    outside = run(alice, local(today - timedelta(days=40)), {"gpt-a": share(9, 9000, 900)})
    return {
        "alice": alice,
        "bob": bob,
        "days": (day1, day2, day3),
        "runs": runs,
        "outside": outside,
    }


def sums(runs: list[AgentRun]) -> dict[str, int]:
    """The run records' own totals."""
    return {name: sum(getattr(r, name) for r in runs) for name in (*TOKENS, "total_tokens")}
