"""The AgentRun admin (read-only) and run notes in the conversation transcript."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession, SessionItem
from tests.admin.helpers import staff

pytestmark = pytest.mark.django_db


@pytest.fixture
def run_viewer(client):
    client.force_login(staff("runs", "view_agentrun", "view_agentsession"))
    return client


def _conversation_with_a_stopped_run() -> tuple[AgentSession, AgentRun]:
    conversation = AgentSession.objects.create(session_id="c-1", title="Story")
    item = SessionItem.objects.create(
        session=conversation, payload='{"role":"user","content":"tell me a story"}',
        item_type="message", role="user",
    )  # fmt: skip
    now = timezone.now()
    run = AgentRun.objects.create(
        session=conversation,
        status="cancelled",
        agent_name="Assistant",
        started_at=now - timedelta(seconds=3),
        finished_at=now,
        history_item_id=item.pk - 1,
        last_item_id=item.pk,
        partial_text="Once upon a <b>time</b>",
        total_tokens=42,
    )
    return conversation, run


def test_runs_are_listed_read_only_with_duration_and_a_link(run_viewer):
    conversation, run = _conversation_with_a_stopped_run()
    page = run_viewer.get(reverse("admin:django_agent_sessions_agentrun_changelist"))
    assert page.status_code == 200
    body = page.content.decode()
    assert str(run.run_id) in body
    assert "3.0 s" in body
    assert (
        reverse("admin:django_agent_sessions_agentsession_change", args=[conversation.pk]) in body
    )
    detail = run_viewer.get(
        reverse("admin:django_agent_sessions_agentrun_change", args=[run.pk])
    ).content.decode()
    assert "Once upon a &lt;b&gt;time&lt;/b&gt;" in detail  # escaped
    assert 'name="status"' not in detail  # nothing to edit
    assert run_viewer.get(reverse("admin:django_agent_sessions_agentrun_add")).status_code == 403
    deleted = run_viewer.post(
        reverse("admin:django_agent_sessions_agentrun_delete", args=[run.pk]), {"post": "yes"}
    )
    assert deleted.status_code == 403
    assert AgentRun.objects.filter(pk=run.pk).exists()


def test_the_transcript_shows_a_stopped_reply_after_its_message(run_viewer):
    conversation, _run = _conversation_with_a_stopped_run()
    body = run_viewer.get(
        reverse("admin:django_agent_sessions_agentsession_change", args=[conversation.pk])
    ).content.decode()
    message = body.index("tell me a story")
    note = body.index('data-status="cancelled"')
    assert message < note
    assert "Assistant (stopped)" in body
    assert "Once upon a &lt;b&gt;time&lt;/b&gt;" in body


def test_runs_say_where_they_were_started_and_which_worker_ran_them(run_viewer):
    from django_agent_sessions.models import RunOrder

    _conversation, from_a_tab = _conversation_with_a_stopped_run()
    scheduled = AgentRun.objects.create(session=_conversation, status="completed")
    RunOrder.objects.create(run=scheduled, origin="schedule", claimed=1, claimed_by="box-7:4242")
    changelist = reverse("admin:django_agent_sessions_agentrun_changelist")
    body = run_viewer.get(changelist).content.decode()
    assert "a tab" in body
    assert "a schedule" in body
    only_scheduled = run_viewer.get(changelist, {"order__origin": "schedule"}).content.decode()
    assert str(scheduled.run_id) in only_scheduled
    assert str(from_a_tab.run_id) not in only_scheduled
    detail = reverse("admin:django_agent_sessions_agentrun_change", args=[scheduled.pk])
    assert "box-7:4242" in run_viewer.get(detail).content.decode()
