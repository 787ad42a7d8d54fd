"""``manage.py agent_sessions_prune``: deleting idle conversations, as an operator runs it."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import timezone

from django_agent_sessions.models import AgentSession
from tests.conversations import make_conversation, transcript_items

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture
def idle_and_active():
    now = timezone.now()
    make_conversation("c-idle", transcript_items(), updated_at=now - timedelta(days=45))
    make_conversation("c-active", transcript_items(), updated_at=now - timedelta(hours=2))


def test_prune_dry_run_then_for_real(idle_and_active):
    out = run("agent_sessions_prune", "--older-than", "30d", "--dry-run")
    assert out.startswith("Would delete 1 conversation(s) with 7 item(s) (no activity since ")
    assert AgentSession.objects.count() == 2
    out = run("agent_sessions_prune", "--older-than", "30d", "--batch-size", "1", "--no-input")
    assert out.startswith("Deleted 1 conversation(s) with 7 item(s)")
    assert list(AgentSession.objects.values_list("session_id", flat=True)) == ["c-active"]


def test_prune_short_age_reaches_recent_conversations(idle_and_active):
    out = run("agent_sessions_prune", "--older-than", "90min", "--no-input")
    assert out.startswith("Deleted 2 ")


@override_settings(AGENT_SESSIONS={"RETENTION": "30d"})
def test_prune_defaults_to_the_retention_setting(idle_and_active):
    assert run("agent_sessions_prune", "--no-input").startswith("Deleted 1 conversation(s)")


def test_prune_asks_before_deleting(idle_and_active, monkeypatch):
    prompts: list[str] = []
    answers = iter(["no", "yes"])
    monkeypatch.setattr("builtins.input", lambda prompt: prompts.append(prompt) or next(answers))
    assert run("agent_sessions_prune", "--older-than", "30d") == "Nothing deleted.\n"
    assert "This deletes 1 conversation(s) with 7 item(s)" in prompts[0]
    assert AgentSession.objects.count() == 2
    assert run("agent_sessions_prune", "--older-than", "30d").startswith("Deleted 1 ")
    assert AgentSession.objects.count() == 1
    # Nothing to delete: no question.
    assert run("agent_sessions_prune", "--older-than", "30d").startswith("No conversation ")
    assert len(prompts) == 2


def test_prune_refuses_an_ambiguous_month_or_minute():
    with pytest.raises(CommandError, match=r"Ambiguous duration '1m': write minutes as 'min'"):
        run("agent_sessions_prune", "--older-than", "1m", "--no-input")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), r"Pass --older-than \(e\.g\. 30d\) or set AGENT_SESSIONS\['RETENTION'\]"),
        (("--older-than", "soon"), "Invalid duration 'soon'"),
        (("--older-than", "1d", "--batch-size", "0"), "batch_size must be at least 1"),
    ],
)
def test_prune_errors(args, message):
    with pytest.raises(CommandError, match=message):
        run("agent_sessions_prune", *args)
