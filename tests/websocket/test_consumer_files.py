"""A message with files over the websocket: the model gets them, every tab and the
history show them, and the session keeps each file once."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentSession, Attachment
from django_agent_sessions.store import uploads
from tests import chat_agent
from tests.attachment_helpers import data_url, png, stored_files
from tests.scripted import streamed_reply
from tests.websocket.consumer_helpers import (
    ANSWER,
    agent_settings,  # noqa: F401
)
from tests.websockets import Socket, of_type

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


async def _uploaded(user, session_id: str, data: bytes, name: str, content_type: str):
    accept = sync_to_async(uploads.accept)
    return await accept(user, session_id, name=name, data=data, content_type=content_type)


async def test_files_reach_the_model_and_show_live_and_after_reload(
    alice, alice_cookie, session_id, file_storage
):
    image, notes = png(5, 3), b"shopping list\n"
    picture = await _uploaded(alice, session_id, image, "dot.png", "image/png")
    text_file = await _uploaded(alice, session_id, notes, "list.txt", "text/plain")
    model = chat_agent.script(streamed_reply(ANSWER))
    socket = Socket(session_id, alice_cookie)
    await socket.open()

    await socket.send(
        {"type": "user_message", "text": "What are these?", "files": [picture.id, text_file.id]}
    )
    frames = await socket.until("run.completed")

    shown_files = [picture.wire(), text_file.wire()]
    user_item = of_type(frames, "item.completed")[0]["item"]
    assert user_item == {
        "kind": "message",
        "role": "user",
        "text": "What are these?",
        "files": shown_files,
    }
    assert model.last_call is not None
    assert model.last_call.input[-1]["content"] == [
        {"type": "input_text", "text": "What are these?"},
        {"type": "input_image", "image_url": data_url(image), "detail": "auto"},
        {
            "type": "input_file",
            "file_data": data_url(notes, "text/plain"),
            "filename": "list.txt",
        },
    ]
    # The session gives the model's input back exactly, and keeps each file once.
    items = await DjangoSession(session_id, owner=alice).get_items()
    assert items[0]["content"] == model.last_call.input[-1]["content"]
    assert await Attachment.objects.acount() == 2
    assert len(stored_files(file_storage)) == 2
    await socket.close()

    history = await Socket(session_id, alice_cookie).open()
    first = history["items"][0]
    assert (first["text"], first["files"]) == ("What are these?", shown_files)


async def test_a_message_may_be_files_alone(alice, alice_cookie, session_id, file_storage):
    picture = await _uploaded(alice, session_id, png(4, 4), "a.png", "image/png")
    model = chat_agent.script(streamed_reply(ANSWER))
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.send({"type": "user_message", "text": "", "files": [picture.id]})
    await socket.until("run.completed")
    assert model.last_call is not None
    assert [part["type"] for part in model.last_call.input[-1]["content"]] == ["input_image"]


@pytest.mark.parametrize(
    ("files", "code"),
    [([0], "invalid_frame"), (["1"], "invalid_frame"), ([1, 2, 3, 4, 5, 6], "too_many_files")],
)
async def test_bad_file_lists_are_refused(alice_cookie, session_id, files, code):
    socket = Socket(session_id, alice_cookie)
    await socket.open()
    await socket.send({"type": "user_message", "text": "hi", "files": files})
    (error,) = await socket.until("error")
    assert error["code"] == code


async def test_a_file_of_someone_else_starts_nothing(alice, bob_cookie, session_id, file_storage):
    picture = await _uploaded(alice, "alices", png(4, 4), "a.png", "image/png")
    model = chat_agent.script(streamed_reply(ANSWER))
    socket = Socket(session_id, bob_cookie)
    await socket.open()
    await socket.send({"type": "user_message", "text": "hi", "files": [picture.id]})
    (error,) = await socket.until("error")
    assert error["code"] == "unknown_file"
    assert model.last_call is None
    assert await socket.nothing_more()
    # Nothing was written: no conversation (so no run) for bob.
    assert not await AgentSession.objects.filter(session_id=session_id).aexists()
