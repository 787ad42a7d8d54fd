"""The ChatKit endpoint through Django's real ASGI handler: a streamed answer as
ChatKit's Server-Sent Events, the rest as JSON; sign-in, CSRF and ownership as the
app's other endpoints; attachments uploaded, shown to their owner only."""

from __future__ import annotations

import json

import pytest
from chatkit.types import (
    AttachmentCreateParams,
    AttachmentsCreateReq,
    Page,
    Thread,
    ThreadGetByIdParams,
    ThreadListParams,
    ThreadsGetByIdReq,
    ThreadsListReq,
)

from tests import chat_agent
from tests.protocols.chatkit.asgi_client import API, get, post, upload
from tests.protocols.chatkit.helpers import add_message, create, events_of, of_type
from tests.scripted import streamed_reply, tool_turn

pytestmark = pytest.mark.django_db(transaction=True)

REPLY = "Sunny in Paris."


@pytest.fixture(autouse=True)
def _agent(use_agent):
    use_agent("tests.chat_agent.make_agent")
    chat_agent.script(streamed_reply(REPLY))


def _json(request) -> dict:
    return json.loads(request.model_dump_json())


async def _thread_of(cookie) -> str:
    status, body = await post(API, create("Weather?"), cookie)
    assert status == 200
    return str(of_type(events_of(body.encode()), "thread.created")[0].thread.id)


async def test_a_new_thread_streams_its_answer_and_lists_and_loads_as_json(alice_cookie):
    status, body = await post(API, create("Weather?"), alice_cookie)
    assert status == 200
    events = events_of(body.encode())
    thread_id = of_type(events, "thread.created")[0].thread.id
    assert of_type(events, "thread.item.done")[-1].item.content[0].text == REPLY

    status, listed = await post(API, _json(ThreadsListReq(params=ThreadListParams())), alice_cookie)
    assert status == 200
    assert [thread.id for thread in Page[Thread].model_validate(listed).data] == [thread_id]
    asked = ThreadsGetByIdReq(params=ThreadGetByIdParams(thread_id=thread_id))
    status, loaded = await post(API, _json(asked), alice_cookie)
    thread = Thread.model_validate(loaded)
    assert [item.type for item in thread.items.data] == ["user_message", "assistant_message"]


async def test_the_apps_tools_run_with_the_user_in_their_context(alice, alice_cookie):
    chat_agent.script(
        tool_turn("get_weather", {"city": "Paris"}, call_id="call-1"), streamed_reply(REPLY)
    )
    status, body = await post(API, create("Weather?"), alice_cookie)
    assert status == 200
    assert of_type(events_of(body.encode()), "thread.item.done")[-1].item.content[0].text == REPLY
    assert chat_agent.tool_users == [alice]
    assert "sunny in Paris" in str(chat_agent.model.last_call.input)


async def test_anonymous_requests_and_requests_without_the_csrf_token_are_refused(
    alice_cookie,
):
    assert (await post(API, create("Weather?"), None))[0] == 401
    assert (await post(API, create("Weather?"), alice_cookie, csrf=False))[0] == 403
    assert chat_agent.model.calls == ()


async def test_another_users_thread_is_not_found(alice_cookie, bob_cookie):
    thread_id = await _thread_of(alice_cookie)
    asked = ThreadsGetByIdReq(params=ThreadGetByIdParams(thread_id=thread_id))
    assert (await post(API, _json(asked), bob_cookie))[0] == 404

    status, body = await post(API, add_message(thread_id, "Mine now"), bob_cookie)
    assert status == 200
    assert [event.type for event in events_of(body.encode())] == ["error"]
    assert len(chat_agent.model.calls) == 1  # alice's only


async def test_an_attachment_is_uploaded_and_shown_to_its_owner_only(
    alice_cookie, bob_cookie, file_storage
):
    params = AttachmentCreateParams(name="cat.png", size=4, mime_type="image/png")
    status, created = await post(API, _json(AttachmentsCreateReq(params=params)), alice_cookie)
    assert status == 200
    assert created["type"] == "image"
    upload_url, preview_url = created["upload_descriptor"]["url"], created["preview_url"]
    assert upload_url.startswith("http://testserver/chatkit/attachments/")

    assert (await upload(upload_url, bob_cookie, b"\x89PNG"))[0] == 404
    assert (await upload(upload_url, alice_cookie, b"\x89PNG"))[0] == 200
    status, data, headers = await get(preview_url, alice_cookie)
    assert (status, data, headers["content-type"]) == (200, b"\x89PNG", "image/png")
    assert (await get(preview_url, bob_cookie))[0] == 404
