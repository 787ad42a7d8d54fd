"""A message posted during a reply, through the HTTP stream's views: with
``WHILE_RUNNING = "interrupt"`` the POST stops the reply and answers 202 once the message
is sent as the next run, which the stream shows after the stopped run's end; with
``"busy"`` it is refused 409 as before. Runs as tasks too."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests import chat_agent
from tests.conversations import run_statuses
from tests.scripted import streamed_reply
from tests.sse.client import post
from tests.sse.views_helpers import opened, url
from tests.websocket.consumer_helpers import ANSWER

pytestmark = pytest.mark.django_db(transaction=True)


def script() -> list[str]:
    produced: list[str] = []
    story = ANSWER * 20  # seconds of text: only a Stop ends it in time
    chat_agent.script(
        streamed_reply(story, delay=0.02, progress=produced), streamed_reply("Second.")
    )
    return produced


async def test_a_message_during_a_reply_stops_it_and_is_sent(
    use_agent: Any, alice_cookie: bytes, session_id: str
) -> None:
    use_agent("tests.chat_agent.make_agent", WHILE_RUNNING="interrupt")
    produced = script()
    stream, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "One"}, alice_cookie))[0] == 202
    await stream.frames_until("text.delta")
    status, _ = await post(url(session_id, "messages/"), {"text": "Two"}, alice_cookie)
    assert status == 202
    frames = await stream.frames_until("run.completed")
    kinds = [f["type"] for f in frames if f["type"].startswith("run.") or f["type"] == "error"]
    assert kinds == ["run.cancelled", "run.started", "run.completed"]
    second = frames[[f["type"] for f in frames].index("run.started") :]
    assert "".join(f["delta"] for f in second if f["type"] == "text.delta") == "Second."
    assert len("".join(produced)) < len(ANSWER * 20) / 2
    assert await run_statuses(session_id) == ["cancelled", "completed"]
    await stream.close()


async def test_busy_is_unchanged_with_the_busy_mode(
    use_agent: Any, alice_cookie: bytes, session_id: str
) -> None:
    use_agent("tests.chat_agent.make_agent", WHILE_RUNNING="busy")
    script()
    stream, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "One"}, alice_cookie))[0] == 202
    await stream.frames_until("text.delta")
    status, body = await post(
        url(session_id, "messages/"), {"text": "Two", "client_id": "c-2"}, alice_cookie
    )
    assert (status, body["code"], body["client_id"]) == (409, "busy", "c-2")
    assert (await post(url(session_id, "cancel/"), {}, alice_cookie))[0] == 202
    await stream.frames_until("run.cancelled")
    assert await run_statuses(session_id) == ["cancelled"]
    await stream.close()


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
    script()
    stream, _history = await opened(session_id, alice_cookie)
    assert (await post(url(session_id, "messages/"), {"text": "One"}, alice_cookie))[0] == 202
    await stream.frames_until("text.delta")
    assert (await post(url(session_id, "messages/"), {"text": "Two"}, alice_cookie))[0] == 202
    frames = await stream.frames_until("run.completed")
    ends = [f["type"] for f in frames if f["type"] in ("run.cancelled", "run.completed")]
    assert ends == ["run.cancelled", "run.completed"]
    assert await run_statuses(session_id) == ["cancelled", "completed"]
    await stream.close()
