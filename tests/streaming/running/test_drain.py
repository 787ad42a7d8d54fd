"""A worker that drains (``streaming.drain``): it starts nothing, sends its tabs elsewhere,
lets its runs finish for ``DRAIN_SECONDS`` and ends the rest ``interrupted`` with a valid
history. In-process, with the real Runner; ``test_drain_live.py`` does it with SIGTERM."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from django_agent_sessions import DjangoSession, signals
from django_agent_sessions.models import AgentRun
from django_agent_sessions.store import open_calls
from django_agent_sessions.streaming.running import drain
from tests import chat_agent
from tests.scripted import streamed_reply, tool_turn
from tests.websockets import Socket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]

CLOSE_RESTART = 4012


@pytest.fixture(autouse=True)
def serving(monkeypatch, use_agent):
    """The process serves again after each test (a server drains once, then exits)."""
    use_agent("tests.chat_agent.make_agent")
    monkeypatch.setattr(drain, "_drain", None)
    monkeypatch.setattr(drain, "_tabs", {})


async def test_a_run_that_finishes_in_time_completes_and_tabs_go_elsewhere(
    alice_cookie, session_id
):
    gate = asyncio.Event()
    chat_agent.script(streamed_reply("Finished during the drain.", gate=gate))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Hello")
    run_id = (await socket.until("text.delta"))[-1]["run_id"]

    draining = asyncio.create_task(drain.drain())
    assert await socket.closed_with() == CLOSE_RESTART  # the page reconnects elsewhere
    late = Socket(session_id, alice_cookie)
    assert (await late.connect())[0]
    assert await late.closed_with() == CLOSE_RESTART  # opened while draining: sent on
    assert not draining.done()  # the run goes on
    gate.set()
    await asyncio.wait_for(draining, 10)

    record = await AgentRun.objects.aget(run_id=run_id)
    assert record.status == "completed"
    items = await DjangoSession(session_id).get_items()
    assert items[-1]["content"][0]["text"] == "Finished during the drain."


async def test_a_run_past_the_drain_time_ends_interrupted_with_a_valid_history(
    settings, alice_cookie, session_id
):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "DRAIN_SECONDS": 0.2}
    chat_agent.tool_gate = asyncio.Event()  # the tool never returns
    chat_agent.script(tool_turn("get_weather", {"city": "Paris"}, call_id="call-1"))
    finished: list[Any] = []

    def on_finished(sender: Any, run: AgentRun, **kwargs: Any) -> None:
        finished.append((run.run_id, run.status, run.error_code))

    signals.run_finished.connect(on_finished)
    try:
        socket = Socket(session_id, alice_cookie)
        await socket.open()
        await socket.say("Weather in Paris?")
        frames = await socket.until("item.completed")
        while frames[-1]["item"]["kind"] != "tool_call":
            frames = await socket.until("item.completed")
        await asyncio.wait_for(drain.drain(), 10)
    finally:
        signals.run_finished.disconnect(on_finished)

    run_id = frames[-1]["run_id"]
    record = await AgentRun.objects.aget(run_id=run_id)
    assert (record.status, record.error_code) == ("interrupted", "interrupted")
    assert finished == [(record.run_id, "interrupted", "interrupted")]
    # The turn in flight is dropped, as a cancel drops it: no call without its output.
    items = await DjangoSession(session_id).get_items()
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = {i["call_id"]: i["output"] for i in items if i.get("type") == "function_call_output"}
    assert set(calls) == set(outputs)
    assert set(outputs.values()) <= {open_calls.INTERRUPTED_CALL}
    assert items[0]["content"] == "Weather in Paris?"
    # Reopened (on another worker, or here once it serves again): the run is over.
    drain._drain = None
    history = await Socket(session_id, alice_cookie).open()
    assert history["active_run"] is None
    assert history["pending_approvals"] == []


async def test_messages_and_decisions_are_refused_while_draining(
    alice_cookie, session_id, monkeypatch
):
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    monkeypatch.setattr(drain, "draining", lambda: True)
    await socket.send({"type": "user_message", "text": "Hello", "client_id": "m-1"})
    refused = await socket.receive()
    assert (refused["code"], refused["client_id"], refused["retry_after"]) == (
        "unavailable",
        "m-1",
        1,
    )
    await socket.send({"type": "approval", "call_id": "call-1", "approve": True})
    assert (await socket.receive())["code"] == "unavailable"
    assert not await AgentRun.objects.aexists()
