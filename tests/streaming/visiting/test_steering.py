"""``steering``: with ``WHILE_RUNNING = "steer"``, a message sent during a reply is stored
for the run, the sender gets ``steer.accepted``, and it enters the run's next model
call, stored in the history where the model saw it, exactly once; one sent when no run
is live starts a run as usual; one left when the run ends is named in its end. Through
``actions`` with a real ``Visitor``, the real ``Runner`` and a scripted model."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from django_agent_sessions import DjangoSession
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentRun, SteerMessage
from django_agent_sessions.streaming.delivery import fanout
from django_agent_sessions.streaming.running import active_runs
from django_agent_sessions.streaming.visiting import actions, while_running
from django_agent_sessions.streaming.visiting.visitor import Visitor
from tests import chat_agent, steer_agent
from tests.scripted import tool_turn

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]

Open = Callable[..., Visitor]


@pytest.fixture
async def visitor(alice: Any, session_id: str, use_agent: Any) -> AsyncIterator[Open]:
    """``visitor(user)``: a tab of ``user`` (alice) on the test's id, messages steering."""
    use_agent("tests.steer_agent.make_agent", WHILE_RUNNING="steer")
    chat_agent.tool_gate = asyncio.Event()

    def make(user: Any = alice) -> Visitor:
        scope = {"type": "websocket"}
        return Visitor(user, session_id, scope=scope, channel_layer=get_channel_layer())

    yield make
    chat_agent.tool_gate.set()
    chat_agent.tool_gate = None
    for active in active_runs.local_runs():  # a run a failing test left going
        active.cancel()
        if active.task is not None:
            await asyncio.wait([active.task], timeout=10)


def message(text: str, client_id: str = "c-0") -> dict[str, Any]:
    return {"type": "user_message", "text": text, "client_id": client_id}


