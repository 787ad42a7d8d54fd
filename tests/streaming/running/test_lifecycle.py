"""A run's life has one owner: every end records first, leaves a valid history, and a
cancel naming a run touches only that run. In-process, with the real Runner."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.core.management import call_command
from django.utils import timezone

from django_agent_sessions import DjangoSession, signals
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem
from django_agent_sessions.store import open_calls
from django_agent_sessions.streaming.running import active_runs
from tests import approval_agent, chat_agent
from tests.scripted import streamed_reply
from tests.websockets import Socket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


@pytest.fixture(autouse=True)
def agent_settings(use_agent):
    use_agent("tests.chat_agent.make_payment_agent")


def two_payments_turn() -> Any:
    return streamed_reply("", tool_calls=approval_agent.two_payments())


async def waiting_run(socket: Socket) -> str:
    """Ask for the two payments; the waiting run's id."""
    await socket.say("Pay Ann and Bob")
    frames = await socket.until("approval.requested")
    await socket.until("approval.requested")
    return str(frames[0]["run_id"])


async def stored(session_id: str) -> list[Any]:
    return await DjangoSession(session_id).get_items()


def assert_every_call_has_its_output(items: list[dict[str, Any]]) -> None:
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert sorted(calls) == sorted(outputs), items
    assert calls, "the scenario stored no call"


async def test_a_cancel_naming_another_run_leaves_the_waiting_run_alone(alice_cookie, session_id):
    chat_agent.script(streamed_reply("First answer."), two_payments_turn())
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Hello")
    first = (await socket.until("run.completed"))[-1]["run_id"]
    waiting = await waiting_run(socket)
    await socket.send({"type": "cancel", "run_id": first})
    await socket.send({"type": "cancel", "run_id": "not-a-run-id"})
    assert await socket.nothing_more()
    statuses = [s async for s in AgentRun.objects.order_by("started_at").values_list("status")]
    assert statuses == [("completed",), ("waiting",)]
    await socket.send({"type": "cancel", "run_id": waiting})
    assert (await socket.until("run.cancelled"))[-1]["run_id"] == waiting


async def test_stop_right_after_approving_leaves_every_call_with_its_output(
    alice_cookie, session_id
):
    chat_agent.script(two_payments_turn(), streamed_reply("Paid.", delay=0.05))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    run_id = await waiting_run(socket)
    await socket.send({"type": "approval", "call_id": "call-bob", "approve": False})
    await socket.until("approval.resolved")
    await socket.send({"type": "approval", "call_id": "call-ann", "approve": True})
    await socket.until("approval.resolved")
    await socket.send({"type": "cancel", "run_id": run_id})  # the moment it arrives
    end = (await socket.until("run.cancelled", "run.completed"))[-1]
    assert end["run_id"] == run_id
    assert_every_call_has_its_output(await stored(session_id))
    # The conversation goes on: the next run's model input is valid.
    chat_agent.script(streamed_reply("Next."))
    await socket.say("And now?")
    assert (await socket.until("run.completed"))[-1]["final_output"] == "Next."


@pytest.mark.parametrize("breakage", ["unreadable_state", "agent_fails_on_resume"])
async def test_a_run_that_cannot_resume_leaves_every_call_with_its_output(
    breakage, alice_cookie, session_id, monkeypatch
):
    chat_agent.script(two_payments_turn())
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    run_id = await waiting_run(socket)
    if breakage == "unreadable_state":  # as after an SDK upgrade between pause and decision
        state = json.dumps({"$schemaVersion": "0.0"})
        await AgentRun.objects.filter(run_id=run_id).aupdate(state=state)
    else:

        async def broken_agent(self: Any) -> Any:
            raise RuntimeError("the agent factory failed")

        from django_agent_sessions.websocket.consumer import AgentSessionConsumer

        monkeypatch.setattr(AgentSessionConsumer, "get_agent", broken_agent)
    await socket.send({"type": "approval", "call_id": "call-ann", "approve": True})
    await socket.send({"type": "approval", "call_id": "call-bob", "approve": True})
    failed = (await socket.until("run.failed"))[-1]
    assert failed["run_id"] == run_id
    record = await AgentRun.objects.aget(run_id=run_id)
    assert record.status == "failed"
    items = await stored(session_id)
    assert_every_call_has_its_output(items)
    outputs = {i["output"] for i in items if i.get("type") == "function_call_output"}
    assert outputs == {open_calls.NOT_RESUMED_CALL}
    assert approval_agent.EXECUTED == []


