"""Queued messages through the websocket consumer with runs as tasks: a message sent
during a task worker's reply is queued, and that run's end (recorded on the task worker,
here by a Stop) sends it as the next run, which a task runs too; every tab sees it."""

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


@pytest.mark.redis
async def test_a_message_queued_during_a_task_run_is_sent_after_it(
    use_agent: Any, alice_cookie: bytes, session_id: str
) -> None:
    if not os.environ.get("REDIS_URL"):
        pytest.skip("REDIS_URL is not set (bin/test starts Redis and sets it)")
    use_agent(
        "tests.chat_agent.make_agent",
        WHILE_RUNNING="queue",
        RUNS="tasks",
        CATCHUP_TIMEOUT_SECONDS=0.3,
        GAP_TIMEOUT_SECONDS=0.2,
    )
    chat_agent.script(streamed_reply(ANSWER * 20, delay=0.02), streamed_reply("Second."))
    socket, other_tab = Socket(session_id, alice_cookie), Socket(session_id, alice_cookie)
    await socket.open()
    await other_tab.open()
    await socket.say("One")
    await socket.until("text.delta")
    await socket.send({"type": "user_message", "text": "Two", "client_id": "c-2"})
    queued = (await socket.until("conversation.queue"))[-1]["queued"]
    assert [(m["text"], m["client_id"]) for m in queued] == [("Two", "c-2")]
    await socket.send({"type": "cancel"})
    for tab in (socket, other_tab):
        frames = await tab.until("run.completed", timeout=10)
        ends = [f["type"] for f in frames if f["type"] in ("run.cancelled", "run.completed")]
        assert ends[-2:] == ["run.cancelled", "run.completed"]
        assert not of_type(frames, "error")
        started = of_type(frames, "run.started")[-1]
        assert text_of(frames[frames.index(started) :]) == "Second."
    assert await run_statuses(session_id) == ["cancelled", "completed"]
