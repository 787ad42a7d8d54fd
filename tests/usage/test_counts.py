"""``usage.counts``: the one list of a run's usage counts names columns that both the
run's record and each model's share of it have, as whole numbers."""

from __future__ import annotations

from django.db import models

from django_agent_sessions.models import AgentRun, RunModelUsage
from django_agent_sessions.usage.counts import COUNTS


def test_every_count_is_a_whole_number_column_of_the_run_and_of_its_models():
    for model in (AgentRun, RunModelUsage):
        for name in COUNTS:
            field = model._meta.get_field(name)
            assert isinstance(field, models.PositiveIntegerField | models.PositiveBigIntegerField)


def test_the_runs_usage_columns_are_all_counted():
    counted = {
        field.name
        for field in RunModelUsage._meta.get_fields()
        if isinstance(field, models.PositiveIntegerField | models.PositiveBigIntegerField)
    }
    assert counted == set(COUNTS)
    assert len(COUNTS) == len(set(COUNTS))
