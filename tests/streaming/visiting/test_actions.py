"""``actions``: what a tab's frames do, called directly with a real ``Visitor`` (the
``Participant`` of both transports), the real database and channel layer, and the real
SDK ``Runner`` on the scripted models of ``tests.chat_agent``: a first message creates
the conversation and starts a run; one run at a time; an agent that cannot be built is
``unavailable`` without its details; a cancel stops only the run it names; decisions
resume a waiting run with what was approved."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from channels.layers import get_channel_layer

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.streaming.delivery import fanout, groups
from django_agent_sessions.streaming.running import active_runs
from django_agent_sessions.streaming.visiting import actions
from django_agent_sessions.streaming.visiting.visitor import Visitor
from django_agent_sessions.streaming.wire.frames import BadFrame
from tests import approval_agent, chat_agent
from tests.scripted import streamed_reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]

Open = Callable[[], Visitor]


@pytest.fixture
async def visitor(alice: Any, session_id: str, use_agent: Any) -> AsyncIterator[Open]:
    """``visitor()``: alice on the test's id, as a transport builds her."""
    use_agent("tests.chat_agent.make_payment_agent")

    def make() -> Visitor:
        scope = {"type": "websocket"}
        return Visitor(alice, session_id, scope=scope, channel_layer=get_channel_layer())

    yield make
    for active in active_runs.local_runs():  # a run a failing test left going
        active.cancel()
        if active.task is not None:
            await asyncio.wait([active.task], timeout=10)


def message(text: str, client_id: str = "") -> dict[str, Any]:
    return {"type": "user_message", "text": text, **({"client_id": client_id} if client_id else {})}


def run_of(visitor: Visitor) -> active_runs.ActiveRun:
    """The conversation's run, going in this process."""
    assert visitor.conversation_pk is not None
    active = active_runs.local_run(visitor.conversation_pk)
    assert active is not None
    return active


def task_of(active: active_runs.ActiveRun) -> asyncio.Task[None]:
    assert active.task is not None
    return active.task


async def test_a_first_message_creates_the_conversation_and_starts_a_run(
    alice: Any, visitor: Open
) -> None:
    chat_agent.script(streamed_reply("Hello, Alice."))
    tab = visitor()
    assert tab.conversation_pk is None  # opening an id writes nothing
    await actions.send_message(tab, message("Hi", client_id="c-1"))
    conversation = await AgentSession.objects.aget(pk=tab.conversation_pk)
    assert conversation.owner_id == alice.pk  # the visitor's own
    active = run_of(tab)
    await task_of(active)
    record = await AgentRun.objects.aget(run_id=active.run_id)
    assert (record.status, record.client_id) == ("completed", "c-1")
    items: list[Any] = await DjangoSession(tab.session_id, owner=alice).get_items()
    assert [item["role"] for item in items] == ["user", "assistant"]
    assert items[0]["content"] == "Hi"


async def test_a_message_while_a_run_is_going_is_refused_busy(visitor: Open) -> None:
    gate = asyncio.Event()
    chat_agent.script(streamed_reply("First.", gate=gate), streamed_reply("Second."))
    tab = visitor()
    await actions.send_message(tab, message("One"))
    with pytest.raises(BadFrame) as refused:
        await actions.send_message(tab, message("Two", client_id="c-2"))
    assert (refused.value.code, refused.value.client_id) == ("busy", "c-2")
    gate.set()
    await task_of(run_of(tab))
    await actions.send_message(tab, message("Three"))  # over: the next one starts
    await task_of(run_of(tab))
    statuses = AgentRun.objects.filter(session_id=tab.conversation_pk).values_list("status")
    assert [status async for (status,) in statuses] == ["completed", "completed"]


async def test_a_message_to_a_conversation_deleted_since_the_tab_opened_it_is_not_found(
    alice: Any, visitor: Open, caplog: Any
) -> None:
    chat_agent.script(streamed_reply("First."), streamed_reply("Never."))
    tab = visitor()
    await actions.send_message(tab, message("One"))
    await task_of(run_of(tab))
    await AgentSession.objects.filter(pk=tab.conversation_pk).adelete()  # another tab
    with caplog.at_level("ERROR"), pytest.raises(BadFrame) as refused:
        await actions.send_message(tab, message("Two", client_id="c-2"))
    assert (refused.value.code, refused.value.client_id) == ("not_found", "c-2")
    assert "deleted" in refused.value.message
    assert not caplog.records  # not an error of the server's
    assert not await AgentRun.objects.filter(session_id=tab.conversation_pk).aexists()
    assert not await AgentSession.objects.filter(session_id=tab.session_id).aexists()


