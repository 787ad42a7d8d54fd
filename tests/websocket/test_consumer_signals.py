"""The signals an AgentSessionConsumer run sends: when it starts and when it ends, with its
user, its usage and its record."""

from __future__ import annotations

import asyncio

import pytest

from tests import chat_agent
from tests.scripted import streamed_reply
from tests.websocket.consumer_helpers import (
    ANSWER,
    agent_settings,  # noqa: F401
)
from tests.websockets import Socket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


async def test_signals_report_runs_and_usage(alice, alice_cookie, session_id):
    from django_agent_sessions.signals import run_finished, run_started

    seen = []
    started = lambda **kwargs: seen.append(("started", kwargs))  # noqa: E731
    finished = lambda **kwargs: seen.append(("finished", kwargs))  # noqa: E731
    run_started.connect(started)
    run_finished.connect(finished)
    try:
        chat_agent.script(streamed_reply(ANSWER))
        socket = Socket(session_id, alice_cookie)
        await socket.open()
        await socket.say("Weather?")
        done = (await socket.until("run.completed"))[-1]
        # run_finished follows the terminal event (receivers never delay it).
        for _ in range(250):
            if len(seen) == 2:
                break
            await asyncio.sleep(0.02)
        await socket.close()
    finally:
        run_started.disconnect(started)
        run_finished.disconnect(finished)
    assert [name for name, _ in seen] == ["started", "finished"]
    assert seen[0][1]["run_id"] == done["run_id"]
    assert seen[0][1]["user"].pk == alice.pk
    assert seen[1][1]["usage"] == done["usage"]
    record = seen[1][1]["run"]
    assert record.status == "completed"
    assert record.total_tokens == 18
    assert record.agent_name == "Assistant"
