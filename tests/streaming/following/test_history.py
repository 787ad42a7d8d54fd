"""``history``: a conversation's stored history as one socket gets it, from the real
database: the ``history`` frame (items within ``HISTORY_LIMIT``, the run in flight, the
calls waiting for a decision), the ``history.page`` frames of older items, and a run's
recorded progress."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem, ToolApproval
from django_agent_sessions.streaming.following import history
from django_agent_sessions.streaming.wire.protocol import PROTOCOL_VERSION
from tests.conftest import user_message

pytestmark = pytest.mark.django_db(transaction=True)


class Sent(list[Any]):
    """What a socket was sent: its ``send``."""

    async def __call__(self, frame: Any) -> None:
        self.append(frame)


async def conversation(session_id: str, count: int) -> tuple[int, list[int]]:
    """A conversation of ``count`` user messages; its pk and its items' ids."""
    await DjangoSession(session_id).add_items([user_message(f"m{n}") for n in range(count)])
    session = await AgentSession.objects.aget(session_id=session_id)
    ids = [
        pk async for pk in SessionItem.objects.filter(session=session).values_list("id", flat=True)
    ]
    return int(session.pk), sorted(ids)


async def test_the_history_frame_holds_the_latest_items_within_the_limit(
    settings: Any, session_id: str
) -> None:
    settings.AGENT_SESSIONS = {"HISTORY_LIMIT": 3}
    pk, ids = await conversation(session_id, 5)
    sent = Sent()
    stored = await history.load(pk, up_to_item_id=None)
    assert await history.send_frame(sent, pk, stored, None) == []
    [frame] = sent
    assert (frame["type"], frame["protocol"]) == ("history", PROTOCOL_VERSION)
    assert [item["text"] for item in frame["items"]] == ["m2", "m3", "m4"]
    assert (frame["has_more"], frame["oldest_id"], frame["last_item_id"]) == (True, ids[2], ids[4])
    assert (frame["active_run"], frame["pending_approvals"]) == (None, [])


async def test_a_history_up_to_an_item_leaves_out_what_came_after(session_id: str) -> None:
    pk, ids = await conversation(session_id, 4)
    stored = await history.load(pk, up_to_item_id=ids[1])
    # (What a run in flight added after its start comes with its snapshot instead.)
    assert [entry.id for entry in stored.entries] == ids[:2]


async def test_older_pages_end_before_the_item_asked(settings: Any, session_id: str) -> None:
    settings.AGENT_SESSIONS = {"HISTORY_LIMIT": 2}
    pk, ids = await conversation(session_id, 5)
    sent = Sent()
    await history.send_page(sent, pk, ids[3])
    await history.send_page(sent, pk, ids[1])
    await history.send_page(sent, None, 7)  # a conversation not created yet
    assert [(p["type"], p["before"]) for p in sent] == [
        ("history.page", ids[3]),
        ("history.page", ids[1]),
        ("history.page", 7),
    ]
    assert [[i["text"] for i in page["items"]] for page in sent] == [["m1", "m2"], ["m0"], []]
    assert [page["has_more"] for page in sent] == [True, False, False]


async def test_a_new_conversation_gets_an_empty_history() -> None:
    sent = Sent()
    await history.send_empty_frame(sent)
    assert sent == [
        {
            "type": "history",
            "protocol": PROTOCOL_VERSION,
            "items": [],
            "has_more": False,
            "oldest_id": None,
            "last_item_id": None,
            "active_run": None,
            "pending_approvals": [],
            "queued": [],
        }
    ]


async def test_the_frame_lists_the_calls_of_a_waiting_run(session_id: str) -> None:
    pk, _ids = await conversation(session_id, 1)
    expires = timezone.now() + timedelta(hours=1)
    run = await AgentRun.objects.acreate(
        session_id=pk, status="waiting", event_seq=6, approval_expires_at=expires
    )
    await ToolApproval.objects.acreate(run=run, call_id="c1", name="pay", arguments="{}")
    await ToolApproval.objects.acreate(run=run, call_id="c0", name="pay", decision="approved")
    sent = Sent()
    calls = await history.send_frame(sent, pk, await history.load(pk, up_to_item_id=None), None)
    # Only the call still waiting; its seq lets the tab number the resumed run's events.
    assert [(c.run_id, c.call_id, c.seq) for c in calls] == [(str(run.run_id), "c1", 6)]
    [waiting] = sent[0]["pending_approvals"]
    assert (waiting["call_id"], waiting["run_id"]) == ("c1", str(run.run_id))
    assert waiting["expires_at"] == expires.isoformat()


async def test_a_runs_progress_is_its_status_and_last_recorded_seq(session_id: str) -> None:
    pk, _ids = await conversation(session_id, 1)
    run = await AgentRun.objects.acreate(session_id=pk, status="waiting", event_seq=9)
    assert await history.run_progress(pk, str(run.run_id)) == ("waiting", 9)
    assert await history.run_progress(pk, str(uuid.uuid4())) is None
    assert await history.run_progress(pk, "not a run id") is None
    other, _ = await conversation(f"{session_id}-other", 1)
    assert await history.run_progress(other, str(run.run_id)) is None  # not its run
