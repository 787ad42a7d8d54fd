"""What the adapter refuses: someone else's conversation (and a visitor not signed in)
gets a status and nothing of it; a request the app refuses gets the wire's error code
in the protocol's ``error`` chunk, and writes nothing."""

from __future__ import annotations

import pytest

from tests import chat_agent
from tests.conversations import run_statuses
from tests.protocols.ai_sdk.asgi_client import API, Call, get, send, user_message
from tests.protocols.ai_sdk.views_helpers import agent_settings, closing_calls, types  # noqa: F401
from tests.scripted import streamed_reply

pytestmark = pytest.mark.django_db(transaction=True)


def code_of(chunks: list) -> str:
    assert types(chunks) == ["error", "[DONE]"], chunks
    return str(chunks[0]["errorText"].split(": ", 1)[0])


async def test_another_user_gets_nothing_of_a_conversation(alice_cookie, bob_cookie, session_id):
    chat_agent.script(streamed_reply("Only for Alice."))
    assert types(await send(session_id, alice_cookie, user_message("Hi")).body())[-1] == "[DONE]"
    for call in (
        send(session_id, bob_cookie, user_message("Mine now")),
        get(session_id, "stream", bob_cookie),
        get(session_id, "messages", bob_cookie),
        Call("POST", f"{API}/{session_id}/cancel", bob_cookie, {}),
    ):
        assert await call.status() == 403
        assert await call.body() == {"error": "This conversation is not yours."}
    assert await get(session_id, "messages", None).status() == 401
    assert await run_statuses(session_id) == ["completed"]


async def test_a_post_without_its_csrf_token_is_refused(alice_cookie, session_id):
    body = {"id": session_id, "messages": [user_message("Hi")]}
    assert await Call("POST", API, alice_cookie, body, csrf=False).status() == 403
    cancel = Call("POST", f"{API}/{session_id}/cancel", alice_cookie, {}, csrf=False)
    assert await cancel.status() == 403
    assert await run_statuses(session_id) == []


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", "invalid_json"),
        ({"messages": [user_message("Hi")]}, "invalid_frame"),
        ({"id": "x", "messages": [], "trigger": "submit-message"}, "invalid_frame"),
        (
            {"id": "x", "messages": [user_message("Hi")], "trigger": "regenerate-message"},
            "invalid_frame",
        ),
        ({"id": "x", "messages": [user_message("   ")]}, "empty_text"),
        ({"id": "x", "messages": [user_message("a" * 70_000)]}, "too_large"),
    ],
)
async def test_a_request_the_app_refuses_is_an_error_chunk(alice_cookie, session_id, body, code):
    if isinstance(body, dict) and body.get("id") == "x":
        body = {**body, "id": session_id}
    call = Call("POST", API, alice_cookie, body)
    assert await call.status() == 200
    assert code_of(await call.body()) == code
    assert await run_statuses(session_id) == []


async def test_busy_and_rate_limited_are_error_chunks(settings, alice_cookie, session_id):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "RATE_LIMIT": "1/m"}
    chat_agent.script(streamed_reply("and on " * 200, delay=0.01))
    first = send(session_id, alice_cookie, user_message("a"))
    await first.chunks_until("text-delta")
    assert code_of(await send(session_id, alice_cookie, user_message("b", "m-2")).body()) == "busy"
    await first.close()  # stopped
    limited = send(session_id, alice_cookie, user_message("c", "m-3"))
    assert code_of(await limited.body()) == "rate_limited"
    assert int(limited.response.headers["retry-after"]) > 0
    assert await run_statuses(session_id) == ["cancelled"]


async def test_a_spent_budget_is_a_quota_exceeded_chunk(settings, alice_cookie, session_id):
    chat_agent.script(streamed_reply("ok"), streamed_reply("never"))
    assert types(await send(session_id, alice_cookie, user_message("a")).body())[-1] == "[DONE]"
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "QUOTAS": {"TOKENS_PER_DAY": 10}}
    refused = await send(session_id, alice_cookie, user_message("b", "m-2")).body()
    assert code_of(refused) == "quota_exceeded"
    assert await run_statuses(session_id) == ["completed"]
