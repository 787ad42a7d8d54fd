"""The AI SDK adapter sends messages as the chat does (``actions.send_message``): with
``WHILE_RUNNING = "interrupt"``, a message posted while a reply streams stops that reply
(its stream ends) and is answered in its own stream."""

from __future__ import annotations

import pytest

from tests import chat_agent
from tests.conversations import run_statuses
from tests.protocols.ai_sdk.asgi_client import send, user_message
from tests.protocols.ai_sdk.views_helpers import agent_settings, closing_calls, text_of, types  # noqa: F401
from tests.scripted import streamed_reply

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_message_during_a_reply_stops_it_and_is_answered(
    settings, alice_cookie, session_id
):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "WHILE_RUNNING": "interrupt"}
    produced: list[str] = []
    story = "and on " * 200
    chat_agent.script(
        streamed_reply(story, delay=0.01, progress=produced), streamed_reply("Second.")
    )
    first = send(session_id, alice_cookie, user_message("a"))
    await first.chunks_until("text-delta")
    second = await send(session_id, alice_cookie, user_message("b", "m-2")).body()
    assert "error" not in types(second)
    assert text_of(second) == "Second."
    assert types(await first.body())[-1] == "[DONE]"  # the stopped reply's stream ended
    assert len("".join(produced)) < len(story) / 2  # stopped, not finished
    assert await run_statuses(session_id) == ["cancelled", "completed"]
