"""Tool approvals over the websocket: one worker, the real Runner, ScriptedModel."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import ToolApproval
from tests import approval_agent, chat_agent
from tests.conversations import run_statuses
from tests.scripted import streamed_reply
from tests.websockets import Socket, login_cookie, of_type

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]
REPLY = "Ann is paid; Bob's payment was refused."


@pytest.fixture(autouse=True)
def agent_settings(use_agent):
    use_agent("tests.chat_agent.make_payment_agent")


def two_payments_turn() -> Any:
    return streamed_reply("", tool_calls=approval_agent.two_payments())


async def _until_waiting(socket: Socket) -> list[dict[str, Any]]:
    frames = await socket.until("approval.requested")
    frames += await socket.until("approval.requested")
    return frames


async def test_approve_and_reject_from_two_tabs(alice_cookie, session_id):
    chat_agent.script(two_payments_turn(), streamed_reply(REPLY))
    first = Socket(session_id, alice_cookie)
    await first.open()
    await first.say("Pay Ann and Bob")
    frames = await _until_waiting(first)
    requests = of_type(frames, "approval.requested")
    assert [(r["call_id"], r["name"]) for r in requests] == [
        ("call-ann", "send_payment"),
        ("call-bob", "send_payment"),
    ]
    assert requests[0]["arguments"] == '{"amount":5,"to":"ann"}'
    assert requests[0]["description"] == approval_agent.PAYMENT_DESCRIPTION
    assert requests[0]["expires_at"]
    run_id = frames[0]["run_id"]
    assert await first.nothing_more()  # waiting: no end of run
    assert await run_statuses(session_id) == ["waiting"]

    second = Socket(session_id, alice_cookie)
    history = await second.open()
    assert [p["call_id"] for p in history["pending_approvals"]] == ["call-ann", "call-bob"]
    assert history["pending_approvals"][0]["run_id"] == run_id
    assert history["pending_approvals"][0]["description"] == approval_agent.PAYMENT_DESCRIPTION
    assert history["active_run"] is None

    await second.say("Something else")
    assert (await second.receive())["code"] == "busy"
    for bad in (
        {"type": "approval", "call_id": "call-ann"},
        {"type": "approval", "call_id": "call-ann", "approve": "yes"},
        {"type": "approval", "call_id": "", "approve": True},
        {"type": "approval", "call_id": "call-ann", "approve": True, "message": 5},
    ):
        await second.send(bad)
        assert (await second.receive())["code"] == "invalid_approval"
    await second.send({"type": "approval", "call_id": "call-zed", "approve": True})
    assert (await second.receive())["code"] == "unknown_approval"
    assert not await ToolApproval.objects.filter(decision__isnull=False).aexists()

    await second.send(
        {"type": "approval", "call_id": "call-bob", "approve": False, "message": "no"}
    )
    for socket in (first, second):
        resolved = await socket.receive()
        assert resolved == {
            "type": "approval.resolved",
            "run_id": run_id,
            # A decision is one of the run's events: numbered after the requests.
            "seq": requests[-1]["seq"] + 1,
            "call_id": "call-bob",
            "approve": False,
        }
    await second.send({"type": "approval", "call_id": "call-bob", "approve": True})
    assert (await second.receive())["code"] == "unknown_approval"

    await first.send({"type": "approval", "call_id": "call-ann", "approve": True})
    for socket in (first, second):
        rest = await socket.until("run.completed")
        assert rest[0]["type"] == "approval.resolved"
        assert rest[0]["approve"] is True
        run_frames = rest[1:]
        assert run_frames[0]["type"] == "run.started"
        assert run_frames[0]["resumed"] is True
        assert {f["run_id"] for f in run_frames} == {run_id}
        assert run_frames[-1]["final_output"] == REPLY
        outputs = [f["item"] for f in of_type(run_frames, "item.completed")]
        assert [o["kind"] for o in outputs] == ["tool_output", "tool_output", "message"]
    seqs = [f["seq"] for f in first.received if "seq" in f]
    assert seqs == list(range(1, len(seqs) + 1))  # one numbering across the pause
    assert await first.nothing_more()
    assert approval_agent.EXECUTED == ["ann"]
    assert await run_statuses(session_id) == ["completed"]

    items = await DjangoSession(session_id).get_items()
    kinds = [(i.get("type", "message"), i.get("call_id") or i.get("role")) for i in items]
    assert kinds == [
        ("message", "user"),
        ("function_call", "call-ann"),
        ("function_call", "call-bob"),
        ("function_call_output", "call-ann"),
        ("function_call_output", "call-bob"),
        ("message", "assistant"),
    ]
    third = Socket(session_id, alice_cookie)
    history = await third.open()
    assert history["pending_approvals"] == []
    assert [i["kind"] for i in history["items"]][-3:] == ["tool_output", "tool_output", "message"]


async def test_another_users_socket_cannot_decide(alice_cookie, make_user, session_id):
    chat_agent.script(two_payments_turn())
    owner = Socket(session_id, alice_cookie)
    await owner.open()
    await owner.say("Pay Ann and Bob")
    await _until_waiting(owner)
    bob_cookie = await sync_to_async(lambda: login_cookie(make_user("bob")))()
    intruder = Socket(session_id + "-bob", bob_cookie)
    history = await intruder.open()
    assert history["pending_approvals"] == []  # others never see the request
    await intruder.send({"type": "approval", "call_id": "call-ann", "approve": True})
    assert (await intruder.receive())["code"] == "unknown_approval"
    assert await owner.nothing_more()
    assert not await ToolApproval.objects.filter(decision__isnull=False).aexists()


async def test_cancel_rejects_the_pending_calls(alice_cookie, session_id):
    chat_agent.script(two_payments_turn(), streamed_reply("A new question answered."))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Pay Ann and Bob")
    await _until_waiting(socket)
    await socket.send({"type": "approval", "call_id": "call-ann", "approve": True})
    await socket.receive()
    await socket.send({"type": "cancel"})
    frames = await socket.until("run.cancelled")
    resolved = of_type(frames, "approval.resolved")
    assert [(r["call_id"], r["approve"], r["reason"]) for r in resolved] == [
        ("call-bob", False, "cancelled")
    ]
    assert await run_statuses(session_id) == ["cancelled"]
    assert approval_agent.EXECUTED == []
    # The history stays valid: the next run's model sees every call with an output.
    await socket.say("New question")
    assert (await socket.until("run.completed"))[-1]["final_output"] == "A new question answered."
    sent = chat_agent.model.calls[-1].input
    assert [i["call_id"] for i in sent if i.get("type") == "function_call_output"] == [
        "call-ann",
        "call-bob",
    ]


async def test_a_waiting_run_expires(alice_cookie, session_id, settings):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "APPROVAL_TIMEOUT": "1s"}
    chat_agent.script(two_payments_turn())
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Pay Ann and Bob")
    await _until_waiting(socket)
    # The watching socket ends it once it is due; nobody has to decide or reload.
    frames = await socket.until("run.cancelled", timeout=10)
    assert {(r["call_id"], r["reason"]) for r in of_type(frames, "approval.resolved")} == {
        ("call-ann", "expired"),
        ("call-bob", "expired"),
    }
    assert await run_statuses(session_id) == ["cancelled"]
    await socket.send({"type": "approval", "call_id": "call-ann", "approve": True})
    assert (await socket.receive())["code"] == "unknown_approval"
    await asyncio.sleep(0)


async def test_signals_say_the_run_waited_and_how_it_was_decided(alice_cookie, session_id):
    from django_agent_sessions.signals import run_finished, run_started

    started: list[dict[str, Any]] = []
    finished: list[dict[str, Any]] = []

    def on_started(sender, **kwargs):
        started.append(kwargs)

    def on_finished(sender, **kwargs):
        finished.append(kwargs)

    run_started.connect(on_started)
    run_finished.connect(on_finished)
    try:
        chat_agent.script(two_payments_turn(), streamed_reply(REPLY))
        socket = Socket(session_id, alice_cookie)
        await socket.open()
        await socket.say("Pay Ann and Bob")
        await _until_waiting(socket)
        assert [s["resumed"] for s in started] == [False]
        assert finished == []  # waiting is not the end
        await socket.send({"type": "approval", "call_id": "call-ann", "approve": True})
        await socket.send({"type": "approval", "call_id": "call-bob", "approve": False})
        await socket.until("run.completed")
        for _ in range(250):  # run_finished follows the end of the run
            if finished:
                break
            await asyncio.sleep(0.02)
    finally:
        run_started.disconnect(on_started)
        run_finished.disconnect(on_finished)
    assert [s["resumed"] for s in started] == [False, True]
    [end] = finished
    assert end["run"].status == "completed"
    assert end["run"].waited_at is not None
    decided = {(a["call_id"], a["decision"], a["decided_by"].username) for a in end["approvals"]}
    assert decided == {("call-ann", "approved", "alice"), ("call-bob", "rejected", "alice")}
    assert all(a["decided_at"] is not None for a in end["approvals"])
