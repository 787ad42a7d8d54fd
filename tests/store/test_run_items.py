"""``with_item_ids``: a run names only the messages inside its own window of items
(after ``history_item_id``, up to ``last_item_id``): the person's first message there
and the newest reply, never those of the run before or after it. ``end_record``: the
same, with the conversation and the title wish, from one query built once."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from django_agent_sessions.models import AgentRun
from django_agent_sessions.store.run_items import end_record, with_item_ids
from tests.conftest import assistant_message, user_message
from tests.store.helpers import item_ids, write

pytestmark = pytest.mark.django_db


def test_a_run_names_the_message_it_answered_and_its_newest_reply(session_id: str) -> None:
    conversation = write(
        session_id,
        user_message("before"),
        assistant_message("old reply"),
        user_message("asked"),
        assistant_message("first part"),
        assistant_message("newest reply"),
        user_message("the next run's"),
        assistant_message("the next run's reply"),
    )
    ids = item_ids(session_id)
    run = AgentRun.objects.create(session=conversation, history_item_id=ids[1], last_item_id=ids[4])
    named = with_item_ids(AgentRun.objects.filter(pk=run.pk)).get()
    assert (named.user_item_id, named.reply_item_id) == (ids[2], ids[4])  # type: ignore[attr-defined]


def test_a_run_without_messages_names_none(session_id: str) -> None:
    conversation = write(session_id, user_message("before"))
    newest = item_ids(session_id)[-1]
    run = AgentRun.objects.create(session=conversation, history_item_id=newest, last_item_id=newest)
    named = with_item_ids(AgentRun.objects.filter(pk=run.pk)).get()
    assert (named.user_item_id, named.reply_item_id) == (None, None)  # type: ignore[attr-defined]


def test_the_end_record_query_built_once_reads_each_run_as_its_own() -> None:
    runs = []
    for number in range(3):
        conversation = write(
            f"end-record-{number}",
            user_message(f"asked {number}"),
            assistant_message(f"reply {number}"),
        )
        ids = item_ids(f"end-record-{number}")
        run = AgentRun.objects.create(
            session=conversation,
            history_item_id=0,
            last_item_id=ids[-1],
            status=AgentRun.Status.COMPLETED,
        )
        runs.append((run.pk, conversation.pk, ids))
    for _pass in range(2):  # the shared query is cloned each time, never changed
        for run_pk, conversation_pk, ids in runs:
            found = end_record().get(pk=run_pk)
            assert found.session.pk == conversation_pk
            assert (found.user_item_id, found.reply_item_id) == (ids[0], ids[1])  # type: ignore[attr-defined]
            assert found.title_from.startswith("asked")  # type: ignore[attr-defined]
    assert end_record.cache_info().misses <= 1


@pytest.mark.django_db(transaction=True)
def test_the_end_record_query_is_read_from_several_threads_at_once() -> None:
    conversation = write("end-record-threads", user_message("asked"), assistant_message("reply"))
    ids = item_ids("end-record-threads")
    run = AgentRun.objects.create(session=conversation, history_item_id=0, last_item_id=ids[-1])
    found: list[tuple[object, object]] = []
    failed: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(20):
                record = end_record().get(pk=run.pk)
                found.append((record.user_item_id, record.reply_item_id))  # type: ignore[attr-defined]
        except BaseException as error:  # reported below, in the test's thread
            failed.append(error)
        finally:
            connections.close_all()  # this thread's own connection

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failed
    assert found == [(ids[0], ids[1])] * 80