async def test_an_agent_that_cannot_be_built_is_unavailable_without_details(
    visitor: Open, use_agent: Any
) -> None:
    tab = visitor()
    use_agent("tests.chat_agent.broken")
    with pytest.raises(BadFrame) as refused:
        await actions.send_message(tab, message("Hi", client_id="c-1"))
    assert (refused.value.code, refused.value.client_id) == ("unavailable", "c-1")
    assert "secret" not in refused.value.message  # the details went to the log
    assert not await AgentRun.objects.aexists()
    # The agent loads before anything is written: no empty conversation is left.
    assert (tab.conversation_pk, await AgentSession.objects.aexists()) == (None, False)
    # Nothing to cancel or decide on in a conversation that never ran.
    await actions.cancel(tab, {"type": "cancel"})
    with pytest.raises(BadFrame) as unknown:
        await actions.decide(tab, {"type": "approval", "call_id": "call-ann", "approve": True})
    assert unknown.value.code == "unknown_approval"
    with pytest.raises(BadFrame) as invalid:
        await actions.cancel(tab, {"type": "cancel", "run_id": 7})  # never "any run"
    assert invalid.value.code == "invalid_frame"


async def test_a_cancel_stops_only_the_run_it_names(visitor: Open) -> None:
    chat_agent.script(streamed_reply("A long answer.", gate=asyncio.Event()))  # never ends
    tab = visitor()
    await actions.send_message(tab, message("Hi"))
    active = run_of(tab)
    assert tab.conversation_pk is not None
    await actions.cancel(tab, {"type": "cancel", "run_id": str(uuid.uuid4())})
    # A round trip through the run's control channel: the cancel before it was handled.
    layer, answers = get_channel_layer(), f"test-actions.tab-{uuid.uuid4().hex}"
    ask = {"type": "agent.replay", "reply_to": answers, "after": 0}
    await layer.group_send(groups.control_group_name(tab.conversation_pk), ask)
    assert (await asyncio.wait_for(layer.receive(answers), 10))["type"] == "agent.replayed"
    assert not task_of(active).done()
    await actions.cancel(tab, {"type": "cancel", "run_id": active.run_id})
    await asyncio.wait_for(task_of(active), 10)
    record = await AgentRun.objects.aget(run_id=active.run_id)
    assert record.status == "cancelled"


async def test_decisions_resume_the_waiting_run_with_what_was_approved(
    alice: Any, visitor: Open
) -> None:
    calls = streamed_reply("", tool_calls=approval_agent.two_payments())
    chat_agent.script(calls, streamed_reply("Paid Ann."))
    tab = visitor()
    await actions.send_message(tab, message("Pay Ann and Bob"))
    waiting = run_of(tab)
    await task_of(waiting)
    assert tab.conversation_pk is not None
    events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    watcher = f"test-actions.tab-{uuid.uuid4().hex}"
    fanout.watch(tab.conversation_pk, watcher, lambda m: events.put_nowait(m["event"]))
    try:
        with pytest.raises(BadFrame) as unknown:
            await actions.decide(tab, {"type": "approval", "call_id": "call-zed", "approve": True})
        assert unknown.value.code == "unknown_approval"
        refuse = {"type": "approval", "call_id": "call-bob", "approve": False, "message": "No."}
        await actions.decide(tab, refuse)
        resolved = await asyncio.wait_for(events.get(), 10)
        assert (resolved["type"], resolved["call_id"], resolved["approve"]) == (
            "approval.resolved",
            "call-bob",
            False,
        )
        assert active_runs.local_run(tab.conversation_pk) is None  # Ann's call still waits
        await actions.decide(tab, {"type": "approval", "call_id": "call-ann", "approve": True})
        resumed = run_of(tab)  # the last decision resumed it here
        assert resumed.run_id == waiting.run_id
        await task_of(resumed)
    finally:
        fanout.unwatch(watcher)
    record = await AgentRun.objects.aget(run_id=waiting.run_id)
    assert record.status == "completed"
    assert approval_agent.EXECUTED == ["ann"]
    items: list[Any] = await DjangoSession(tab.session_id, owner=alice).get_items()
    outputs = {i["call_id"]: i["output"] for i in items if i.get("type") == "function_call_output"}
    assert outputs == {"call-ann": "sent 5 to ann", "call-bob": "No."}
