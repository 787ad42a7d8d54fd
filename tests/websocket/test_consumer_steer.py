"""A message sent during a reply through the websocket consumer, with ``WHILE_RUNNING =
"steer"``: the sender gets ``steer.accepted``, every tab the message's ``item.completed``
where it entered, then the reply to it; every frame validates against the wire schema.
Runs as tasks too: the message reaches the task worker's run through the database."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests import chat_agent, steer_agent
from tests.conversations import run_statuses
from tests.streaming.wire.test_protocol import SERVER, problems
from tests.websockets import Socket, of_type

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


@pytest.fixture
def gated() -> Iterator[Callable[[], asyncio.Event]]:
    """``gated()``: the weather tool waits for the returned event (set after ``use_agent``,
    which resets the agents' state)."""
    gates: list[asyncio.Event] = []

    def gate() -> asyncio.Event:
        chat_agent.tool_gate = event = asyncio.Event()
        gates.append(event)
        return event

    yield gate
    for event in gates:
        event.set()
    chat_agent.tool_gate = None


async def steered(session_id: str, cookie: bytes, gate: asyncio.Event) -> tuple[Socket, Socket]:
    """Two tabs; the first asked for the weather, then steered the reply while the tool
    worked; both tabs until the run's end."""
    model = steer_agent.script()
    first, second = Socket(session_id, cookie), Socket(session_id, cookie)
    await first.open()
    await first.say("Weather in Paris?")
    await first.until("item.completed")  # its own message
    await second.open()
    await first.until("item.completed")  # the tool call
    await first.send({"type": "user_message", "text": "And Rome?", "client_id": "c-2"})
    accepted = (await first.until("steer.accepted"))[-1]
    assert accepted["client_id"] == "c-2"
    gate.set()
    for tab in (first, second):
        await tab.until("run.completed", timeout=10)
    assert model.calls[1].input[-1] == {"role": "user", "content": "And Rome?"}
    return first, second


async def test_a_message_during_a_tool_call_joins_the_reply(
    use_agent: Any, alice_cookie: bytes, session_id: str, gated: Any
) -> None:
    use_agent("tests.steer_agent.make_agent", WHILE_RUNNING="steer")
    first, second = await steered(session_id, alice_cookie, gated())
    for tab in (first, second):
        items = [f["item"] for f in of_type(tab.received, "item.completed")]
        # (the second tab may have had the tool call in its history's active_run)
        assert [i.get("role") or i["kind"] for i in items][-3:] == [
            "tool_output",
            "user",
            "assistant",
        ]
        assert items[-2]["steered"] is True
        assert items[-1]["text"] == "Heard: And Rome?"
        assert not of_type(tab.received, "error")
    assert not of_type(second.received, "steer.accepted")  # the sender's alone
    failures = [problems(SERVER, f) for tab in (first, second) for f in tab.received]
    assert [p for p in failures if p] == []
    assert await run_statuses(session_id) == ["completed"]


@pytest.mark.redis
async def test_runs_as_tasks_take_the_message(
    use_agent: Any, alice_cookie: bytes, session_id: str, gated: Any
) -> None:
    if not os.environ.get("REDIS_URL"):
        pytest.skip("REDIS_URL is not set (bin/test starts Redis and sets it)")
    use_agent(
        "tests.steer_agent.make_agent",
        WHILE_RUNNING="steer",
        RUNS="tasks",
        CATCHUP_TIMEOUT_SECONDS=0.3,
        GAP_TIMEOUT_SECONDS=0.2,
    )
    await steered(session_id, alice_cookie, gated())
    assert await run_statuses(session_id) == ["completed"]
