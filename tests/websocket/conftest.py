"""Fixtures shared by the websocket tests: sockets closed after each test, the app's
settings for a scripted agent, and signed-in users."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from tests import approval_agent, chat_agent
from tests.websockets import close_all_sockets, login_cookie


@pytest.fixture
async def closing_sockets() -> AsyncIterator[None]:
    """Closes every socket a test opened, so that no run outlives its test."""
    yield
    await close_all_sockets()


@pytest.fixture
def use_agent(settings: Any) -> Callable[..., None]:
    """Configures the app for one of ``tests.chat_agent``'s scripted agents.

    ``use_agent("tests.chat_agent.make_agent", HISTORY_LIMIT=4)``: no rate limit, text
    deltas flushed every 10 ms, and the agents' shared state reset.
    """

    def configure(agent: str, **extra: Any) -> None:
        settings.AGENT_SESSIONS = {
            "AGENT": agent,
            "RATE_LIMIT": None,
            "DELTA_FLUSH_SECONDS": 0.01,
            **extra,
        }
        chat_agent.tool_gate = None
        approval_agent.EXECUTED.clear()

    return configure


@pytest.fixture
def alice(make_user: Callable[[str], Any]) -> Any:
    return make_user("alice")


@pytest.fixture
def alice_cookie(alice: Any) -> bytes:
    return login_cookie(alice)


@pytest.fixture
def bob_cookie(make_user: Callable[[str], Any]) -> bytes:
    return login_cookie(make_user("bob"))
