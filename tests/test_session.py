"""DjangoSession's protocol behaviour, on whichever database the run uses: reading,
adding, popping and clearing items, limits, and conversations kept apart by id."""

from __future__ import annotations

import pytest
from agents.memory import Session, SessionSettings

from django_agent_sessions.models import AgentSession
from tests.conftest import assistant_message, user_message
from tests.session_helpers import numbered, texts

pytestmark = pytest.mark.django_db(transaction=True)


def test_is_a_session_protocol_instance(make_session):
    assert isinstance(make_session(), Session)


def test_subclasses_the_sdk_session_abc(make_session):
    # EncryptedSession and other SDK wrappers are annotated with SessionABC; mypy
    # checks tests/test_runner.py's EncryptedSession(underlying_session=DjangoSession)
    # without an ignore.
    from agents.memory import SessionABC

    assert isinstance(make_session(), SessionABC)


async def test_accepts_the_context_aware_call_shape(make_session):
    from agents.memory.session import _session_accepts_wrapper
    from agents.run_context import RunContextWrapper

    session = make_session()
    assert _session_accepts_wrapper(session)  # so the Runner passes wrapper=
    wrapper = RunContextWrapper(context={"owner": "someone else"})
    await session.add_items([user_message("hi")], wrapper=wrapper)
    assert texts(await session.get_items(wrapper=wrapper)) == ["hi"]
    assert (await session.pop_item(wrapper=wrapper))["content"] == "hi"
    await session.clear_session(wrapper=wrapper)


async def test_items_come_back_in_order(make_session):
    session = make_session()
    await session.add_items(numbered(3))
    await session.add_items(numbered(5)[3:])
    assert texts(await session.get_items()) == [f"message {i}" for i in range(5)]


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        (None, list(range(6))),
        (2, [4, 5]),
        (6, list(range(6))),
        (50, list(range(6))),
        (0, []),
        (-1, []),
        (-100, []),
    ],
)
async def test_get_items_limit(make_session, limit, expected):
    session = make_session()
    await session.add_items(numbered(6))
    assert texts(await session.get_items(limit)) == [f"message {i}" for i in expected]


@pytest.mark.parametrize("settings_value", [SessionSettings(limit=3), {"limit": 3}])
async def test_session_settings_limit_is_the_default(make_session, settings_value):
    session = make_session(session_settings=settings_value)
    await session.add_items(numbered(5))
    assert texts(await session.get_items()) == ["message 2", "message 3", "message 4"]
    # An explicit limit overrides the settings.
    assert texts(await session.get_items(1)) == ["message 4"]
    assert texts(await session.get_items(10)) == [f"message {i}" for i in range(5)]


async def test_sessions_are_isolated_by_id(make_session):
    first, second = make_session("a"), make_session("b")
    await first.add_items([user_message("for a")])
    await second.add_items([user_message("for b")])
    assert texts(await first.get_items()) == ["for a"]
    assert texts(await second.get_items()) == ["for b"]
    await first.clear_session()
    assert texts(await second.get_items()) == ["for b"]


async def test_a_second_instance_sees_the_same_history(make_session):
    await make_session().add_items(numbered(2))
    assert texts(await make_session().get_items()) == ["message 0", "message 1"]


async def test_missing_session_reads_empty_and_creates_nothing(make_session):
    session = make_session()
    assert await session.get_items() == []
    assert await session.get_items(5) == []
    assert await session.pop_item() is None
    await session.clear_session()
    await session.add_items([])
    assert await AgentSession.objects.acount() == 0


async def test_pop_returns_the_newest_and_removes_it(make_session):
    session = make_session()
    await session.add_items(numbered(3))
    assert (await session.pop_item())["content"] == "message 2"
    assert (await session.pop_item())["content"] == "message 1"
    assert texts(await session.get_items()) == ["message 0"]
    assert (await session.pop_item())["content"] == "message 0"
    assert await session.pop_item() is None
    row = await AgentSession.objects.aget(session_id=session.session_id)
    assert row.item_count == 0


async def test_clear_removes_items_and_keeps_the_row(make_session):
    session = make_session()
    await session.add_items(numbered(4))
    await session.clear_session()
    assert await session.get_items() == []
    row = await AgentSession.objects.aget(session_id=session.session_id)
    assert row.item_count == 0
    assert row.title == "message 0"
    await session.add_items([user_message("after clear")])
    assert texts(await session.get_items()) == ["after clear"]


async def test_limited_reads_are_the_latest_n_stored_items(make_session):
    # The SDK's item-count semantics: a window may start between a tool call and its
    # output (the Runner prunes the unmatched output from model input itself).
    session = make_session()
    call = {"type": "function_call", "call_id": "c1", "name": "clock", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "12:00"}
    await session.add_items([user_message("time?"), call, output, assistant_message("noon")])
    assert await session.get_items(3) == [call, output, assistant_message("noon")]
    assert await session.get_items(2) == [output, assistant_message("noon")]
    assert len(await session.get_items(2_147_483_647)) == len(await session.get_items()) == 4
