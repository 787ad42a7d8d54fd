"""Regenerating a rated reply as the chat does (Regenerate takes the turn back through
``c/<id>/rewind/``, then the page sends the returned text again on its socket): the old
rating stays, with the old reply's text where the admin shows it, and the new reply
starts unrated."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient
from django.urls import reverse

from django_agent_sessions.models import Feedback, SessionItem
from tests import chat_agent
from tests.admin.helpers import staff
from tests.scripted import streamed_reply
from tests.websocket.consumer_helpers import (
    agent_settings,  # noqa: F401
    wait_until_idle,
)
from tests.websockets import Socket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]

FIRST = "Twelve times seven is eighty-five."
SECOND = "Twelve times seven is eighty-four."


def _chat(name: str, session_id: str, *more: object) -> str:
    return reverse(f"django_agent_sessions:{name}", args=[session_id, *more])


async def _reply(socket: Socket, text: str, answer: str) -> int:
    chat_agent.script(streamed_reply(answer))
    await socket.say(text)
    (*_, completed) = await socket.until("run.completed")
    reply_id = completed["reply_item_id"]
    assert isinstance(reply_id, int)
    return reply_id


async def test_the_old_rating_keeps_the_old_reply_and_the_new_reply_is_unrated(
    alice, alice_cookie, session_id
):
    page = AsyncClient()
    await page.aforce_login(alice)
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    old_reply = await _reply(socket, "What is 12 * 7?", FIRST)
    rating = {"rating": -1, "comment": "Off by one.", "tags": ["inaccurate"]}
    response = await page.post(
        _chat("feedback", session_id, old_reply), rating, content_type="application/json"
    )
    assert response.status_code == 200, response.content

    # Regenerate: the turn is taken back (once the run has ended), its text sent again.
    await wait_until_idle(session_id)
    response = await page.post(_chat("rewind", session_id))
    assert response.json() == {"text": "What is 12 * 7?", "removed": 2}
    new_reply = await _reply(socket, response.json()["text"], SECOND)
    assert new_reply != old_reply
    assert not await SessionItem.objects.filter(pk=old_reply).aexists()

    listed = (await page.get(_chat("feedback_list", session_id))).json()["ratings"]
    assert [r["item_id"] for r in listed] == [old_reply]  # none for the new reply
    given = await Feedback.objects.aget()
    assert (given.item_id, given.rating, given.tag_list) == (old_reply, -1, ["inaccurate"])

    reviewer = AsyncClient()
    await reviewer.aforce_login(await sync_to_async(staff)("reviewer", "view_feedback"))
    admin_page = await reviewer.get(
        reverse("admin:django_agent_sessions_feedback_change", args=[given.pk])
    )
    assert admin_page.status_code == 200
    text = admin_page.content.decode()
    assert FIRST in text
    assert SECOND not in text
    assert "The reply is no longer in the conversation" in text
    assert "Off by one." in text
