"""``arrivals``: a conversation's messages on their way to a run in this process, and a
title that waits for them (``titling``) rather than joining the hops they wait for."""

from __future__ import annotations

import asyncio

import pytest

from django_agent_sessions.streaming.running import arrivals, titling


async def test_nothing_on_its_way_is_waited_for() -> None:
    await asyncio.wait_for(arrivals.all_arrived(1), 5)
    with arrivals.on_its_way(None):  # a new conversation: nobody can wait for it
        assert arrivals._arrivals == {}


async def test_the_wait_ends_when_the_last_message_on_its_way_arrives() -> None:
    with arrivals.on_its_way(1):
        waiting = asyncio.create_task(arrivals.all_arrived(1))
        with arrivals.on_its_way(1):
            await asyncio.sleep(0)  # one turn of the loop: the waiter is waiting
        await asyncio.sleep(0)
        assert not waiting.done()  # one message is still on its way
    await asyncio.wait_for(waiting, 5)
    assert arrivals._arrivals == {}


async def test_a_refused_message_arrives_too() -> None:
    with pytest.raises(RuntimeError), arrivals.on_its_way(2):
        raise RuntimeError("busy")
    await asyncio.wait_for(arrivals.all_arrived(2), 5)


async def test_a_title_waits_for_the_next_message_on_its_way() -> None:
    with arrivals.on_its_way(3):
        title = asyncio.create_task(titling._after_next_first_token(3))
        await asyncio.sleep(0)
        assert not title.done()
    # No run of conversation 3 started here (refused, or a task runs it): at once.
    await asyncio.wait_for(title, 5)
