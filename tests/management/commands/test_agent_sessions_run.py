"""``manage.py agent_sessions_run``: a run started from a shell, with no tab open,
answered and stored (inline: the command waits for the run it hosts; as a task, the
immediate backend hands it to the run host); refusals are errors that name the problem."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import override_settings

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentRun

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = "tests.chat_agent.make_demo_agent"


def run_command(*args: str) -> list[str]:
    from io import StringIO

    out = StringIO()
    call_command("agent_sessions_run", *args, stdout=out)
    return out.getvalue().split()


@pytest.mark.parametrize("runs", ["inline", "tasks"])
def test_the_command_starts_a_run_and_reports_its_end(runs):
    owner = get_user_model().objects.create_user("ada")
    with override_settings(AGENT_SESSIONS={"AGENT": AGENT, "RUNS": runs, "RATE_LIMIT": None}):
        run_id, status = run_command("Good morning", "--session", "cron-1", "--owner", "ada")
    assert status == "completed"
    run = AgentRun.objects.select_related("session").get(run_id=run_id)
    assert (run.session.session_id, run.session.owner, run.order.origin) == (
        "cron-1",
        owner,
        "code",
    )
    items = async_to_sync(DjangoSession("cron-1").get_items)()
    assert items[-1]["content"][0]["text"] == "You said: Good morning"


def test_a_busy_conversation_or_an_unknown_owner_is_refused():
    with override_settings(AGENT_SESSIONS={"AGENT": AGENT, "RATE_LIMIT": None}):
        with pytest.raises(CommandError, match="No user 'nobody'"):
            run_command("Hi", "--owner", "nobody")
        with pytest.raises(CommandError, match="--context is not JSON"):
            run_command("Hi", "--context", "{oops")
        with pytest.raises(CommandError, match="waits"):
            run_command("Hi", "--no-wait")
