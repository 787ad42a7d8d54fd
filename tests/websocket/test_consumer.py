"""AgentSessionConsumer over the real middleware stack, with the real Runner."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from django_agent_sessions import DjangoSession
from django_agent_sessions.conf import app_settings
from django_agent_sessions.consumers import anonymous_owner
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem
from django_agent_sessions.store import conversations
from django_agent_sessions.websocket import runs
from tests import chat_agent
from tests.scripted import streamed_reply, tool_turn
from tests.websockets import (
    Socket,
    anonymous_cookie,
    login_cookie,
    of_type,
    text_of,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]

ANSWER = "Sunny in Paris today, around twenty-one degrees, with a gentle western breeze."


@pytest.fixture(autouse=True)
def agent_settings(use_agent):
    use_agent("tests.chat_agent.make_agent")


async def wait_until_idle(session_id: str) -> None:
    pk = (
        await AgentSession.objects.filter(session_id=session_id).values_list("pk", flat=True).aget()
    )
    for _ in range(200):
        if runs.local_run(pk) is None:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the run did not end")


async def run_statuses(session_id: str) -> list[str]:
    return [
        status
        async for status in AgentRun.objects.filter(session__session_id=session_id)
        .order_by("started_at")
        .values_list("status", flat=True)
    ]


async def test_a_conversation_streams_and_is_there_after_reconnecting(alice_cookie, session_id):
    chat_agent.script(streamed_reply(ANSWER))
    socket = Socket(session_id, alice_cookie)
    assert await socket.open() == {
        "type": "history",
        "protocol": 2,
        "items": [],
        "has_more": False,
        "oldest_id": None,
        "last_item_id": None,
        "active_run": None,
        "pending_approvals": [],
    }

    await socket.say("Weather in Paris?")
    frames = await socket.until("run.completed")

    assert [f["type"] for f in frames[:2]] == ["run.started", "item.completed"]
    assert frames[1]["item"] == {"kind": "message", "role": "user", "text": "Weather in Paris?"}
    assert [f["seq"] for f in frames] == list(range(1, len(frames) + 1))
    assert len({f["run_id"] for f in frames}) == 1
    assert text_of(frames) == ANSWER
    assert of_type(frames, "item.completed")[-1]["item"]["text"] == ANSWER
    done = frames[-1]
    assert done["final_output"] == ANSWER
    assert done["usage"]["total_tokens"] == 18
    assert await socket.nothing_more()  # each event once, the end of the run included
    await socket.close()

    again = Socket(session_id, alice_cookie)
    history = await again.open()
    assert history["active_run"] is None
    run_id = frames[0]["run_id"]
    shown = [{**item, "created_at": None} for item in history["items"]]
    first_id = history["items"][0]["id"]
    assert shown == [
        {
            "kind": "message",
            "role": "user",
            "text": "Weather in Paris?",
            "id": first_id,
            "created_at": None,
            "run_id": run_id,
        },
        {
            "kind": "message",
            "role": "assistant",
            "text": ANSWER,
            "html": f"<p>{ANSWER}</p>\n",
            "id": first_id + 1,
            "created_at": None,
            "run_id": run_id,
        },
    ]
    assert history["last_item_id"] == first_id + 1
    await again.close()
    assert await run_statuses(session_id) == ["completed"]


async def test_tool_calls_and_outputs_are_items_and_tools_see_the_user(
    alice, alice_cookie, session_id
):
    chat_agent.script(
        tool_turn("get_weather", {"city": "Paris"}, call_id="call-9"), streamed_reply(ANSWER)
    )
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Weather?")
    frames = await socket.until("run.completed")
    items = [f["item"] for f in of_type(frames, "item.completed")]
    assert [item["kind"] for item in items] == ["message", "tool_call", "tool_output", "message"], (
        frames
    )
    assert items[1]["name"] == "get_weather"
    assert items[1]["arguments"] == '{"city":"Paris"}'
    assert items[2] == {"kind": "tool_output", "call_id": "call-9", "output": "sunny in Paris"}
    assert [user.pk for user in chat_agent.tool_users] == [alice.pk]
    await socket.close()


async def test_two_sockets_on_one_conversation_both_see_the_run(alice_cookie, session_id):
    chat_agent.script(streamed_reply(ANSWER))
    first, second = Socket(session_id, alice_cookie), Socket(session_id, alice_cookie)
    await first.open()
    await second.open()  # both open on a new id: nothing is stored yet
    assert not await AgentSession.objects.filter(session_id=session_id).aexists()
    await first.say("Weather?")
    seen_first = await first.until("run.completed")
    seen_second = await second.until("run.completed")
    assert text_of(seen_first) == ANSWER
    # The second tab joins when the first message creates the conversation; told by
    # its own process before the run could publish, it sees the run from its start.
    assert seen_second == seen_first
    assert seen_second[-1] == seen_first[-1]
    await first.close()
    await second.close()


async def test_connecting_writes_nothing_and_the_first_message_creates(
    alice, alice_cookie, session_id
):
    chat_agent.script(streamed_reply(ANSWER))
    for _ in range(3):
        socket = Socket(session_id, alice_cookie)
        history = await socket.open()
        assert history == {
            "type": "history",
            "protocol": 2,
            "items": [],
            "has_more": False,
            "oldest_id": None,
            "last_item_id": None,
            "active_run": None,
            "pending_approvals": [],
        }
        await socket.send({"type": "cancel"})  # nothing to cancel, nothing written
        await socket.send({"type": "load_older", "before": 10})
        page = await socket.receive()
        assert (page["type"], page["items"], page["has_more"]) == ("history.page", [], False)
        await socket.send({"type": "approval", "call_id": "call-1", "approve": True})
        assert (await socket.receive())["code"] == "unknown_approval"
        assert await socket.nothing_more()
        await socket.close()
    assert not await AgentSession.objects.filter(session_id=session_id).aexists()
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Weather?")
    await socket.until("run.completed")
    conversation = await AgentSession.objects.aget(session_id=session_id)
    assert conversation.owner_id == alice.pk
    assert conversation.title == "Weather?"
    await socket.close()


async def test_a_socket_connecting_mid_run_catches_up(alice_cookie, session_id):
    gate = asyncio.Event()
    chat_agent.script(streamed_reply("Earlier answer."), streamed_reply(ANSWER, gate=gate))
    first = Socket(session_id, alice_cookie)
    await first.open()
    await first.say("First question")
    await first.until("run.completed")
    await first.say("Second question")
    before = await first.until("text.delta")

    late = Socket(session_id, alice_cookie)
    history = await late.open()
    gate.set()
    after = await late.until("run.completed")
    await first.until("run.completed")

    assert [item["text"] for item in history["items"]] == ["First question", "Earlier answer."]
    active = history["active_run"]
    assert active["run_id"] == before[0]["run_id"]
    assert active["items"] == [{"kind": "message", "role": "user", "text": "Second question"}]
    assert active["text"] == text_of(before)
    assert active["seq"] == before[-1]["seq"]
    assert after[0]["seq"] == active["seq"] + 1  # nothing missed, nothing twice
    assert active["text"] + text_of(after) == ANSWER
    await first.close()
    await late.close()


async def two_tabs_mid_run(
    session_id: str, cookie: bytes, message: str
) -> tuple[Socket, Socket, asyncio.Event]:
    """Two tabs open; the first said ``message`` and its run streamed its first delta.

    The run then waits for the returned gate to be set.
    """
    gate = asyncio.Event()
    chat_agent.script(streamed_reply(ANSWER, gate=gate))
    first, second = Socket(session_id, cookie), Socket(session_id, cookie)
    await first.open()
    await second.open()
    await first.say(message)
    await first.until("text.delta")
    return first, second, gate


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
    cancel_if_alone = runs.ActiveRun._cancel_if_alone

    def deciding(self: runs.ActiveRun, presence_round: int) -> None:
        cancel_if_alone(self, presence_round)
        decided.set()

    monkeypatch.setattr(runs.ActiveRun, "_cancel_if_alone", deciding)
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


async def test_a_model_error_fails_the_run_and_the_socket_stays_usable(alice_cookie, session_id):
    chat_agent.script(RuntimeError("database password is hunter2"), streamed_reply("Back."))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Hello")
    failed = (await socket.until("run.failed"))[-1]
    assert failed["error"]["code"] == "agent_error"
    assert "hunter2" not in str(failed)
    await socket.say("Hello again")
    assert text_of(await socket.until("run.completed")) == "Back."
    assert await run_statuses(session_id) == ["failed", "completed"]
    record = await AgentRun.objects.filter(status="failed").aget()
    assert "hunter2" in record.error  # kept for the developers, not shown to the user
    await socket.close()


BAD_FRAMES = [
    ("not json", "invalid_json"),
    ("[" * 20000 + "]" * 20000, "invalid_json"),
    ('"just a string"', "invalid_frame"),
    ('{"text": "no type"}', "invalid_frame"),
    ('{"type": "shout", "text": "hi"}', "unknown_type"),
    ('{"type": "user_message"}', "empty_text"),
    ('{"type": "user_message", "text": ""}', "empty_text"),
    ('{"type": "user_message", "text": "   \\n "}', "empty_text"),
    ('{"type": "user_message", "text": 42}', "empty_text"),
    ('{"type": "user_message", "text": "' + "x" * 70000 + '"}', "too_large"),
]


@pytest.mark.parametrize(("frame", "code"), BAD_FRAMES, ids=[c for _, c in BAD_FRAMES])
async def test_a_bad_frame_gets_an_error_and_changes_nothing(alice_cookie, session_id, frame, code):
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.communicator.send_to(text_data=frame)
    error = await socket.receive()
    assert error["type"] == "error"
    assert error["code"] == code
    assert error["message"]
    assert await SessionItem.objects.acount() == 0
    assert await AgentRun.objects.acount() == 0
    # Still open and usable.
    chat_agent.script(streamed_reply("Still here."))
    await socket.say("Hi")
    assert text_of(await socket.until("run.completed")) == "Still here."
    await socket.close()


async def test_a_binary_frame_gets_an_error(alice_cookie, session_id):
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.communicator.send_to(bytes_data=b"\x00\x01")
    assert (await socket.receive())["code"] == "invalid_frame"
    await socket.close()


async def test_anonymous_sockets_are_closed_with_4401(session_id):
    socket = Socket(session_id, cookie=None)
    connected, _ = await socket.connect()
    assert connected
    assert await socket.closed_with() == 4401
    assert await AgentSession.objects.acount() == 0


async def test_another_users_conversation_is_closed_with_4403(alice_cookie, bob_cookie, session_id):
    chat_agent.script(streamed_reply("For Alice only."))
    alices = Socket(session_id, alice_cookie)
    await alices.open()
    await alices.say("secret")
    await alices.until("run.completed")
    await alices.close()

    bobs = Socket(session_id, bob_cookie)
    await bobs.connect()
    assert await bobs.closed_with() == 4403
    assert await bobs.nothing_more()


async def test_an_unusable_session_id_is_closed_with_4403(alice_cookie):
    socket = Socket("x" * 300, alice_cookie)
    await socket.connect()
    assert await socket.closed_with() == 4403


@pytest.mark.parametrize("origin", [b"http://evil.example", None])
async def test_a_foreign_or_missing_origin_is_refused(alice_cookie, session_id, origin):
    socket = Socket(session_id, alice_cookie, origin=origin)
    connected, _ = await socket.connect()
    assert not connected
    assert await AgentSession.objects.acount() == 0


async def test_anonymous_mode_binds_conversations_to_the_django_session(settings, session_id):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "ALLOW_ANONYMOUS": True}
    chat_agent.script(streamed_reply("Hello visitor."))
    visitor_cookie = await sync_to_async(anonymous_cookie)()
    other_cookie = await sync_to_async(anonymous_cookie)()
    visitor = Socket(session_id, visitor_cookie)
    await visitor.open()
    await visitor.say("Hi")
    await visitor.until("run.completed")
    await visitor.close()

    returning = Socket(session_id, visitor_cookie)
    back = await returning.open()
    await returning.close()
    assert [item["text"] for item in back["items"]] == ["Hi", "Hello visitor."]
    stored = await AgentSession.objects.aget()
    key = visitor_cookie.decode().split("=")[1]
    assert stored.session_id == f"anon:{anonymous_owner(key)}:{session_id}"
    assert key not in stored.session_id  # the session key is a credential
    assert stored.owner_id is None
    # Another visitor using the same id gets a conversation of their own.
    other = Socket(session_id, other_cookie)
    assert (await other.open())["items"] == []
    await other.close()
    # A visitor without a Django session cannot chat.
    nobody = Socket(session_id, cookie=None)
    await nobody.connect()
    assert await nobody.closed_with() == 4403


async def test_the_rate_limit_counts_runs_per_user(settings, alice_cookie, session_id):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "RATE_LIMIT": "2/h"}
    chat_agent.script(streamed_reply("1"), streamed_reply("2"), streamed_reply("3"))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    for _ in range(2):
        await socket.say("again")
        await socket.until("run.completed")
    await socket.say("again")
    assert (await socket.until("error"))[-1]["code"] == "rate_limited"
    await socket.close()


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


async def test_a_missing_agent_is_reported_and_nothing_is_stored(
    settings, alice_cookie, session_id, caplog
):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "AGENT": "tests.chat_agent.nothing"}
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Hello?")
    assert (await socket.receive())["code"] == "unavailable"
    assert await SessionItem.objects.acount() == 0
    assert await AgentRun.objects.acount() == 0
    assert "tests.chat_agent" in caplog.text
    await socket.close()


async def test_a_subclass_may_choose_the_agent(alice, session_id):
    from agents import Agent
    from channels.auth import AuthMiddlewareStack
    from channels.routing import URLRouter
    from channels.security.websocket import AllowedHostsOriginValidator
    from channels.testing import WebsocketCommunicator
    from django.urls import path

    from django_agent_sessions.consumers import AgentSessionConsumer
    from tests.scripted import ScriptedModel

    class PirateConsumer(AgentSessionConsumer):
        async def get_agent(self):
            return Agent(name="Pirate", model=ScriptedModel([streamed_reply("Arr.")]))

    app = AllowedHostsOriginValidator(
        AuthMiddlewareStack(URLRouter([path("ws/<str:session_id>/", PirateConsumer.as_asgi())]))
    )
    cookie = await sync_to_async(login_cookie)(alice)
    communicator = WebsocketCommunicator(
        app, f"/ws/{session_id}/", headers=[(b"origin", b"http://testserver"), (b"cookie", cookie)]
    )
    assert (await communicator.connect())[0]
    assert (await communicator.receive_json_from())["type"] == "history"
    await communicator.send_json_to({"type": "user_message", "text": "Ahoy"})
    frames = []
    while not frames or frames[-1]["type"] != "run.completed":
        frames.append(await communicator.receive_json_from(timeout=5))
    assert frames[0]["agent"] == "Pirate"
    assert text_of(frames) == "Arr."
    await communicator.disconnect()


async def test_a_broken_agent_factory_is_reported_and_the_socket_stays_usable(
    settings, alice_cookie, session_id
):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "AGENT": "tests.chat_agent.broken"}
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Hello?")
    error = await socket.receive()
    assert error["code"] == "unavailable"
    assert "secret" not in error["message"]
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "AGENT": "tests.chat_agent.make_agent"}
    chat_agent.script(streamed_reply("Working again."))
    await socket.say("Hello?")
    assert text_of(await socket.until("run.completed")) == "Working again."
    await socket.close()


async def test_a_run_stopped_by_worker_shutdown_is_recorded_as_cancelled(alice_cookie, session_id):
    produced: list[str] = []
    chat_agent.script(streamed_reply(ANSWER * 20, delay=0.02, progress=produced))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("Tell me a long story")
    await socket.until("text.delta")
    pk = await AgentSession.objects.values_list("pk", flat=True).aget(session_id=session_id)
    active = runs.local_run(pk)
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


async def test_run_events_reach_the_socket_while_the_database_thread_is_busy(
    alice, alice_cookie, session_id
):
    # Relaying an event must not wait for Django's sync thread (channels' dispatch hops
    # there before every message): a run streams faster than such a hop, and the
    # channel layer drops what a socket does not take in time.
    await DjangoSession(session_id, owner=alice).add_items([{"role": "user", "content": "hi"}])
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    pk = (
        await AgentSession.objects.filter(session_id=session_id).values_list("pk", flat=True).aget()
    )
    busy = asyncio.ensure_future(sync_to_async(time.sleep, thread_sensitive=True)(1.5))
    await asyncio.sleep(0.05)
    event = {"type": "text.delta", "run_id": "r", "seq": 1, "delta": "hello"}
    layer = get_channel_layer()
    await layer.group_send(runs.group_name(pk), {"type": "agent.event", "event": event})
    try:
        assert await socket.receive(timeout=0.5) == event
    finally:
        await busy


async def test_another_users_socket_on_a_new_id_never_hears_of_its_conversation(
    alice_cookie, bob_cookie, session_id
):
    """The pending group of a new id is its owner's: Bob's socket, open on the id Alice
    then creates, is not brought into her conversation."""
    chat_agent.script(streamed_reply("for Alice only"))
    bobs = Socket(session_id, bob_cookie)
    await bobs.open()
    alices = Socket(session_id, alice_cookie)
    await alices.open()
    await alices.say("a secret")
    await alices.until("run.completed")
    assert await bobs.nothing_more(wait=0.5)


def created_right_after_the_lookup(monkeypatch, owner) -> None:
    """The conversation is created (as by another tab's first message, whose
    announcement the socket is not yet waiting for) right after the socket's lookup."""
    real = conversations.afind_conversation
    lookups = 0

    async def lookup(session_id: str, *, owner_id: Any) -> Any:
        nonlocal lookups
        lookups += 1
        found = await real(session_id, owner_id=owner_id)
        if lookups == 1:
            await conversations.aopen_conversation(session_id, owner_id=owner.pk)
        return found

    monkeypatch.setattr(conversations, "afind_conversation", lookup)


async def test_a_conversation_created_between_lookup_and_waiting_is_joined(
    alice, alice_cookie, session_id, monkeypatch
):
    chat_agent.script(streamed_reply(ANSWER))
    created_right_after_the_lookup(monkeypatch, alice)
    late = Socket(session_id, alice_cookie)
    await late.open()  # found nothing, then found it once waiting: joined
    sender = Socket(session_id, alice_cookie)
    await sender.open()
    await sender.say("Weather?")
    assert text_of(await late.until("run.completed")) == ANSWER


async def test_someone_elses_conversation_created_meanwhile_closes_the_socket(
    make_user, alice_cookie, session_id, monkeypatch
):
    created_right_after_the_lookup(monkeypatch, await sync_to_async(make_user)("bob"))
    socket = Socket(session_id, alice_cookie)
    connected, _ = await socket.connect()
    assert connected
    assert await socket.closed_with() == 4403
