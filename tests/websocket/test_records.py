"""store.runs: the run constraint, leases and takeover; conversations' ownership."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from agents.usage import Usage
from asgiref.sync import async_to_sync
from django.db.utils import IntegrityError
from django.utils import timezone

from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem
from django_agent_sessions.store import conversations
from django_agent_sessions.store import runs as store_runs
from tests.processes import json_lists_from

# The store's operations as sync code calls them, through their hop.
start_run = async_to_sync(store_runs.start)
finish_run = async_to_sync(store_runs.finish)
renew_lease = async_to_sync(store_runs.renew_lease)
read_history = async_to_sync(conversations.aread_history)
open_conversation = async_to_sync(conversations.aopen_conversation)

pytestmark = pytest.mark.django_db(transaction=True)
USAGE = Usage(requests=2, input_tokens=30, output_tokens=12, total_tokens=42)


@pytest.fixture
def conversation(session_id):
    return AgentSession.objects.create(session_id=session_id)


def start(conversation, lease=60.0):
    return start_run(conversation.pk, agent_name="Assistant", lease_seconds=lease)


def test_one_running_run_per_conversation(conversation):
    first = start(conversation)
    assert first is not None
    assert start(conversation) is None
    assert AgentRun.objects.get().status == "running"
    finish_run(first.pk, status="completed", usage=USAGE)
    assert start(conversation) is not None


def test_the_database_itself_refuses_a_second_running_run(conversation):
    AgentRun.objects.create(session=conversation)
    with pytest.raises(IntegrityError):
        AgentRun.objects.create(session=conversation)


def test_runs_of_different_conversations_are_independent(conversation):
    other = AgentSession.objects.create(session_id="other")
    assert start(conversation) is not None
    assert start(other) is not None


def test_finish_records_status_usage_and_error(conversation):
    started = start(conversation)
    record = finish_run(started.pk, status="failed", usage=USAGE, error="Boom: x")
    assert record is not None
    assert (record.status, record.error, record.total_tokens) == ("failed", "Boom: x", 42)
    assert (record.requests, record.input_tokens, record.output_tokens) == (2, 30, 12)
    assert record.finished_at is not None
    assert str(record.run_id) == started.run_id


def test_a_run_remembers_where_history_stood(conversation):
    SessionItem.objects.create(session=conversation, payload="{}")
    newest = SessionItem.objects.create(session=conversation, payload="{}")
    assert start(conversation).history_item_id == newest.pk


def test_a_run_with_an_expired_lease_is_taken_over(conversation):
    crashed = start(conversation, lease=60)
    # The worker died: nobody renews the lease, and it runs out.
    AgentRun.objects.filter(pk=crashed.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert read_history(conversation.pk, up_to_item_id=None, limit=None).active_run_id is None

    taking_over = start(conversation)
    assert taking_over is not None
    old = AgentRun.objects.get(pk=crashed.pk)
    assert old.status == "failed"
    assert old.error == store_runs.STALE_RUN_ERROR
    # The old worker, if it was only slow, learns that it lost the run.
    assert renew_lease(crashed.pk, lease_seconds=60) is False
    assert finish_run(crashed.pk, status="completed", usage=USAGE) is None
    assert AgentRun.objects.get(pk=crashed.pk).status == "failed"


def test_a_renewed_lease_keeps_the_run(conversation):
    # A lease that ran out (no clock to wait for: it ends as it starts), then renewed
    # before anyone swept it; without the renewal the start below would take over.
    started = start(conversation, lease=0)
    assert AgentRun.objects.get(pk=started.pk).lease_expires_at <= timezone.now()
    assert renew_lease(started.pk, lease_seconds=60) is True
    assert start(conversation) is None  # inside the renewed lease
    assert AgentRun.objects.get(pk=started.pk).status == "running"


def test_load_history_limits_and_stops_at_a_watermark(conversation):
    items = [
        SessionItem.objects.create(session=conversation, payload=json.dumps({"n": n}))
        for n in range(5)
    ]
    history = read_history(conversation.pk, up_to_item_id=items[3].pk, limit=2)
    assert history.items == [{"n": 2}, {"n": 3}]
    assert read_history(conversation.pk, up_to_item_id=None, limit=None).items == [
        {"n": n} for n in range(5)
    ]


def test_open_session_creates_and_checks_the_owner(make_user, session_id):
    alice, bob = make_user("alice"), make_user("bob")
    opened = open_conversation(session_id, owner_id=alice.pk)
    assert AgentSession.objects.get(pk=opened.pk).owner_id == alice.pk
    assert opened.created
    again = open_conversation(session_id, owner_id=alice.pk)
    assert (again.pk, again.session_id, again.created) == (opened.pk, session_id, False)
    with pytest.raises(SessionOwnershipError):
        open_conversation(session_id, owner_id=bob.pk)
    with pytest.raises(SessionOwnershipError):
        open_conversation(session_id, owner_id=None)
    # An unowned conversation (trusted server code made it) is not anyone's to claim.
    AgentSession.objects.create(session_id="server-made")
    with pytest.raises(SessionOwnershipError):
        open_conversation("server-made", owner_id=alice.pk)


RACE_SCRIPT = """
import json, sys, time
import django
django.setup()
from asgiref.sync import async_to_sync

from django_agent_sessions.store import runs

pks, start_at = json.loads(sys.argv[1]), float(sys.argv[2])
while time.time() < start_at:
    time.sleep(0.001)
won = []
for pk in pks:
    started = async_to_sync(runs.start)(pk, agent_name="racer", lease_seconds=60)
    if started is not None:
        won.append(pk)
print(json.dumps(won))
"""


def test_the_run_constraint_holds_across_processes():
    """Two worker processes start runs on the same conversations at the same moment."""
    pks = [AgentSession.objects.create(session_id=f"race-{n}").pk for n in range(40)]
    start_at = time.time() + 3  # both processes are set up by then
    won = json_lists_from(RACE_SCRIPT, json.dumps(pks), str(start_at), processes=2)
    assert sorted(won) == pks  # every conversation got exactly one run
    assert AgentRun.objects.filter(status="running").count() == len(pks)
