"""An AgentSessionConsumer run once its sockets leave: stopped when nobody watches, kept
while another tab does, or continued when the settings say so."""

from __future__ import annotations

import asyncio

import pytest
from channels.layers import get_channel_layer

from django_agent_sessions.conf import app_settings
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
from tests.websockets import Socket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


async def test_disconnecting_the_last_socket_stops_the_model(alice_cookie, session_id):
    produced: list[str] = []
    story = ANSWER * 20  # about 530 tokens, 10 s at 20 ms each
    chat_agent.script(streamed_reply(story, delay=0.02, progress=produced))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Tell me a long story")
    await socket.until("text.delta")
    loop = asyncio.get_running_loop()
    left_at = loop.time()
    await socket.close()
    await wait_until_idle(session_id)
    # A hang guard only (the story would take 10 s); what the model produced is the check.
    assert loop.time() - left_at < app_settings.PRESENCE_TIMEOUT_SECONDS + 5.0
    assert await run_statuses(session_id) == ["cancelled"]
    stopped_at = len(produced)
    await asyncio.sleep(0.2)
    assert len(produced) == stopped_at  # the model is not generating for nobody
    assert stopped_at < len(story) // 3 / 4


# How long a run waits for a "still here" answer in the two tests below: long enough
# for a stall of a loaded machine (two test processes beside a CPU hog on two cores).
# The tests wait for the run's timer to fire, not for this long.
PATIENT_PRESENCE_TIMEOUT = 5.0


async def leave_while_another_tab_watches(session_id: str, cookie: bytes, monkeypatch) -> Socket:
    """One tab starts a run and leaves; the run is held until its presence timer fired.

    Returns the tab that stays. The run can only complete if it learned in time that
    this tab is still there.
    """
    decided = asyncio.Event()
    cancel_if_alone = active_runs.ActiveRun._cancel_if_alone

    def deciding(self: active_runs.ActiveRun, presence_round: int) -> None:
        cancel_if_alone(self, presence_round)
        decided.set()

    monkeypatch.setattr(active_runs.ActiveRun, "_cancel_if_alone", deciding)
    leaving, staying, gate = await two_tabs_mid_run(session_id, cookie, "Weather?")
    await leaving.close()
    await asyncio.wait_for(decided.wait(), PATIENT_PRESENCE_TIMEOUT + 10.0)
    gate.set()
    return staying


def patient_presence(settings) -> None:
    settings.AGENT_SESSIONS = {
        **settings.AGENT_SESSIONS,
        "PRESENCE_TIMEOUT_SECONDS": PATIENT_PRESENCE_TIMEOUT,
    }


async def test_a_lost_presence_question_does_not_cancel_a_watched_run(
    alice_cookie, session_id, monkeypatch, settings
):
    # channels_redis can lose a message when a receive is cancelled (a leaving socket's
    # is); here the layer loses the run's first "who is still here?" on purpose.
    layer = get_channel_layer()
    group_send = layer.group_send
    lost: list[dict] = []

    async def losing_the_first_question(group: str, message: dict) -> None:
        if message.get("type") == "agent.presence" and not lost:
            lost.append(message)
            return
        await group_send(group, message)

    monkeypatch.setattr(layer, "group_send", losing_the_first_question)
    patient_presence(settings)
    staying = await leave_while_another_tab_watches(session_id, alice_cookie, monkeypatch)
    frames = await staying.until("run.completed", "run.cancelled")
    assert lost, "the run never asked who is still here"
    assert frames[-1]["type"] == "run.completed"
    await staying.close()


async def test_a_run_continues_while_another_tab_watches(
    alice_cookie, session_id, monkeypatch, settings
):
    patient_presence(settings)
    staying = await leave_while_another_tab_watches(session_id, alice_cookie, monkeypatch)
    frames = await staying.until("run.completed", "run.cancelled")
    assert frames[-1]["type"] == "run.completed"
    await staying.close()


async def test_runs_may_continue_after_the_last_disconnect(settings, alice_cookie, session_id):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "CONTINUE_RUNS_AFTER_DISCONNECT": True}
    chat_agent.script(streamed_reply(ANSWER, delay=0.05))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Weather?")
    await socket.until("text.delta")
    await socket.close()
    await wait_until_idle(session_id)
    assert await run_statuses(session_id) == ["completed"]
    again = Socket(session_id, alice_cookie)
    history = await again.open()
    assert history["items"][-1]["text"] == ANSWER
    await again.close()
