"""Tool approvals in the admin: pending and decided calls, read-only."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession, ToolApproval
from tests.admin.helpers import staff

pytestmark = pytest.mark.django_db
CHANGELIST = reverse("admin:django_agent_sessions_toolapproval_changelist")


@pytest.fixture
def approvals():
    decider = staff("alice")
    session = AgentSession.objects.create(session_id="conv-approvals", owner=decider)
    run = AgentRun.objects.create(session=session, status="waiting", agent_name="Payments")
    pending = ToolApproval.objects.create(
        run=run, call_id="call-1", name="send_payment", arguments='{"to": "<b>ann</b>"}'
    )
    decided = ToolApproval.objects.create(
        run=run,
        call_id="call-2",
        name="delete_files",
        decision="rejected",
        decided_by=decider,
        decided_at=timezone.now(),
    )
    return pending, decided


def test_staff_see_pending_and_decided_calls_and_change_nothing(client, approvals):
    pending, _decided = approvals
    client.force_login(staff("viewer", "view_toolapproval"))
    page = client.get(CHANGELIST).content.decode()
    assert "send_payment" in page
    assert "delete_files" in page
    assert "conv-approvals" in page
    assert "pending" in page
    assert "alice" in page
    assert "Add tool approval" not in page

    only_pending = client.get(CHANGELIST, {"state": "pending"}).content.decode()
    assert "send_payment" in only_pending
    assert "delete_files" not in only_pending

    url = reverse("admin:django_agent_sessions_toolapproval_change", args=[pending.pk])
    detail = client.get(url).content.decode()
    assert "&lt;b&gt;ann&lt;/b&gt;" in detail
    assert "<b>ann</b>" not in detail
    assert 'name="_save"' not in detail
    assert client.post(url, {"decision": "approved"}).status_code == 403
    delete = reverse("admin:django_agent_sessions_toolapproval_delete", args=[pending.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert ToolApproval.objects.get(pk=pending.pk).decision is None


def test_staff_without_the_view_permission_see_nothing(client, approvals):
    client.force_login(staff("nobody", "view_agentsession"))
    assert client.get(CHANGELIST).status_code == 403
