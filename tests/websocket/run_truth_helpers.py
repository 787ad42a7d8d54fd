"""The scripted agent and the long reply shared by the tests of what runs tell their
sockets."""

from __future__ import annotations

import pytest

from tests import chat_agent

LONG = "and so the story goes on " * 80


@pytest.fixture(autouse=True)
def agent_settings(use_agent):
    use_agent("tests.chat_agent.make_agent")
    yield
    chat_agent.tool_gate = None
