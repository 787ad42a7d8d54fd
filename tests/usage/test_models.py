"""A run's usage by model (``usage/models.py``): one row per model per run, what it reads
as, removed with its run."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from django_agent_sessions.models import AgentRun
from django_agent_sessions.usage.models import RunModelUsage
from tests.conversations import make_conversation

pytestmark = pytest.mark.django_db


def test_one_row_per_model_of_a_run_removed_with_the_run():
    run = AgentRun.objects.create(session=make_conversation("c-1", []))
    row = RunModelUsage.objects.create(run=run, model="gpt-5", requests=1, total_tokens=120)
    assert str(row) == "gpt-5: 120 tokens"
    with pytest.raises(IntegrityError), transaction.atomic():
        RunModelUsage.objects.create(run=run, model="gpt-5")
    RunModelUsage.objects.create(run=run, model="gpt-5-mini")  # a handoff to another model
    assert sorted(run.model_usage.values_list("model", flat=True)) == ["gpt-5", "gpt-5-mini"]
    run.delete()
    assert not RunModelUsage.objects.exists()
