"""Who may use a DjangoSession: a session id and an owner are validated, and a conversation
owned by one user is refused to every other user, while trusted code reads any."""

from __future__ import annotations

import asyncio

import pytest
from django.contrib.auth.models import AnonymousUser, User

from django_agent_sessions import DjangoSession
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentSession, SessionItem
from tests.conftest import user_message
from tests.session_helpers import numbered, texts

pytestmark = pytest.mark.django_db(transaction=True)


def test_session_id_is_validated():
    for bad in ["", "   ", "x" * 256, "nul\x00", "\udc00", 42, None, b"bytes"]:
        with pytest.raises(ValueError, match="session_id"):
            DjangoSession(bad)  # type: ignore[arg-type]
    assert DjangoSession("x" * 255).session_id == "x" * 255


def test_owner_must_be_a_saved_user():
    with pytest.raises(ValueError, match="anonymous"):
        DjangoSession("s", owner=AnonymousUser())
    with pytest.raises(ValueError, match="saved user"):
        DjangoSession("s", owner=User(username="unsaved"))


async def test_first_write_sets_the_owner(make_session, make_user):
    alice = await asyncio.to_thread(make_user, "alice")
    session = make_session(owner=alice)
    await session.add_items([user_message("hi")])
    row = await AgentSession.objects.aget(session_id=session.session_id)
    assert row.owner_id == alice.pk
    assert texts(await make_session(owner=alice).get_items()) == ["hi"]


async def test_another_users_session_is_refused_everywhere(make_session, make_user):
    alice = await asyncio.to_thread(make_user, "alice")
    mallory = await asyncio.to_thread(make_user, "mallory")
    await make_session(owner=alice).add_items(numbered(2))
    intruder = make_session(owner=mallory)
    for operation in (
        intruder.get_items(),
        intruder.get_items(0),
        intruder.add_items([user_message("mine now")]),
        intruder.pop_item(),
        intruder.clear_session(),
    ):
        with pytest.raises(SessionOwnershipError):
            await operation
    row = await AgentSession.objects.aget(session_id=intruder.session_id)
    assert (row.owner_id, row.item_count) == (alice.pk, 2)
    assert texts(await make_session().get_items()) == ["message 0", "message 1"]


async def test_an_unowned_session_cannot_be_claimed(make_session, make_user):
    await make_session().add_items([user_message("server wrote this")])
    alice = await asyncio.to_thread(make_user, "alice")
    with pytest.raises(SessionOwnershipError):
        await make_session(owner=alice).add_items([user_message("claim")])
    with pytest.raises(SessionOwnershipError):
        await make_session(owner=alice).get_items()
    # Cleared sessions keep their owner, so clearing does not free the id either.
    await make_session().clear_session()
    with pytest.raises(SessionOwnershipError):
        await make_session(owner=alice).add_items([user_message("claim")])
    assert await SessionItem.objects.acount() == 0


async def test_trusted_code_reads_any_session(make_session, make_user):
    alice = await asyncio.to_thread(make_user, "alice")
    await make_session(owner=alice).add_items([user_message("hi")])
    assert texts(await make_session().get_items()) == ["hi"]
