"""``store.runs``: a run's record from start to end, and no end without a valid history.

The run constraint and the basic lease takeover are in ``tests/websocket/test_records.py``;
these tests call the sync functions directly and check what each transition stores: the
outputs of calls left open, where the run's items end, the lost runs a start or a sweep
ends, and the sequence number a lease renewal notes.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from agents.usage import Usage
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from pytest_django import DjangoAssertNumQueries

from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.store import open_calls, runs
from django_agent_sessions.store.usage import Spent
from tests.conftest import assistant_message, user_message
from tests.store.helpers import call, item_ids, output, outputs_of, start, user, write

pytestmark = pytest.mark.django_db

USAGE = Usage(requests=1, input_tokens=10, output_tokens=5, total_tokens=15)


def let_lease_run_out(run_pk: int) -> None:
    # The worker died: nobody renews the lease, and it is in the past.
    past = timezone.now() - timedelta(seconds=1)
    AgentRun.objects.filter(pk=run_pk).update(lease_expires_at=past)


def test_a_start_records_the_run_trimmed_to_its_columns(session_id: str) -> None:
    conversation = write(session_id, user_message("hi"))
    started = start(conversation, agent_name="A" * 300, client_id="tab\x00-1" + "9" * 100)
    run = AgentRun.objects.get(pk=started.pk)
    assert (run.status, len(run.agent_name), run.client_id) == ("running", 255, "tab-1" + "9" * 59)
    assert started.history_item_id == item_ids(session_id)[-1]
    assert started.expired == ()


def test_a_waiting_run_holds_the_conversation_as_a_running_one(session_id: str) -> None:
    conversation = write(session_id, user_message("hi"))
    started = start(conversation)
    AgentRun.objects.filter(pk=started.pk).update(status="waiting")
    assert runs.start.sync(conversation.pk, agent_name="B", lease_seconds=60) is None
    assert AgentRun.objects.count() == 1


def test_a_start_ends_a_lost_run_first_and_closes_its_calls(session_id: str) -> None:
    owner = user("alice")
    conversation = write(session_id, user_message("hi"), owner_id=owner.pk)
    lost = start(conversation)
    write(session_id, call("c1"), owner_id=owner.pk)
    runs.renew_lease.sync(lost.pk, lease_seconds=60, seq=7)
    let_lease_run_out(lost.pk)
    taking_over = start(conversation)
    assert taking_over.expired == (
        runs.ExpiredRun(lost.pk, lost.run_id, conversation.pk, owner.pk, seq=7),
    )
    record = AgentRun.objects.get(pk=lost.pk)
    assert (record.status, record.error_code) == ("failed", runs.WORKER_LOST)
    # The lost run's open call got an output, before the new run's history starts.
    assert outputs_of(session_id) == {"c1": open_calls.LOST_CALL}
    assert record.last_item_id == item_ids(session_id)[-1] == taking_over.history_item_id


def test_a_sweep_ends_each_lost_run_once_and_only_lost_ones() -> None:
    lost_one, lost_two, alive = (write(f"c{n}", user_message("hi")) for n in range(3))
    for conversation in (lost_one, lost_two):
        let_lease_run_out(start(conversation).pk)
    alive_run = start(alive)
    only_one = runs.expire_stale.sync(lost_one.pk)
    assert [run.session_pk for run in only_one] == [lost_one.pk]
    assert [run.session_pk for run in runs.expire_stale.sync()] == [lost_two.pk]
    assert runs.expire_stale.sync() == []  # already ended: nobody ends them twice
    assert AgentRun.objects.get(pk=alive_run.pk).status == "running"


def test_a_renewal_notes_the_newest_seq_and_fails_once_the_run_ended(session_id: str) -> None:
    started = start(write(session_id, user_message("hi")))
    assert runs.renew_lease.sync(started.pk, lease_seconds=60, seq=5)
    assert runs.renew_lease.sync(started.pk, lease_seconds=60, seq=3)  # a late renewal
    assert AgentRun.objects.get(pk=started.pk).event_seq == 5  # never goes back
    assert runs.finish.sync(started.pk, status="completed", usage=USAGE) is not None
    assert not runs.renew_lease.sync(started.pk, lease_seconds=60, seq=9)
    assert AgentRun.objects.get(pk=started.pk).event_seq == 5


@pytest.mark.parametrize(
    ("status", "open_call_text", "expected"),
    [
        ("cancelled", "", open_calls.STOPPED_CALL),
        ("failed", "", open_calls.FAILED_CALL),
        ("interrupted", open_calls.INTERRUPTED_CALL, open_calls.INTERRUPTED_CALL),
    ],
)
def test_finish_gives_every_open_call_an_output(
    session_id: str, status: str, open_call_text: str, expected: str
) -> None:
    conversation = write(session_id, call("before"))  # not this run's: left alone
    started = start(conversation)
    write(session_id, call("c1"), output("c1", "sunny"), call("c2"), call("c3"))
    produced = {"c3": output("c3", "produced, not saved")}
    record = runs.finish.sync(
        started.pk,
        status=status,
        usage=USAGE,
        error_code="x" * 40,
        partial_text="Half\x00 a reply",
        outputs=produced,
        open_call_text=open_call_text,
    )
    assert record is not None
    assert (record.status, record.error_code, record.partial_text) == (
        status,
        "x" * 32,
        "Half a reply",
    )
    assert outputs_of(session_id) == {"c1": "sunny", "c2": expected, "c3": "produced, not saved"}
    assert record.last_item_id == item_ids(session_id)[-1]
    assert AgentSession.objects.get(pk=conversation.pk).item_count == 7


def test_a_run_taken_over_cannot_finish(session_id: str) -> None:
    started = start(write(session_id, user_message("hi")))
    let_lease_run_out(started.pk)
    assert len(runs.expire_stale.sync()) == 1
    assert runs.finish.sync(started.pk, status="completed", usage=USAGE) is None
    assert AgentRun.objects.get(pk=started.pk).status == "failed"


def test_a_run_deleted_with_its_conversation_ends_as_taken_over(session_id: str) -> None:
    conversation = write(session_id, user_message("hi"))
    started = start(conversation)
    conversation.delete()  # retention or the admin, while the run streams
    assert runs.finish.sync(started.pk, status="completed", usage=USAGE) is None
    assert not AgentSession.objects.filter(session_id=session_id).exists()


def test_a_run_deleted_while_its_end_is_told_ends_as_taken_over_given_its_conversation(
    session_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The run's task knows its conversation (``session_pk``): no query for it; a run
    deleted with it meanwhile still ends as nothing, and is not logged as taken over."""
    conversation = write(session_id, user_message("hi"))
    started = start(conversation)
    conversation.delete()
    ended = runs.finish.sync(
        started.pk, status="completed", usage=USAGE, session_pk=conversation.pk
    )
    assert ended is None
    assert "taken over" not in caplog.text


