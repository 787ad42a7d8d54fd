"""Files through the adapter: a file the chat's upload stored goes with a ``useChat``
message as a ``file`` part naming its URL, and loads back as the same part."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import AsyncClient
from django.urls import reverse

from tests import chat_agent
from tests.attachment_helpers import file_storage, png  # noqa: F401
from tests.protocols.ai_sdk.asgi_client import get, send
from tests.protocols.ai_sdk.views_helpers import agent_settings, closing_calls, types  # noqa: F401
from tests.scripted import streamed_reply

pytestmark = pytest.mark.django_db(transaction=True)


async def uploaded(alice: Any, session_id: str, data: bytes) -> dict[str, Any]:
    client = AsyncClient()
    await client.aforce_login(alice)
    url = reverse("django_agent_sessions:upload", args=[session_id])
    response = await client.post(url, {"file": SimpleUploadedFile("dot.png", data, "image/png")})
    assert response.status_code == 201
    return dict(response.json())


async def test_an_uploaded_file_goes_with_a_message_and_loads_back_as_sent(
    alice,
    alice_cookie,
    session_id,
    file_storage,  # noqa: F811
):
    chat_agent.script(streamed_reply("A small picture."))
    stored = await uploaded(alice, session_id, png(4, 3))
    part = {"type": "file", "mediaType": "image/png", "filename": "dot.png", "url": stored["url"]}
    asked = {"id": "m-1", "role": "user", "parts": [part, {"type": "text", "text": "What is it?"}]}
    chunks = await send(session_id, alice_cookie, asked).body()
    assert types(chunks)[-2:] == ["finish", "[DONE]"]
    # The model was given the file itself, as the packaged chat gives it.
    given = chat_agent.model.calls[0].input[-1]["content"]
    assert [piece["type"] for piece in given] == ["input_text", "input_image"]
    loaded = await get(session_id, "messages", alice_cookie).body()
    assert loaded[0] == asked
