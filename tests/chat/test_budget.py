"""The chat page's budget line (QUOTAS["SHOW_REMAINING"]): what is left of the tightest
budget and when it refills, only for a person with a budget, only when asked for."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from django_agent_sessions.models import AgentRun, AgentSession
from tests.chat.helpers import logged_in, url

pytestmark = pytest.mark.django_db(transaction=True)


def _page(client: Any) -> str:
    return client.get(url("conversation", "budget-page")).content.decode()


def _spend(owner: Any, tokens: int) -> None:
    session = AgentSession.objects.create(session_id="spent", owner=owner)
    AgentRun.objects.create(session=session, status="completed", total_tokens=tokens)


def test_the_page_shows_the_tokens_left_when_asked_to(settings, alice):
    quotas = {"TOKENS_PER_DAY": 5000, "TOKENS_PER_MONTH": 100_000, "SHOW_REMAINING": True}
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "QUOTAS": quotas}
    _spend(alice, 1200)
    page = _page(logged_in(alice))
    assert 'data-remaining="3800"' in page
    assert "3800 tokens left until" in page


def test_nothing_is_shown_unless_asked_for_or_to_the_exempt(settings, alice, make_user):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "QUOTAS": {"TOKENS_PER_DAY": 5000}}
    assert 'id="budget"' not in _page(logged_in(alice))
    quotas = {"TOKENS_PER_DAY": 5000, "SHOW_REMAINING": True}
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "QUOTAS": quotas}
    staff = make_user("staff")
    staff.is_staff = True
    staff.save()
    assert 'id="budget"' not in _page(logged_in(staff))
    assert 'id="budget"' in _page(logged_in(alice))


def test_the_budget_view_answers_what_the_line_shows(settings, alice, make_user):
    quotas = {"TOKENS_PER_DAY": 5000, "SHOW_REMAINING": True}
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "QUOTAS": quotas}
    _spend(alice, 6000)
    answer = logged_in(alice).get(reverse("django_agent_sessions:budget")).json()
    assert answer["remaining"] == 0  # never below nothing
    assert answer["resets"]
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "QUOTAS": {"TOKENS_PER_DAY": 5000}}
    assert logged_in(alice).get(reverse("django_agent_sessions:budget")).json() == {}
