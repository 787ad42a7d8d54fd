"""``follower``: a tab that resumes mid-run (``?resume=<run_id>:<seq>``, ``Last-Event-ID``)
gets ``resumed`` as its first frame, also when the run's next event reaches it before
the run's answer with the events it missed: that event is held and sent after them,
each event once, in ``seq`` order. Forced deterministically (the run's answer is held
until a live event has reached the tab) over websockets and SSE, then at random points
of a running run, many times."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from django_agent_sessions.streaming.running import active_runs
from tests import chat_agent
from tests.scripted import streamed_reply
from tests.sse.client import EventStream, post
from tests.sse.views_helpers import opened, url
from tests.websocket.fanout_helpers import ANSWER
from tests.websockets import Socket, text_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]

RECONNECTS = 200
NEAR_THE_TIP = 20  # a random position is at most this many events behind the run
# More than the run streams in RECONNECTS reconnections: it is cancelled then.
STORY = " ".join(f"Line {n} of a reply that goes on while tabs come and go." for n in range(100))


@pytest.fixture(autouse=True)
def agent(use_agent):
    # Long timers: on a loaded machine a replay must not lose to a catch-up's history.
    # Tabs that leave ask nobody who still watches: hundreds of them leaving at once
    # would fill the run's channel with answers (presence is not this module's subject).
    use_agent(
        "tests.chat_agent.make_agent",
        DELTA_FLUSH_SECONDS=0.005,
        CATCHUP_TIMEOUT_SECONDS=10,
        GAP_TIMEOUT_SECONDS=10,
        CONTINUE_RUNS_AFTER_DISCONNECT=True,
    )


class HeldReplay:
    """The run's answer to a tab's replay, held until ``release``; ``asked`` once asked."""

    def __init__(self) -> None:
        self.asked, self.released = asyncio.Event(), asyncio.Event()


@pytest.fixture
def held_replay(monkeypatch: pytest.MonkeyPatch) -> HeldReplay:
    held, replay = HeldReplay(), active_runs.ActiveRun._replay

    async def answer_when_released(run: active_runs.ActiveRun, reply_to: str, after: Any) -> None:
        held.asked.set()
        await held.released.wait()
        await replay(run, reply_to, after)

    monkeypatch.setattr(active_runs.ActiveRun, "_replay", answer_when_released)
    return held


def assert_resumed_exactly(frames: list[dict[str, Any]], run_id: str, seq: int) -> None:
    """``resumed`` first, then every event after ``seq``, each once, in order."""
    assert frames[0] == {"type": "resumed", "run_id": run_id, "seq": seq}, frames[:3]
    seqs = [frame["seq"] for frame in frames[1:]]
    assert seqs == list(range(seq + 1, seq + 1 + len(seqs))), seqs


async def test_a_websocket_gets_resumed_first_when_a_live_event_comes_before_the_replay(
    alice_cookie, session_id, held_replay
):
    streams_on = asyncio.Event()
    chat_agent.script(streamed_reply(ANSWER, gate=streams_on, delay=0.005))
    sender, watcher = Socket(session_id, alice_cookie), Socket(session_id, alice_cookie)
    await sender.open()
    await watcher.open()
    await sender.say("Weather?")
    had = await watcher.until("text.delta")  # the first token: the run waits for the gate
    run_id, seq = had[-1]["run_id"], had[-1]["seq"]
    await watcher.close()
    resumer = Socket(session_id, alice_cookie, query=f"resume={run_id}:{seq}")
    assert (await resumer.connect())[0]
    await held_replay.asked.wait()
    streams_on.set()
    # The run's next event reached this process's tabs (the resumer's inbox with the
    # sender's) before the run answers the replay.
    while (await sender.receive()).get("seq") != seq + 1:
        pass
    held_replay.released.set()
    frames = await resumer.until("run.completed")
    assert_resumed_exactly(frames, run_id, seq)
    assert text_of(had) + text_of(frames) == ANSWER


async def test_an_sse_stream_gets_resumed_first_when_a_live_event_comes_before_the_replay(
    alice_cookie, session_id, held_replay
):
    streams_on = asyncio.Event()
    chat_agent.script(streamed_reply(ANSWER, gate=streams_on, delay=0.005))
    sender, _ = await opened(session_id, alice_cookie)
    watcher, _ = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "Weather?"}, alice_cookie))[0] == 202
    had = await watcher.frames_until("text.delta")
    run_id, seq = had[-1]["run_id"], had[-1]["seq"]
    await watcher.close()
    assert watcher.last_id == f"{run_id}:{seq}"
    resumer = EventStream(url(session_id, "events/"), alice_cookie, watcher.last_id)
    await held_replay.asked.wait()
    streams_on.set()
    while (await sender.frame()).get("seq") != seq + 1:
        pass
    held_replay.released.set()
    frames = await resumer.frames_until("run.completed")
    assert_resumed_exactly(frames, run_id, seq)
    assert text_of(had) + text_of(frames) == ANSWER


class Run:
    """The run as the tab that started it sees it (every event by ``seq``), paced by the
    test: each token it lets through is one ``text.delta`` (``DELTA_FLUSH_BYTES`` 1)."""

    def __init__(self, sender: Socket, pace: asyncio.Semaphore) -> None:
        self.sender, self.pace = sender, pace
        self.events: dict[int, dict[str, Any]] = {}
        self.more = asyncio.Condition()

    async def follow(self) -> None:
        while True:
            frame = await self.sender.receive(timeout=30)
            async with self.more:
                self.events[frame["seq"]] = frame
                self.more.notify_all()
            if frame["type"] in active_runs.TERMINAL_EVENTS:
                return

    @property
    def last(self) -> int:
        return max(self.events, default=0)

    async def event(self, seq: int) -> dict[str, Any]:
        async with self.more:
            await self.more.wait_for(lambda: seq in self.events)
        return self.events[seq]

    async def publish(self, count: int) -> None:
        """Let ``count`` more tokens through; back once this process's tabs have them."""
        last = self.last
        for _ in range(count):
            self.pace.release()
        await self.event(last + count)


