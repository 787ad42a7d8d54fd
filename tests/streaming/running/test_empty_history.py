"""``empty_history``: a run that starts an empty conversation skips its first history
read, and nothing else changes: later reads, reads after a write and a fork's read go
to the database; a first message's run uses it, a later message's run does not."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.layers import get_channel_layer

from django_agent_sessions import DjangoSession
from django_agent_sessions.store import items as stored_items
from django_agent_sessions.streaming.running import active_runs
from django_agent_sessions.streaming.running.empty_history import EmptyHistorySession
from django_agent_sessions.streaming.visiting import actions
from django_agent_sessions.streaming.visiting.visitor import Visitor
from tests import chat_agent
from tests.conftest import user_message
from tests.scripted import streamed_reply

pytestmark = pytest.mark.django_db(transaction=True)


async def stored(session_id: str, *items: Any) -> EmptyHistorySession:
    """An ``EmptyHistorySession`` on a conversation that does hold ``items``: its reads
    tell a read of the database from the answer it knew."""
    await DjangoSession(session_id).add_items(list(items))
    return EmptyHistorySession(session_id)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The session ids the store read the items of (the real read, counted)."""
    read_ids: list[str] = []
    real_read = stored_items.read_items

    def counted(scope: stored_items.Scope, limit: int | None) -> list[Any]:
        read_ids.append(scope.session_id)
        return real_read(scope, limit)

    monkeypatch.setattr(stored_items, "read_items", counted)
    return read_ids


async def test_the_first_read_is_empty_without_a_query(session_id: str, reads: list[str]) -> None:
    session = await stored(session_id, user_message("written from outside"))
    assert await session.get_items() == []
    assert reads == []
    # Every later read is the database's.
    assert await session.get_items() == [user_message("written from outside")]
    assert reads == [session_id]


async def test_a_write_first_makes_the_first_read_the_databases(session_id: str) -> None:
    session = await stored(session_id, user_message("a"))
    await session.add_items([user_message("b")])
    assert await session.get_items() == [user_message("a"), user_message("b")]


@pytest.mark.parametrize("write", ["pop_item", "clear_session"])
async def test_any_other_write_first_does_too(
    session_id: str, write: str, reads: list[str]
) -> None:
    session = await stored(session_id, user_message("a"), user_message("b"))
    await getattr(session, write)()
    expected = [user_message("a")] if write == "pop_item" else []
    assert await session.get_items() == expected
    assert reads == [session_id]


async def test_an_atomic_replace_first_makes_the_first_read_the_databases(
    session_id: str,
) -> None:
    session = await stored(session_id, user_message("a"))
    assert await session._atomic_replace_items([user_message("summary")])
    assert await session.get_items() == [user_message("summary")]


async def test_a_fork_reads_its_own_conversation(session_id: str) -> None:
    session = await stored(session_id, user_message("a"))
    branch = await session.fork(f"{session_id}-b")
    assert await branch.get_items() == [user_message("a")]


@pytest.fixture
async def tab(alice: Any, session_id: str, use_agent: Any) -> AsyncIterator[Visitor]:
    use_agent("tests.chat_agent.make_agent")
    scope = {"type": "websocket"}
    yield Visitor(alice, session_id, scope=scope, channel_layer=get_channel_layer())
    for active in active_runs.local_runs():  # a run a failing test left going
        active.cancel()
        if active.task is not None:
            await asyncio.wait([active.task], timeout=10)


async def finished_run(tab: Visitor, text: str) -> active_runs.ActiveRun:
    await actions.send_message(tab, {"type": "user_message", "text": text})
    assert tab.conversation_pk is not None
    active = active_runs.local_run(tab.conversation_pk)
    assert active is not None
    assert active.task is not None
    await active.task
    return active


@pytest.mark.usefixtures("closing_sockets")
async def test_only_a_first_messages_run_skips_the_read(tab: Visitor) -> None:
    model = chat_agent.script(streamed_reply("One."), streamed_reply("Two."))
    first = await finished_run(tab, "Hi")
    second = await finished_run(tab, "Again")
    assert isinstance(first.streamed.session, EmptyHistorySession)
    assert not isinstance(second.streamed.session, EmptyHistorySession)
    # The model saw exactly the history each time: nothing, then the first turn.
    first_call, second_call = model.calls
    assert [item["content"] for item in first_call.input] == ["Hi"]
    shown = [item.get("role") for item in second_call.input]
    assert shown == ["user", "assistant", "user"]