class Events:
    """The conversation's published events, as its tabs get them."""

    def __init__(self, session_pk: int) -> None:
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.seen: list[dict[str, Any]] = []
        self.name = f"test-steering.{uuid.uuid4().hex}"
        fanout.watch(session_pk, self.name, lambda m: self.queue.put_nowait(m["event"]))

    async def until(self, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            event = await asyncio.wait_for(self.queue.get(), 10)
            self.seen.append(event)
            if done(event):
                return event

    def close(self) -> None:
        fanout.unwatch(self.name)


def is_tool_call(event: dict[str, Any]) -> bool:
    return event["type"] == "item.completed" and event["item"]["kind"] == "tool_call"


def is_end(event: dict[str, Any]) -> bool:
    return event["type"] in active_runs.TERMINAL_EVENTS


async def started(tab: Visitor, text: str) -> Events:
    """Send ``text``, then until the run's tool call (its tool waits for the gate)."""
    await actions.send_from_chat(tab, message(text))
    assert tab.conversation_pk is not None
    events = Events(tab.conversation_pk)
    await events.until(is_tool_call)
    return events


async def test_a_message_during_a_tool_call_enters_the_next_model_call(
    alice: Any, visitor: Open
) -> None:
    model = steer_agent.script()
    tab = visitor()
    events = await started(tab, "Weather in Paris?")
    accepted = await actions.send_from_chat(tab, message("And in Rome?", client_id="c-2"))
    assert accepted is not None
    record = await AgentRun.objects.aget(session_id=tab.conversation_pk)
    assert accepted == {"type": "steer.accepted", "run_id": str(record.run_id), "client_id": "c-2"}
    assert chat_agent.tool_gate is not None
    chat_agent.tool_gate.set()
    end = await events.until(is_end)
    events.close()
    assert end["type"] == "run.completed"
    assert "unsteered" not in end
    # The model's second input: the tool's call and output, then the message.
    second = model.calls[1].input
    assert [item.get("type", "message") for item in second[-3:]] == [
        "function_call",
        "function_call_output",
        "message",
    ]
    assert second[-1] == {"role": "user", "content": "And in Rome?"}
    # Every tab saw it enter, after the tool's output, before the reply.
    shown = [e["item"] for e in events.seen if e["type"] == "item.completed"]
    assert [(item["kind"], item.get("role")) for item in shown][-4:] == [
        ("tool_call", None),
        ("tool_output", None),
        ("message", "user"),
        ("message", "assistant"),
    ]
    assert shown[-2] == {
        "kind": "message",
        "role": "user",
        "text": "And in Rome?",
        "client_id": "c-2",
        "steered": True,
    }
    assert shown[-1]["text"] == "Heard: And in Rome?"
    # Stored where the model saw it, exactly once.
    items: list[Any] = await DjangoSession(tab.session_id, owner=alice).get_items()
    kinds = [(item.get("type", "message"), item.get("role")) for item in items]
    assert kinds == [
        ("message", "user"),
        ("function_call", None),
        ("function_call_output", None),
        ("message", "user"),
        ("message", "assistant"),
    ]
    assert items[3]["content"] == "And in Rome?"
    assert await SteerMessage.objects.acount() == 0


async def test_messages_enter_in_order_and_stay_in_later_model_inputs(visitor: Open) -> None:
    model = steer_agent.script(calls=3)
    # The second call asks for the tool again: a third call follows.
    model._steps[1] = tool_turn("get_weather", {"city": "Rome"}, call_id="c2")
    tab = visitor()
    events = await started(tab, "Weather in Paris?")
    await actions.send_from_chat(tab, message("One", client_id="c-1"))
    await actions.send_from_chat(tab, message("Two", client_id="c-2"))
    assert chat_agent.tool_gate is not None
    chat_agent.tool_gate.set()
    await events.until(is_end)
    events.close()
    said = [
        [item["content"] for item in call.input if item.get("role") == "user"]
        for call in model.calls
    ]
    both = ["Weather in Paris?", "One", "Two"]
    assert said == [["Weather in Paris?"], both, both]
    third = [item.get("type", item.get("role")) for item in model.calls[2].input]
    assert third == [
        "user",
        "function_call",
        "function_call_output",
        "user",
        "user",
        "function_call",
        "function_call_output",
    ]


async def test_without_a_live_run_the_message_starts_one(visitor: Open) -> None:
    model = steer_agent.script()
    assert chat_agent.tool_gate is not None
    chat_agent.tool_gate.set()
    tab = visitor()
    assert await actions.send_from_chat(tab, message("Weather in Paris?")) is None
    assert tab.conversation_pk is not None
    active = active_runs.local_run(tab.conversation_pk)
    assert active is not None
    assert active.task is not None
    await asyncio.wait_for(active.task, 10)
    assert len(model.calls) == 2
    assert await SteerMessage.objects.acount() == 0


async def test_a_message_no_model_call_took_is_named_in_the_end(visitor: Open) -> None:
    steer_agent.script()
    tab = visitor()
    events = await started(tab, "Weather in Paris?")
    await actions.send_from_chat(tab, message("Late", client_id="c-9"))
    await actions.cancel(tab, {"type": "cancel"})  # the run ends before its next call
    end = await events.until(is_end)
    events.close()
    assert end["type"] == "run.cancelled"
    assert end["unsteered"] == [{"text": "Late", "client_id": "c-9"}]
    assert await SteerMessage.objects.acount() == 0


async def test_someone_else_cannot_steer_the_run(visitor: Open, make_user: Any) -> None:
    steer_agent.script()
    tab = visitor()
    events = await started(tab, "Weather in Paris?")
    events.close()
    intruder = visitor(await sync_to_async(make_user)("mallory"))
    with pytest.raises(SessionOwnershipError):
        await intruder.find_conversation()
    assert await SteerMessage.objects.acount() == 0


def test_steer_is_a_mode(settings: Any) -> None:
    settings.AGENT_SESSIONS = {"WHILE_RUNNING": "steer"}
    assert while_running.check() == []
    assert while_running.mode() == "steer"
    assert while_running.interrupts() is False
