"""``arrivals``: the messages of this process waiting for their reply's first token, and
the quiet turns titles take between them (``titling``) rather than joining the hops those
messages wait for: one title at a time, only while no message waits, for at most the
caller's bound."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from django_agent_sessions.streaming.running import active_runs, arrivals


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
    for _ in range(5):  # a few turns of the loop: what was woken has run its course
        await asyncio.sleep(0)


async def entered(title: Title) -> None:
    await asyncio.wait_for(title.inside.wait(), 5)


class Title:
    """A title asking for the quiet turn; inside it until ``release`` is set."""

    def __init__(self, wait_at_most: float = 30.0) -> None:
        self.inside, self.release = asyncio.Event(), asyncio.Event()
        self.task = asyncio.create_task(self._write(wait_at_most))

    async def _write(self, wait_at_most: float) -> bool:
        async with arrivals.quiet_turn(wait_at_most) as had:
            self.inside.set()
            await self.release.wait()
            return had

    async def done(self) -> bool:
        """Let it leave its turn; whether it had the turn."""
        self.release.set()
        return await asyncio.wait_for(self.task, 5)


async def asked(wait_at_most: float = 30.0) -> Title:
    title = Title(wait_at_most)
    await turn()
    return title


async def test_with_nothing_waiting_a_title_has_the_turn_at_once() -> None:
    async with arrivals.quiet_turn(30) as had:
        assert had


async def test_a_title_waits_for_every_message_on_its_way() -> None:
    with arrivals.on_its_way(no_run()):
        with arrivals.on_its_way(no_run()):
            title = await asked()
        await turn()
        assert not title.inside.is_set()  # one of the two is still on its way
    await entered(title)
    assert await title.done()


async def test_a_message_arriving_while_a_title_waits_is_waited_for_too() -> None:
    with arrivals.on_its_way(no_run()):
        title = await asked()
        with arrivals.on_its_way(no_run()):
            pass  # arrived later, answered while the first still waits
        later = arrivals.on_its_way(no_run())
        later.__enter__()
    await turn()
    assert not title.inside.is_set()  # the later message is still on its way
    later.__exit__(None, None, None)
    await entered(title)
    assert await title.done()


async def test_titles_take_turns_and_a_message_comes_before_the_next() -> None:
    first = await asked()
    second = await asked()
    assert first.inside.is_set()
    assert not second.inside.is_set()
    with arrivals.on_its_way(no_run()):
        assert await first.done()
        await turn()
        assert not second.inside.is_set()  # a message arrived: it comes first
    await entered(second)
    assert await second.done()


async def test_a_worker_never_quiet_lets_the_title_go_after_its_bound() -> None:
    with arrivals.on_its_way(no_run()):
        title = await asked(wait_at_most=0)
        assert await title.done() is False  # went on without the turn
    async with arrivals.quiet_turn(30) as had:
        assert had  # the one that gave up holds nothing


async def test_a_title_cancelled_in_line_leaves_the_turn_to_the_next() -> None:
    with arrivals.on_its_way(no_run()):
        gone = await asked()
        gone.task.cancel()
        await asyncio.gather(gone.task, return_exceptions=True)
        title = await asked()
    await entered(title)
    assert await title.done()


async def test_a_started_run_counts_until_its_first_token(local_run: Callable[[int], Any]) -> None:
    with arrivals.on_its_way(lambda: 7):
        run = local_run(7)  # the message started its run
    title = await asked()
    assert not title.inside.is_set()  # started, but no token yet
    run.answered.set()
    await turn()
    await entered(title)
    assert await title.done()


async def test_a_refused_message_counts_no_more() -> None:
    with pytest.raises(RuntimeError), arrivals.on_its_way(no_run()):
        raise RuntimeError("busy")
    async with arrivals.quiet_turn(30) as had:
        assert had
