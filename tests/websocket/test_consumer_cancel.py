"""Cancelling an AgentSessionConsumer run: a conversation with a run refuses a second
message, and a cancelled or stopped run ends recorded as cancelled."""

from __future__ import annotations

import asyncio

import pytest

from django_agent_sessions.models import AgentSession
from django_agent_sessions.streaming.running import active_runs
from tests import chat_agent
from tests.conversations import run_statuses
from tests.scripted import streamed_reply
from tests.websocket.consumer_helpers import (
    ANSWER,
    agent_settings,  # noqa: F401
    two_tabs_mid_run,
    wait_until_idle,
)
from tests.websockets import Socket, text_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


async def test_a_second_message_during_a_run_is_busy(alice_cookie, session_id):
    socket, other_tab, gate = await two_tabs_mid_run(session_id, alice_cookie, "One")
    await socket.say("Two")
    assert (await socket.until("error"))[-1]["code"] == "busy"
    await other_tab.say("Three")
    assert (await other_tab.until("error"))[-1]["code"] == "busy"
    gate.set()
    await socket.until("run.completed")
    assert await run_statuses(session_id) == ["completed"]
    await socket.close()
    await other_tab.close()


async def test_cancel_stops_the_run_quickly_and_keeps_history_valid(alice_cookie, session_id):
    produced: list[str] = []
    story = ANSWER * 20  # about 530 tokens, 10 s at 20 ms each
    chat_agent.script(streamed_reply(story, delay=0.02, progress=produced), streamed_reply("Fine."))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Tell me a long story")
    await socket.until("text.delta")
    await socket.send({"type": "cancel"})
    await socket.until("run.cancelled")
    # Stopped at once, not at the end of the story: judged by what the model produced,
    # not by the clock (a loaded machine slows both sides alike).
    assert len("".join(produced)) < len(story) / 2
    assert await run_statuses(session_id) == ["cancelled"]
    # The conversation goes on: the next run sees only complete items.
    await socket.say("Shorter please")
    assert text_of(await socket.until("run.completed")) == "Fine."
    last_call = chat_agent.model.last_call
    assert last_call is not None
    sent_to_model = last_call.input
    assert [item.get("role") for item in sent_to_model] == ["user", "user"]
    await socket.close()


async def test_a_run_stopped_by_worker_shutdown_is_recorded_as_cancelled(alice_cookie, session_id):
    produced: list[str] = []
    chat_agent.script(streamed_reply(ANSWER * 20, delay=0.02, progress=produced))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Tell me a long story")
    await socket.until("text.delta")
    pk = await AgentSession.objects.values_list("pk", flat=True).aget(session_id=session_id)
    active = active_runs.local_run(pk)
    assert active is not None
    assert active.task is not None
    active.task.cancel()  # what the event loop does to pending tasks when a worker stops
    await socket.until("run.cancelled")
    await wait_until_idle(session_id)
    assert await run_statuses(session_id) == ["cancelled"]
    stopped_at = len(produced)
    await asyncio.sleep(0.2)
    assert len(produced) == stopped_at
    await socket.close()


async def test_cancel_naming_another_run_changes_nothing(alice_cookie, session_id):
    gate = asyncio.Event()
    chat_agent.script(streamed_reply(ANSWER, gate=gate))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Weather?")
    await socket.until("text.delta")
    await socket.send({"type": "cancel", "run_id": "an-earlier-run"})
    assert await socket.nothing_more(0.3)
    gate.set()
    assert text_of(socket.received) + text_of(await socket.until("run.completed")) == ANSWER
    await socket.close()


@pytest.mark.parametrize("run_id", [7, ["r"], {"id": "r"}, True])
async def test_cancel_with_a_run_id_that_is_not_a_string_is_refused(
    alice_cookie, session_id, run_id
):
    gate = asyncio.Event()
    chat_agent.script(streamed_reply(ANSWER, gate=gate))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Weather?")
    await socket.until("text.delta")
    await socket.send({"type": "cancel", "run_id": run_id})
    assert (await socket.until("error"))[-1]["code"] == "invalid_frame"
    gate.set()
    assert text_of(socket.received) + text_of(await socket.until("run.completed")) == ANSWER
    await socket.close()