def test_given_its_conversation_a_run_ends_in_one_query_less(
    session_id: str, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    conversation = write(session_id, user_message("hi"))
    first = start(conversation)
    with CaptureQueriesContext(connection) as looked_up:
        runs.finish.sync(first.pk, status="completed", usage=USAGE)
    second = start(conversation)
    with django_assert_num_queries(len(looked_up) - 1):
        record = runs.finish.sync(
            second.pk, status="completed", usage=USAGE, session_pk=conversation.pk
        )
    assert record is not None
    assert (record.status, record.session_id) == ("completed", conversation.pk)


def test_the_end_sets_the_first_model_a_run_used_in_its_own_update(session_id: str) -> None:
    spent = Spent(by_model={"gpt-a": {"requests": 1, "output_tokens": 3}, "gpt-b": {"requests": 1}})
    started = start(write(session_id, user_message("hi")))
    runs.finish.sync(started.pk, status="completed", usage=USAGE, spent=spent)
    assert AgentRun.objects.get(pk=started.pk).model == "gpt-a"
    kept = start(AgentSession.objects.get(session_id=session_id))
    AgentRun.objects.filter(pk=kept.pk).update(model="gpt-earlier")  # a write before the end
    runs.finish.sync(kept.pk, status="completed", usage=USAGE, spent=spent)
    assert AgentRun.objects.get(pk=kept.pk).model == "gpt-earlier"


def test_finish_gives_the_runs_last_reply_and_none_without_one(session_id: str) -> None:
    conversation = write(session_id, user_message("hi"), assistant_message("Earlier reply."))
    started = start(conversation)
    write(session_id, user_message("again"), call("c1"), output("c1", "sunny"))
    record = runs.finish.sync(started.pk, status="cancelled", usage=USAGE)
    assert record is not None
    assert record.reply_item_id is None  # type: ignore[attr-defined]  # annotated
    # The person's message it answered: the first user message after the run began.
    assert record.user_item_id == item_ids(session_id)[2]  # type: ignore[attr-defined]
    next_run = start(conversation)
    write(session_id, user_message("and?"), assistant_message("First."), call("c2"))
    write(session_id, output("c2", "cloudy"), assistant_message("Last."))
    record = runs.finish.sync(next_run.pk, status="completed", usage=USAGE)
    assert record is not None
    assert record.reply_item_id == item_ids(session_id)[-1]  # type: ignore[attr-defined]
    assert record.user_item_id == item_ids(session_id)[-5]  # type: ignore[attr-defined]
