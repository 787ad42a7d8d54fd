"""``arrivals``: the messages of this process waiting for their reply's first token, and
a title that waits for those that arrived before it was ready (``titling``) rather than
joining the hops they wait for."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from django_agent_sessions.streaming.running import active_runs, arrivals, titling


def no_run() -> Callable[[], int | None]:
    return lambda: None  # refused, queued, or run by a task: no run of its own here


class Run:
    """What ``arrivals`` reads of a local run: its ``answered`` event."""

    def __init__(self, session_pk: int) -> None:
        self.session_pk, self.answered = session_pk, asyncio.Event()


@pytest.fixture
def local_run(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], Any]:
    def start(session_pk: int) -> Any:
        run = Run(session_pk)
        monkeypatch.setitem(active_runs._local_runs, session_pk, run)
        return run

    return start


async def turn() -> None:
    await asyncio.sleep(0)  # one turn of the loop: what was woken has run


async def test_with_nothing_waiting_a_title_waits_for_nothing() -> None:
    await asyncio.wait_for(arrivals.earlier_answered(), 5)


async def test_a_title_waits_for_every_message_that_arrived_before_it() -> None:
    with arrivals.on_its_way(no_run()):
        with arrivals.on_its_way(no_run()):
            title = asyncio.create_task(arrivals.earlier_answered())
            await turn()
        await turn()
        assert not title.done()  # one of the two is still on its way
    await asyncio.wait_for(title, 5)


async def test_a_message_arriving_after_the_title_is_not_waited_for() -> None:
    with arrivals.on_its_way(no_run()):
        title = asyncio.create_task(arrivals.earlier_answered())
        with arrivals.on_its_way(no_run()):
            await turn()
            assert not title.done()
        await turn()
        assert not title.done()
    await asyncio.wait_for(title, 5)  # the later message is still on its way: not waited for
    with arrivals.on_its_way(no_run()):
        late = asyncio.create_task(arrivals.earlier_answered())
        await turn()
        assert not late.done()
    await asyncio.wait_for(late, 5)


async def test_a_started_run_counts_until_its_first_token(local_run: Callable[[int], Any]) -> None:
    with arrivals.on_its_way(lambda: 7):
        run = local_run(7)  # the message started its run
    title = asyncio.create_task(arrivals.earlier_answered())
    await turn()
    assert not title.done()  # started, but no token yet
    run.answered.set()
    await asyncio.wait_for(title, 5)


async def test_a_refused_message_counts_no_more() -> None:
    with pytest.raises(RuntimeError), arrivals.on_its_way(no_run()):
        raise RuntimeError("busy")
    await asyncio.wait_for(arrivals.earlier_answered(), 5)


async def test_titling_waits_for_the_messages_on_their_way() -> None:
    with arrivals.on_its_way(no_run()):
        title = asyncio.create_task(titling._after_earlier_first_tokens())
        await turn()
        assert not title.done()
    await asyncio.wait_for(title, 5)
