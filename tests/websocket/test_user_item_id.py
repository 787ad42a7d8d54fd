"""A run's end names the stored id of the person's message it answered (``user_item_id``),
so the chat offers "Branch from here" on a message it just sent, without a reload: the
id is the one the message has in history, and the branch view takes it."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import AsyncClient
from django.urls import reverse

from tests import approval_agent, chat_agent
from tests.scripted import streamed_reply
from tests.streaming.wire.test_protocol import SERVER, problems
from tests.websockets import Socket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


@pytest.fixture(autouse=True)
def agent_settings(use_agent):
    use_agent("tests.chat_agent.make_payment_agent")  # answers, or asks for approvals


async def _history_ids(session_id: str, cookie: bytes) -> dict[str, int]:
    """The stored user messages' ids, by text, as a reload shows them."""
    socket = Socket(session_id, cookie)
    history = await socket.open()
    await socket.close()
    return {item["text"]: item["id"] for item in history["items"] if item.get("role") == "user"}


async def test_each_completed_run_names_its_own_stored_message(alice, alice_cookie, session_id):
    chat_agent.script(streamed_reply("One."), streamed_reply("Two."))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("first")
    first = (await socket.until("run.completed"))[-1]
    await socket.say("second")
    second = (await socket.until("run.completed"))[-1]
    assert problems(SERVER, first) == problems(SERVER, second) == []

    stored = await _history_ids(session_id, alice_cookie)
    assert [first["user_item_id"], second["user_item_id"]] == [stored["first"], stored["second"]]
    page = AsyncClient()
    await page.aforce_login(alice)
    url = reverse("django_agent_sessions:branch", args=[session_id])
    branched = await page.post(url, {"item_id": second["user_item_id"]})
    assert branched.status_code == 200, branched.content
    assert branched.json()["text"] == "second"


async def test_a_stopped_run_names_its_message(alice_cookie, session_id):
    chat_agent.script(streamed_reply("on and on " * 50, delay=0.01))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.say("go on")
    await socket.until("text.delta")  # the model writes: the message is stored
    await socket.send({"type": "cancel"})
    cancelled = (await socket.until("run.cancelled"))[-1]
    assert problems(SERVER, cancelled) == []
    assert cancelled["user_item_id"] == (await _history_ids(session_id, alice_cookie))["go on"]


async def _waiting(socket: Socket, text: str) -> list[dict[str, Any]]:
    """Says ``text``: the run stops on two payments; their requests."""
    await socket.say(text)
    first = (await socket.until("approval.requested"))[-1]
    return [first, (await socket.until("approval.requested"))[-1]]


async def test_a_run_that_waited_names_the_message_of_its_first_part(alice_cookie, session_id):
    payments = streamed_reply("", tool_calls=approval_agent.two_payments())
    chat_agent.script(payments, streamed_reply("Paid."), payments)
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    for request in await _waiting(socket, "Pay"):
        await socket.send({"type": "approval", "call_id": request["call_id"], "approve": True})
    resumed_end = (await socket.until("run.completed"))[-1]
    # A waiting run stopped: its end is recorded at once (it has no task), and names it too.
    await _waiting(socket, "Pay again")
    await socket.send({"type": "cancel"})
    stopped_end = (await socket.until("run.cancelled"))[-1]

    stored = await _history_ids(session_id, alice_cookie)
    assert resumed_end["user_item_id"] == stored["Pay"]
    assert stopped_end["user_item_id"] == stored["Pay again"]
