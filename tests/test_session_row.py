"""The conversation row DjangoSession's writes keep up to date: its title, its item count,
and an updated_at that orders each owner's conversations by their latest write."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from django_agent_sessions.models import AgentSession
from django_agent_sessions.store.clock import UPDATED_AT_RESOLUTION
from tests.conftest import assistant_message, user_message
from tests.session_helpers import numbered

pytestmark = pytest.mark.django_db(transaction=True)


async def test_the_title_is_the_start_of_the_first_user_message_with_text(make_session):
    session = make_session()
    words = " ".join(f"word{i}" for i in range(40))
    await session.add_items(
        [
            assistant_message("not the user"),
            user_message(" \n\t "),
            {"role": "user", "content": [{"type": "input_text", "text": f"\n{words}"}]},
        ]
    )
    row = await AgentSession.objects.aget(session_id=session.session_id)
    assert row.title == words[:80]


async def test_item_count_and_title_follow_writes(make_session):
    session = make_session()
    await session.add_items([{"type": "reasoning", "id": "r", "summary": []}])
    await session.add_items([user_message("  What is\nthe weather?  "), assistant_message("Sun")])
    row = await AgentSession.objects.aget(session_id=session.session_id)
    assert (row.item_count, row.title) == (3, "What is the weather?")
    await session.add_items([user_message("second question")])
    row = await AgentSession.objects.aget(session_id=session.session_id)
    assert (row.item_count, row.title) == (4, "What is the weather?")


async def _age_updated_at(session_id: str, by: timedelta) -> datetime:
    old = timezone.now() - by
    await AgentSession.objects.filter(session_id=session_id).aupdate(updated_at=old)
    return old


async def _updated_at(session_id: str) -> datetime:
    return (await AgentSession.objects.aget(session_id=session_id)).updated_at


@pytest.mark.parametrize("operation", ["add", "pop", "clear"])
async def test_every_write_moves_an_older_updated_at_to_now(make_session, operation):
    session = make_session()
    await session.add_items(numbered(2))
    await _age_updated_at(session.session_id, timedelta(days=40))
    before = timezone.now()
    if operation == "add":
        await session.add_items(numbered(1))
    elif operation == "pop":
        await session.pop_item()
    else:
        await session.clear_session()
    assert before <= await _updated_at(session.session_id) <= timezone.now()


async def test_writes_within_the_resolution_leave_updated_at_alone(make_session):
    """The two indexes on updated_at are rewritten at most once per resolution."""
    session = make_session()
    await session.add_items(numbered(1))
    recent = await _age_updated_at(session.session_id, UPDATED_AT_RESOLUTION / 2)
    await session.add_items(numbered(1))
    await session.pop_item()
    assert await _updated_at(session.session_id) == recent
    await _age_updated_at(session.session_id, UPDATED_AT_RESOLUTION * 2)
    await session.pop_item()
    assert await _updated_at(session.session_id) > recent


async def test_each_owners_conversations_stay_exactly_in_write_order(make_session, make_user):
    """Within the resolution too: a write to a conversation that another of the same
    owner has overtaken moves it to the top at once."""
    alice = await asyncio.to_thread(make_user, "alice")
    first, second = make_session("c-first", owner=alice), make_session("c-second", owner=alice)
    for session in (first, second, first, second, first):
        await session.add_items(numbered(1))
        newest = AgentSession.objects.filter(owner=alice).order_by("-updated_at")
        assert [row.session_id async for row in newest][:1] == [session.session_id]
