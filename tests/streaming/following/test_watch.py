"""``Watch``: the run a tab follows, the ends it showed, and the timers that wake it."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from django.utils import timezone

from django_agent_sessions.streaming.following.watch import Watch


def _event(kind: str, run_id: str = "r", seq: int | None = 1) -> dict[str, Any]:
    return {"type": kind, "run_id": run_id, "seq": seq}


class Inbox:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def wake(self, message: dict[str, Any]) -> None:
        self.queue.put_nowait(message)

    async def next(self) -> dict[str, Any]:
        return await asyncio.wait_for(self.queue.get(), 5)


async def test_an_end_is_shown_once_whatever_its_seq(settings):
    settings.AGENT_SESSIONS = {"FOLLOW_CHECK_SECONDS": 60}
    watch = Watch(Inbox().wake)
    assert watch.shown(_event("run.started"))
    assert watch.live == "r"
    assert watch.shown(_event("run.failed", seq=None))
    assert watch.live is None
    assert watch.has_ended("r")
    assert not watch.shown(_event("run.failed", seq=None))  # a copy
    assert not watch.shown(_event("run.completed", seq=9))
    watch.stop()


async def test_a_run_waits_from_its_requests_until_it_resumes(settings):
    settings.AGENT_SESSIONS = {"FOLLOW_CHECK_SECONDS": 60}
    watch = Watch(Inbox().wake)
    watch.shown(_event("approval.requested", seq=3))
    assert watch.waits
    watch.shown(_event("approval.resolved", seq=4))
    assert watch.waits  # another call may still wait
    watch.shown(_event("run.started", seq=5))
    assert not watch.waits
    watch.stop()


async def test_silence_wakes_the_tab_with_a_check_of_the_run_it_follows(settings):
    settings.AGENT_SESSIONS = {"FOLLOW_CHECK_SECONDS": 0.05}
    inbox = Inbox()
    watch = Watch(inbox.wake)
    watch.shown(_event("text.delta", seq=2))
    assert await inbox.next() == {"type": "agent.check", "run_id": "r"}
    watch.shown(_event("run.completed", seq=3))
    await asyncio.sleep(0.1)  # (a run that ended is not checked: nothing may come)
    assert inbox.queue.empty()
    watch.stop()


async def test_silence_is_checked_again_and_again_while_the_run_goes_on(settings):
    # Nothing the checks did (their catch-ups unanswered, a layer that delivers nothing)
    # restarted the timer: the tab checks again all the same, until the run's end.
    settings.AGENT_SESSIONS = {"FOLLOW_CHECK_SECONDS": 0.02}
    inbox = Inbox()
    watch = Watch(inbox.wake)
    watch.shown(_event("text.delta", seq=2))
    for _check in range(3):
        assert await inbox.next() == {"type": "agent.check", "run_id": "r"}
    watch.ended("r")
    while not inbox.queue.empty():  # (a check already woken is the tab's to ignore)
        inbox.queue.get_nowait()
    assert watch._silence is None  # an ended run is checked no more
    watch.stop()


async def test_a_gap_is_checked_once_after_the_gap_timeout(settings):
    settings.AGENT_SESSIONS = {"GAP_TIMEOUT_SECONDS": 0.01, "FOLLOW_CHECK_SECONDS": 60}
    inbox = Inbox()
    watch = Watch(inbox.wake)
    watch.gap("r")
    watch.gap("r")  # one timer per run
    assert await inbox.next() == {"type": "agent.check", "run_id": "r", "gap": True}
    watch.gap_checked("r")
    await asyncio.sleep(0.05)
    assert inbox.queue.empty()
    watch.stop()


async def test_a_waiting_run_is_expired_just_after_its_expiry(settings):
    settings.AGENT_SESSIONS = {"FOLLOW_CHECK_SECONDS": 60}
    inbox = Inbox()
    watch = Watch(inbox.wake)
    watch.expires((timezone.now() - timedelta(seconds=1)).isoformat())
    assert await inbox.next() == {"type": "agent.expire"}
    watch.expires("not a time")  # ignored
    watch.stop()


async def test_nothing_of_a_run_is_shown_after_its_end(settings):
    settings.AGENT_SESSIONS = {"FOLLOW_CHECK_SECONDS": 60}
    watch = Watch(Inbox().wake)
    watch.ended("r")  # a history frame showed the run over
    assert not watch.shown(_event("run.started"))  # a copy delayed past the end
    assert not watch.shown(_event("text.delta", seq=5))
    assert watch.live is None
    watch.stop()
