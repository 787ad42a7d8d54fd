"""The run's page in the admin shows its trace id, as a link to the operator's tracing
system when ``TELEMETRY["TRACE_URL"]`` is set; the run list finds a run by trace id."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from django_agent_sessions.models import AgentRun, AgentSession
from tests.admin.helpers import staff

pytestmark = pytest.mark.django_db

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


@pytest.fixture
def run_viewer(client: Any) -> Any:
    client.force_login(staff("runs", "view_agentrun", "view_agentsession"))
    return client


@pytest.fixture
def run() -> AgentRun:
    conversation = AgentSession.objects.create(session_id="c-traced")
    return AgentRun.objects.create(session=conversation, status="completed", trace_id=TRACE_ID)


def page_of(client: Any, run: AgentRun) -> str:
    url = reverse("admin:django_agent_sessions_agentrun_change", args=[run.pk])
    response = client.get(url)
    assert response.status_code == 200
    return str(response.content.decode())


def test_the_trace_id_links_to_the_trace(run_viewer: Any, run: AgentRun, settings: Any) -> None:
    telemetry = {"TRACE_URL": "https://jaeger.example/trace/{trace_id}?x=1&y=2"}
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "TELEMETRY": telemetry}
    body = page_of(run_viewer, run)
    assert f'<a href="https://jaeger.example/trace/{TRACE_ID}?x=1&amp;y=2">{TRACE_ID}</a>' in body


def test_without_a_url_the_trace_id_is_text(run_viewer: Any, run: AgentRun) -> None:
    body = page_of(run_viewer, run)
    assert TRACE_ID in body
    assert "jaeger" not in body


def test_a_run_is_found_by_its_trace_id(run_viewer: Any, run: AgentRun) -> None:
    url = reverse("admin:django_agent_sessions_agentrun_changelist")
    body = run_viewer.get(url, {"q": TRACE_ID}).content.decode()
    assert str(run.run_id) in body
