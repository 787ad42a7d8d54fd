"""Helpers of the adapter's view tests: the scripted agent, and requests ended after
each test so that no run outlives it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.protocols.ai_sdk.asgi_client import Call


@pytest.fixture(autouse=True)
def agent_settings(use_agent: Any) -> None:
    use_agent("tests.chat_agent.make_payment_agent")


@pytest.fixture(autouse=True)
async def closing_calls() -> AsyncIterator[None]:
    yield
    for call in list(Call.opened):
        await call.close()


def types(chunks: list[Any]) -> list[str]:
    return [chunk["type"] if isinstance(chunk, dict) else chunk for chunk in chunks]


def text_of(chunks: list[Any]) -> str:
    return "".join(c["delta"] for c in chunks if isinstance(c, dict) and c["type"] == "text-delta")
