"""``manage.py agent_sessions_sweep``: a run whose worker died, in a conversation nobody
has open, is ended by the command; ``--every`` takes a positive number; the thread that
called it may host runs again afterwards."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.streaming.visiting import queue_sending
from tests.conversations import make_conversation

pytestmark = pytest.mark.django_db(transaction=True)


def _sweep(*args: str) -> str:
    out = io.StringIO()
    call_command("agent_sessions_sweep", *args, stdout=out)
    return out.getvalue()


def test_a_run_whose_lease_expired_is_ended_once():
    lost = AgentRun.objects.create(
        session=make_conversation("c-1", [{"role": "user", "content": "hi"}]),
        lease_expires_at=timezone.now() - timedelta(minutes=5),
    )
    alive = AgentRun.objects.create(
        session=make_conversation("c-2", []),
        lease_expires_at=timezone.now() + timedelta(minutes=5),
    )
    assert _sweep() == (
        "Ended 1 run(s) whose worker died and 0 approval wait(s) past their timeout.\n"
    )
    lost.refresh_from_db()
    assert (lost.status, lost.error_code) == ("failed", "worker_lost")
    assert AgentRun.objects.get(pk=alive.pk).status == "running"
    assert _sweep().startswith("Ended 0 run(s)")


@pytest.mark.parametrize("every", ["0", "-1"])
def test_every_takes_a_positive_number_of_seconds(every):
    with pytest.raises(CommandError, match="--every takes a positive number of seconds"):
        _sweep("--every", every)


def test_temporary_chats_past_their_ttl_are_removed(settings):
    settings.AGENT_SESSIONS = {"TEMPORARY_TTL": "1h"}
    idle = make_conversation("idle", [{"role": "user", "content": "hi"}])
    fresh = make_conversation("fresh", [{"role": "user", "content": "hi"}])
    AgentSession.objects.filter(pk__in=[idle.pk, fresh.pk]).update(temporary=True)
    AgentSession.objects.filter(pk=idle.pk).update(updated_at=timezone.now() - timedelta(hours=2))
    assert _sweep().endswith("Removed 1 temporary chat(s) due for removal.\n")
    assert list(AgentSession.objects.values_list("session_id", flat=True)) == ["fresh"]


def test_the_thread_that_called_it_still_sends_queued_messages_afterwards():
    # The command hosts no runs while it sweeps; async_to_sync copies its context back
    # to this thread, so a flag it merely set would stop this thread's queues for good.
    _sweep()
    assert queue_sending.hosts_runs()
