"""The tool approval row (``approvals/models.py``): still ``models.ToolApproval`` where
projects import it, one per call of a run, pending until decided, removed with its run."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from django_agent_sessions import models
from django_agent_sessions.approvals.models import ToolApproval
from django_agent_sessions.models import AgentRun, AgentSession

pytestmark = pytest.mark.django_db


def test_the_model_is_where_projects_import_it_and_keeps_its_table():
    assert models.ToolApproval is ToolApproval
    assert ToolApproval._meta.app_label == "django_agent_sessions"
    assert ToolApproval._meta.db_table == "django_agent_sessions_toolapproval"
    assert models.REJECTED_EXPIRED == ToolApproval.Reason.EXPIRED == "expired"


def test_one_row_per_call_pending_until_decided_and_gone_with_its_run():
    conversation = AgentSession.objects.create(session_id="c")
    run = AgentRun.objects.create(session=conversation, status="waiting")
    row = ToolApproval.objects.create(run=run, call_id="call_1", name="send_email")
    assert str(row) == "send_email call_1 (pending)"
    row.decision = ToolApproval.Decision.APPROVED
    assert str(row) == "send_email call_1 (approved)"
    with pytest.raises(IntegrityError), transaction.atomic():
        ToolApproval.objects.create(run=run, call_id="call_1", name="send_email")
    run.delete()
    assert not ToolApproval.objects.exists()
