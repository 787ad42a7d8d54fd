"""Token budgets at the door of a run, on both transports: a person whose budget is
spent is refused with ``quota_exceeded`` and when it refills, before any model call;
the run that crossed the budget was allowed to finish (the documented one run over)."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.utils import timezone

from django_agent_sessions.budgets import quotas
from tests import chat_agent
from tests.conversations import run_statuses
from tests.scripted import streamed_reply
from tests.sse.client import post
from tests.sse.views_helpers import opened, url
from tests.streaming.wire.test_protocol import SERVER, problems
from tests.websocket.consumer_helpers import agent_settings  # noqa: F401 - autouse
from tests.websockets import Socket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]

# Each scripted reply spends 18 tokens (tests.scripted): the second crosses 30.
BUDGET = {"TOKENS_PER_DAY": 30}


def _check_refusal(error: dict, session_id: str) -> None:
    assert (error["type"], error["code"]) == ("error", "quota_exceeded")
    assert problems(SERVER, error) == []
    resets_at = datetime.fromisoformat(error["resets_at"])
    assert resets_at == quotas.period("day", timezone.now())[1]
    assert 0 < error["retry_after"] <= 24 * 3600
    assert "budget" in error["message"]


async def test_a_spent_budget_refuses_the_next_message_on_the_websocket(
    settings, alice_cookie, session_id
):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "QUOTAS": BUDGET}
    model = chat_agent.script(streamed_reply("one"), streamed_reply("two"), streamed_reply("no"))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    for text in ("a", "b"):  # 18 tokens, then 36: the run that crosses finishes
        await socket.say(text)
        await socket.until("run.completed")
    await socket.send({"type": "user_message", "text": "c", "client_id": "c-3"})
    error = (await socket.until("error"))[-1]
    _check_refusal(error, session_id)
    assert error["client_id"] == "c-3"
    assert len(model.calls) == 2  # refused before any model call
    assert await run_statuses(session_id) == ["completed", "completed"]
    await socket.close()


async def test_a_spent_budget_refuses_the_next_message_over_http(
    settings, alice_cookie, session_id
):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "QUOTAS": BUDGET}
    model = chat_agent.script(streamed_reply("one"), streamed_reply("two"), streamed_reply("no"))
    stream, _history = await opened(session_id, alice_cookie)
    for text in ("a", "b"):
        assert (await post(url(session_id, "messages/"), {"text": text}, alice_cookie))[0] == 202
        await stream.frames_until("run.completed")
    status, body = await post(url(session_id, "messages/"), {"text": "c"}, alice_cookie)
    assert status == 429
    _check_refusal(body, session_id)
    assert len(model.calls) == 2
    assert await run_statuses(session_id) == ["completed", "completed"]