async def test_many_reconnections_at_random_points_each_resume_first_and_exactly(
    alice_cookie, session_id, held_replay, use_agent
):
    use_agent(
        "tests.chat_agent.make_agent",
        DELTA_FLUSH_BYTES=1,
        CATCHUP_TIMEOUT_SECONDS=10,
        GAP_TIMEOUT_SECONDS=10,
        CONTINUE_RUNS_AFTER_DISCONNECT=True,
    )
    rng, pace = random.Random(3), asyncio.Semaphore(0)
    chat_agent.script(streamed_reply(STORY, token_size=4, pace=pace))
    sender = Socket(session_id, alice_cookie)
    await sender.open()
    await sender.say("A long story")
    run = Run(sender, pace)
    following = asyncio.create_task(run.follow())
    run_id = (await run.event(1))["run_id"]
    await run.event(2)  # the person's message; the run waits for its first token
    await run.publish(1)  # its first text

    async def reconnect() -> None:
        # Where the page was: mostly the last event the run published, else a little behind.
        behind = 0 if rng.random() < 0.5 else rng.randrange(min(run.last, NEAR_THE_TIP))
        seq = run.last - behind
        held_replay.asked.clear()
        held_replay.released.clear()
        tab = Socket(session_id, alice_cookie, query=f"resume={run_id}:{seq}")
        assert (await tab.connect())[0]
        await held_replay.asked.wait()
        await run.publish(rng.randrange(4))  # live events before the run answers, or none
        held_replay.released.set()
        await run.publish(rng.randrange(2))  # and after it
        frames = [await tab.receive()]
        assert frames[0] == {"type": "resumed", "run_id": run_id, "seq": seq}, frames
        while frames[-1]["seq"] < run.last:
            frames.append(await tab.receive())
            assert frames[-1] == run.events[frames[-1]["seq"]]  # the same event, text and all
        await tab.close()
        assert_resumed_exactly(frames, run_id, seq)

    async def reconnections() -> None:
        for _ in range(RECONNECTS):
            await reconnect()

    await asyncio.wait_for(reconnections(), 60)
    await sender.send({"type": "cancel"})
    await asyncio.wait_for(following, 30)
    assert run.events[run.last]["type"] == "run.cancelled"