async def test_a_message_sent_on_the_terminal_frame_is_never_busy(alice_cookie, session_id):
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    chat_agent.script(*(streamed_reply(f"Answer {n}.") for n in range(50)))
    busy = 0
    for n in range(50):
        await socket.say(f"Question {n}")
        frames = await socket.until("run.completed", "error")
        busy += frames[-1]["type"] == "error"
    assert busy == 0


def dead_run(session_pk: int, *, call_id: str) -> AgentRun:
    """A run whose worker was killed after the SDK stored a tool call: lease over."""
    past = timezone.now() - timedelta(seconds=1)
    run = AgentRun.objects.create(session_id=session_pk, agent_name="A", lease_expires_at=past)
    session = AgentSession.objects.get(pk=session_pk)
    async_to_sync(DjangoSession(session.session_id).add_items)(
        [
            {"role": "user", "content": "Weather?"},
            {
                "type": "function_call",
                "call_id": call_id,
                "name": "get_weather",
                "arguments": "{}",
            },
        ]
    )
    return run


async def test_the_sweep_ends_a_lost_run_nobody_watches_once(alice):
    finished: list[Any] = []

    def on_finished(sender: Any, run: Any, usage: Any, user: Any, **kwargs: Any) -> None:
        finished.append((run.run_id, run.status, user))

    signals.run_finished.connect(on_finished)
    try:
        conversation = await AgentSession.objects.acreate(session_id="nobody-looks", owner=alice)
        dead = await sync_to_async(dead_run)(conversation.pk, call_id="call-w")
        await sync_to_async(call_command)("agent_sessions_sweep", stdout=_Null())
        await sync_to_async(call_command)("agent_sessions_sweep", stdout=_Null())
    finally:
        signals.run_finished.disconnect(on_finished)
    record = await AgentRun.objects.aget(pk=dead.pk)
    assert (record.status, record.error_code) == ("failed", "worker_lost")
    assert finished == [(dead.run_id, "failed", alice)]
    items = await stored("nobody-looks")
    assert_every_call_has_its_output(items)
    assert items[-1]["output"] == open_calls.LOST_CALL
    assert record.last_item_id == await SessionItem.objects.filter(
        session=conversation
    ).values_list("id", flat=True).alatest("id")


async def test_the_sweep_ends_an_expired_approval_nobody_watches(alice_cookie, session_id):
    chat_agent.script(two_payments_turn())
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    run_id = await waiting_run(socket)
    await socket.close()
    past = timezone.now() - timedelta(seconds=1)
    await AgentRun.objects.filter(run_id=run_id).aupdate(approval_expires_at=past)
    await sync_to_async(call_command)("agent_sessions_sweep", stdout=_Null())
    record = await AgentRun.objects.aget(run_id=run_id)
    assert record.status == "cancelled"
    assert_every_call_has_its_output(await stored(session_id))
    assert active_runs.local_run(record.session_id) is None


class _Null:
    def write(self, text: str) -> None:
        pass

    def flush(self) -> None:
        pass


async def test_approve_and_cancel_at_once_end_one_way(alice_cookie, session_id):
    """Approve and Stop from two tabs at the same instant: one outcome, no deadlock."""
    for round_ in range(5):
        conversation = f"{session_id}-{round_}"
        chat_agent.script(two_payments_turn(), streamed_reply("Paid."))
        deciding, stopping = Socket(conversation, alice_cookie), Socket(conversation, alice_cookie)
        await deciding.open()
        await stopping.open()
        run_id = await waiting_run(deciding)
        await deciding.send({"type": "approval", "call_id": "call-bob", "approve": False})
        await deciding.until("approval.resolved")
        await asyncio.gather(
            deciding.send({"type": "approval", "call_id": "call-ann", "approve": True}),
            stopping.send({"type": "cancel", "run_id": run_id}),
        )
        ends = [
            (await tab.until("run.cancelled", "run.completed"))[-1]["type"]
            for tab in (deciding, stopping)
        ]
        assert ends[0] == ends[1], ends
        assert_every_call_has_its_output(await stored(conversation))
        await deciding.close()
        await stopping.close()


@pytest.mark.parametrize("opted_in", [False, True])
async def test_a_worker_keeps_sweeping_after_its_last_socket_only_when_opted_in(opted_in, settings):
    from django_agent_sessions.streaming.running.lost import LostRunSweeper

    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "SWEEP_IN_WORKERS": opted_in}
    sweeper = LostRunSweeper()
    sweeper.acquire(channel_layer=None)
    task = sweeper._task
    assert task is not None
    sweeper.release()
    await asyncio.sleep(0)
    assert task.cancelled() is not opted_in
    task.cancel()
