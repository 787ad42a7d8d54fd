"""Helpers for the SSE views' tests: the scripted agent's settings, the conversation's
URLs, its runs' statuses, and an event stream opened on its history."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sse.client import EventStream


@pytest.fixture(autouse=True)
def agent_settings(use_agent):
    use_agent("tests.chat_agent.make_payment_agent")


def url(session_id: str, tail: str) -> str:
    return f"/chat/c/{session_id}/{tail}"


async def opened(session_id: str, cookie: bytes, **kwargs: Any) -> tuple[EventStream, dict]:
    stream = EventStream(url(session_id, "events/"), cookie, **kwargs)
    assert await stream.status() == 200
    history = await stream.frame()
    assert history["type"] == "history", history
    return stream, history
