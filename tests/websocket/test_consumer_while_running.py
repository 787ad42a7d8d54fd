"""A message sent during a reply, through the websocket consumer: with
``WHILE_RUNNING = "interrupt"`` it stops the reply and is sent as the next run, and every
tab sees the stopped run's end, then the new run; with ``"busy"`` it is refused as before.
Runs as tasks too: the Stop reaches the task worker's run, whose end the message waits for."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests import chat_agent
from tests.conversations import run_statuses
from tests.scripted import streamed_reply
from tests.websocket.consumer_helpers import ANSWER
from tests.websockets import Socket, of_type, text_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


async def mid_reply(session_id: str, cookie: bytes) -> tuple[Socket, Socket, list[str]]:
    """Two tabs; the first said "One" and its long reply streamed its first text."""
    produced: list[str] = []
    story = ANSWER * 20  # seconds of text: only a Stop ends it in time
    chat_agent.script(
        streamed_reply(story, delay=0.02, progress=produced), streamed_reply("Second.")
    )
    first, second = Socket(session_id, cookie), Socket(session_id, cookie)
    await first.open()
    await second.open()
    await first.say("One")
    await first.until("text.delta")
    return first, second, produced


async def test_a_message_during_a_reply_stops_it_and_is_sent(
    use_agent: Any, alice_cookie: bytes, session_id: str
) -> None:
    use_agent("tests.chat_agent.make_agent", WHILE_RUNNING="interrupt")
    socket, other_tab, produced = await mid_reply(session_id, alice_cookie)
    await socket.send({"type": "user_message", "text": "Two", "client_id": "c-2"})
    for tab in (socket, other_tab):
        frames = await tab.until("run.completed", timeout=10)
        kinds = [f["type"] for f in frames if f["type"].startswith("run.")]
        assert kinds[-3:] == ["run.cancelled", "run.started", "run.completed"]
        assert not of_type(frames, "error")
        started = of_type(frames, "run.started")[-1]
        after = frames[frames.index(started) :]
        assert text_of(after) == "Second."
    assert len("".join(produced)) < len(ANSWER * 20) / 2  # stopped, not finished
    assert await run_statuses(session_id) == ["cancelled", "completed"]
    sent = chat_agent.model.last_call
    assert sent is not None
    said = [item.get("content") for item in sent.input if item.get("role") == "user"]
    assert said == ["One", "Two"]


async def test_busy_is_unchanged_with_the_busy_mode(
    use_agent: Any, alice_cookie: bytes, session_id: str
) -> None:
    use_agent("tests.chat_agent.make_agent", WHILE_RUNNING="busy")
    socket, other_tab, _produced = await mid_reply(session_id, alice_cookie)
    await socket.send({"type": "user_message", "text": "Two", "client_id": "c-2"})
    refused = (await socket.until("error"))[-1]
    assert (refused["code"], refused["client_id"]) == ("busy", "c-2")
    await socket.send({"type": "cancel"})
    await other_tab.until("run.cancelled")
    assert await run_statuses(session_id) == ["cancelled"]


@pytest.mark.redis
async def test_runs_as_tasks_are_stopped_and_the_message_sent(
    use_agent: Any, alice_cookie: bytes, session_id: str
) -> None:
    if not os.environ.get("REDIS_URL"):
        pytest.skip("REDIS_URL is not set (bin/test starts Redis and sets it)")
    use_agent(
        "tests.chat_agent.make_agent",
        WHILE_RUNNING="interrupt",
        RUNS="tasks",
        CATCHUP_TIMEOUT_SECONDS=0.3,
        GAP_TIMEOUT_SECONDS=0.2,
    )
    socket, _other_tab, _produced = await mid_reply(session_id, alice_cookie)
    await socket.say("Two")
    frames = await socket.until("run.completed", timeout=10)
    assert [f["type"] for f in frames if f["type"] in ("run.cancelled", "run.completed")] == [
        "run.cancelled",
        "run.completed",
    ]
    assert not of_type(frames, "error")
    assert await run_statuses(session_id) == ["cancelled", "completed"]
