"""``store.usage``: each model's share of a run added write by write, usage that only
grows, and a person's spending per period and model, summed by the database."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from agents.usage import Usage
from django.utils import timezone
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from django_agent_sessions.models import AgentRun, AgentSession, RunModelUsage
from django_agent_sessions.store import usage
from django_agent_sessions.store.usage import Spent, usage_counts, write_spent
from django_agent_sessions.usage.counts import COUNTS

pytestmark = pytest.mark.django_db(transaction=True)


def _counts(total: int, **more: int) -> dict[str, int]:
    return {**dict.fromkeys(COUNTS, 0), "requests": 1, "total_tokens": total, **more}


def _run(owner: Any, started_days_ago: float = 0, total: int = 0, **fields: Any) -> AgentRun:
    session = AgentSession.objects.create(
        session_id=f"u-{AgentSession.objects.count()}", owner=owner
    )
    started = timezone.now() - timedelta(days=started_days_ago)
    return AgentRun.objects.create(
        session=session, started_at=started, status="completed", total_tokens=total, **fields
    )


def test_usage_counts_take_cached_and_reasoning_tokens_from_the_details():
    counted = usage_counts(
        Usage(
            requests=2,
            input_tokens=100,
            input_tokens_details=InputTokensDetails(cached_tokens=40, cache_write_tokens=0),
            output_tokens=30,
            output_tokens_details=OutputTokensDetails(reasoning_tokens=12),
            total_tokens=130,
        )
    )
    assert counted == {
        "requests": 2,
        "input_tokens": 100,
        "cached_tokens": 40,
        "output_tokens": 30,
        "reasoning_tokens": 12,
        "total_tokens": 130,
    }


def test_each_write_adds_to_the_models_share_and_the_first_model_names_the_run(make_user):
    run = _run(make_user("ann"))
    write_spent(run.pk, Spent(by_model={"small": _counts(10), "large": _counts(100)}))
    write_spent(run.pk, Spent(by_model={"small": _counts(5)}))
    write_spent(run.pk, Spent(by_model={"other": dict.fromkeys(COUNTS, 0)}))  # nothing
    shares = dict(RunModelUsage.objects.filter(run=run).values_list("model", "total_tokens"))
    assert shares == {"small": 15, "large": 100}
    assert RunModelUsage.objects.get(run=run, model="small").requests == 2
    run.refresh_from_db()
    assert run.model == "small"


def test_a_runs_totals_only_grow(make_user):
    run = _run(make_user("ann"), total=500)
    AgentRun.objects.filter(pk=run.pk).update(**Spent(totals=_counts(200)).run_fields())
    run.refresh_from_db()
    assert run.total_tokens == 500  # an end that knows less keeps what a renewal wrote
    AgentRun.objects.filter(pk=run.pk).update(**Spent(totals=_counts(800)).run_fields())
    run.refresh_from_db()
    assert run.total_tokens == 800


def test_spent_by_sums_a_persons_runs_since_each_time_and_a_models_share(make_user):
    ann, bob = make_user("ann"), make_user("bob")
    today = _run(ann, 0, total=100)
    write_spent(today.pk, Spent(by_model={"large": _counts(60), "small": _counts(40)}))
    old = _run(ann, 3, total=1000)
    write_spent(old.pk, Spent(by_model={"large": _counts(1000)}))
    _run(bob, 0, total=7)  # another person's
    now = timezone.now()
    every, of_model = usage.spent_by.sync(
        ann.pk,
        {"day": now - timedelta(hours=1), "week": now - timedelta(days=7)},
        model="large",
        model_since={"model_day": now - timedelta(hours=1), "model_week": now - timedelta(days=7)},
    )
    assert every == {"day": 100, "week": 1100}
    assert of_model == {"model_day": 60, "model_week": 1060}


def test_spent_by_a_person_with_no_runs_is_zero(make_user):
    every, of_model = usage.spent_by.sync(make_user("new").pk, {"day": timezone.now()})
    assert every == {"day": 0}
    assert of_model == {}
