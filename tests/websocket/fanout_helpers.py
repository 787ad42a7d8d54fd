"""Fixtures and the reply shared by the tests of how runs reach sockets in this process
and in other workers: the scripted agent, a signed-in user's cookie and conversation."""

from __future__ import annotations

import pytest

from django_agent_sessions.models import AgentSession

ANSWER = "Fog over the harbour this morning, clearing to a bright and windy afternoon."


@pytest.fixture(autouse=True)
def agent_settings(use_agent):
    use_agent("tests.chat_agent.make_agent")


@pytest.fixture(name="cookie")
def cookie_fixture(alice_cookie: bytes) -> bytes:
    return alice_cookie


@pytest.fixture(name="conversation_pk")
def conversation_pk_fixture(alice, session_id) -> int:
    return int(AgentSession.objects.create(session_id=session_id, owner=alice).pk)
