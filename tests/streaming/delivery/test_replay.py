"""Exact resume (``streaming.replay``): a tab that reconnects mid-run with the position
it had gets ``resumed``, then exactly the events it missed, then the rest: its text ends
equal to the stored reply, with no event it had and no text twice. Over websockets
(``?resume=<run_id>:<seq>``) and SSE (``Last-Event-ID``), at random points of a run."""

from __future__ import annotations

import random
from typing import Any

import pytest

from django_agent_sessions import DjangoSession
from django_agent_sessions.streaming.delivery.replay import EventLog, position
from tests import chat_agent
from tests.scripted import streamed_reply
from tests.sse.client import EventStream, post
from tests.sse.views_helpers import opened, url
from tests.websockets import Socket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]

STORY = " ".join(f"Sentence {n} of a reply long enough to reconnect in." for n in range(40))
POINTS = 5  # reconnections per run; two runs per transport


@pytest.fixture(autouse=True)
def agent(use_agent):
    # Long timers: on a loaded machine a replay must not lose to a catch-up's history.
    use_agent(
        "tests.chat_agent.make_agent",
        DELTA_FLUSH_SECONDS=0.005,
        CATCHUP_TIMEOUT_SECONDS=10,
        GAP_TIMEOUT_SECONDS=10,
    )
    # About 3 s of reply (it was 1 s): five reconnections must all land while it runs,
    # also when the first socket of a fresh process is slow (seen: the run ended first,
    # and a reconnection to an ended run gets history, as it should).
    chat_agent.script(*(streamed_reply(STORY, delay=0.006, token_size=4) for _ in range(2)))


class Page:
    """The reply as a page shows it, and every seq it was sent."""

    def __init__(self) -> None:
        self.text, self.last = "", ""
        self.seqs: list[int] = []
        self.histories = 0  # history frames: a reconnection that did not resume

    def see(self, frame: dict[str, Any]) -> bool:
        """Take a frame; True at the run's end."""
        if isinstance(frame.get("seq"), int) and frame["type"] != "resumed":
            self.seqs.append(frame["seq"])
            self.last = f"{frame['run_id']}:{frame['seq']}"
        if frame["type"] == "text.delta":
            self.text += frame["delta"]
        elif frame["type"] == "history":
            self.histories += 1
            self.text = (frame["active_run"] or {}).get("text", self.text)
        return frame["type"] in ("run.completed", "run.failed", "run.cancelled")


def assert_exact(page: Page, resumed: int, histories: int) -> None:
    assert page.text == STORY
    assert len(page.seqs) == len(set(page.seqs)), "an event twice"
    assert page.seqs == sorted(page.seqs)
    assert resumed == POINTS, "a reconnection got history instead of resuming"
    assert page.histories == histories, "a history frame after a resume"


def _resumes(first: dict[str, Any], page: Page) -> bool:
    """A reconnection resumed: ``resumed`` is its first frame (``test_follower_resume``)."""
    return first["type"] == "resumed"


async def _stored_reply(session_id: str) -> str:
    items: list[Any] = await DjangoSession(session_id).get_items()
    return str(items[-1]["content"][0]["text"])


async def test_a_websocket_resumes_exactly_at_random_points(alice_cookie, session_id):
    rng = random.Random(7)
    sender = Socket(session_id, alice_cookie)
    await sender.open()
    for _run in range(2):
        await sender.say("Tell me a story")
        run_id = (await sender.until("run.started"))[-1]["run_id"]
        watcher, page, resumed = Socket(session_id, alice_cookie), Page(), 0
        history = await watcher.open()
        page.see(history)
        page.last = f"{run_id}:{(history['active_run'] or {}).get('seq', 0)}"
        for _point in range(POINTS):
            for _frame in range(rng.randrange(1, 6)):
                page.see(await watcher.receive())
            await watcher.close()
            watcher = Socket(session_id, alice_cookie, query=f"resume={page.last}")
            connected, _ = await watcher.connect()
            assert connected
            first = await watcher.receive()
            resumed += _resumes(first, page)
            page.see(first)
        while not page.see(await watcher.receive()):
            pass
        await sender.until("run.completed")
        assert_exact(page, resumed, histories=1)  # the one it opened with
        assert await _stored_reply(session_id) == STORY
        await watcher.close()


async def test_an_sse_stream_resumes_exactly_at_random_points(alice_cookie, session_id):
    rng = random.Random(11)
    stream, _history = await opened(session_id, alice_cookie)
    for _run in range(2):
        assert (await post(url(session_id, "messages/"), {"text": "Story"}, alice_cookie))[0] == 202
        page, resumed = Page(), 0
        page.see(await stream.frame())  # run.started
        for _point in range(POINTS):
            for _frame in range(rng.randrange(1, 6)):
                page.see(await stream.frame())
            await stream.close()
            assert stream.last_id == page.last
            stream = EventStream(url(session_id, "events/"), alice_cookie, stream.last_id)
            first = await stream.frame()
            resumed += _resumes(first, page)
            page.see(first)
        while not page.see(await stream.frame()):
            pass
        assert_exact(page, resumed, histories=0)
    assert await _stored_reply(session_id) == STORY


def test_a_position_is_a_run_id_and_a_seq_or_nothing():
    assert position("5f0c-9a:12") == ("5f0c-9a", 12)
    assert position(" 5f0c:0 ") == ("5f0c", 0)
    for bad in (None, "", "5f0c", "5f0c:", ":3", "5f0c:-1", "x y:1", "5f0c:1:2", "5f0c:1e3"):
        assert position(bad) is None, bad


def test_the_log_gives_what_came_after_or_nothing_it_cannot_vouch_for():
    log = EventLog()
    assert log.after(0) is None  # nothing published yet
    for seq in range(5, 9):  # a run resumed after approvals numbers on from 4
        log.add({"type": "text.delta", "run_id": "r", "seq": seq, "delta": "x"})
    assert [event["seq"] for event in log.after(6) or []] == [7, 8]
    assert log.after(8) == []
    assert log.after(4) is not None
    assert log.after(3) is None  # 4 is not in the log
    log.add({"type": "text.delta", "run_id": "r", "seq": 9, "delta": "x" * 600_000})
    assert log.after(8) is None  # too much for one message: history instead


async def test_a_position_in_another_conversation_gets_history(alice_cookie, session_id):
    sender = Socket(session_id, alice_cookie)
    await sender.open()
    await sender.say("Tell me a story")
    delta = (await sender.until("text.delta"))[-1]
    elsewhere = Socket(f"{session_id}-other", alice_cookie)
    await elsewhere.open()
    await elsewhere.say("Hello")  # its own conversation, with a run of its own
    await elsewhere.until("run.started")
    spy = Socket(
        f"{session_id}-other", alice_cookie, query=f"resume={delta['run_id']}:{delta['seq']}"
    )
    assert (await spy.connect())[0]
    first = await spy.receive()
    assert first["type"] == "history"
    assert first["active_run"] is None or first["active_run"]["run_id"] != delta["run_id"]
    assert all(f.get("run_id") != delta["run_id"] for f in [first, *spy.received])
    # Both runs end here, not in the fixtures' teardown.
    await sender.until("run.completed")
    await elsewhere.until("run.completed")
