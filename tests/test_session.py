"""DjangoSession's protocol behaviour, on whichever database the run uses."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta

import pytest
from agents.memory import Session, SessionSettings
from django.contrib.auth.models import AnonymousUser, User
from django.utils import timezone

from django_agent_sessions import DjangoSession
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.store.clock import UPDATED_AT_RESOLUTION
from tests.conftest import assistant_message, user_message

pytestmark = pytest.mark.django_db(transaction=True)


def numbered(n: int) -> list[dict[str, str]]:
    return [user_message(f"message {i}") for i in range(n)]


def texts(items: list) -> list[str]:
    return [item["content"] for item in items]


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


async def test_the_title_is_the_start_of_the_first_user_message_with_text(make_session):
    session = make_session()
    words = " ".join(f"word{i}" for i in range(40))
    await session.add_items(
        [
            assistant_message("not the user"),
            user_message(" \n\t "),
            {"role": "user", "content": [{"type": "input_text", "text": f"\n{words}"}]},
        ]
    )
    row = await AgentSession.objects.aget(session_id=session.session_id)
    assert row.title == words[:80]


async def test_item_count_and_title_follow_writes(make_session):
    session = make_session()
    await session.add_items([{"type": "reasoning", "id": "r", "summary": []}])
    await session.add_items([user_message("  What is\nthe weather?  "), assistant_message("Sun")])
    row = await AgentSession.objects.aget(session_id=session.session_id)
    assert (row.item_count, row.title) == (3, "What is the weather?")
    await session.add_items([user_message("second question")])
    row = await AgentSession.objects.aget(session_id=session.session_id)
    assert (row.item_count, row.title) == (4, "What is the weather?")


async def _age_updated_at(session_id: str, by: timedelta) -> datetime:
    old = timezone.now() - by
    await AgentSession.objects.filter(session_id=session_id).aupdate(updated_at=old)
    return old


async def _updated_at(session_id: str) -> datetime:
    return (await AgentSession.objects.aget(session_id=session_id)).updated_at


@pytest.mark.parametrize("operation", ["add", "pop", "clear"])
async def test_every_write_moves_an_older_updated_at_to_now(make_session, operation):
    session = make_session()
    await session.add_items(numbered(2))
    await _age_updated_at(session.session_id, timedelta(days=40))
    before = timezone.now()
    if operation == "add":
        await session.add_items(numbered(1))
    elif operation == "pop":
        await session.pop_item()
    else:
        await session.clear_session()
    assert before <= await _updated_at(session.session_id) <= timezone.now()


async def test_writes_within_the_resolution_leave_updated_at_alone(make_session):
    """The two indexes on updated_at are rewritten at most once per resolution."""
    session = make_session()
    await session.add_items(numbered(1))
    recent = await _age_updated_at(session.session_id, UPDATED_AT_RESOLUTION / 2)
    await session.add_items(numbered(1))
    await session.pop_item()
    assert await _updated_at(session.session_id) == recent
    await _age_updated_at(session.session_id, UPDATED_AT_RESOLUTION * 2)
    await session.pop_item()
    assert await _updated_at(session.session_id) > recent


async def test_each_owners_conversations_stay_exactly_in_write_order(make_session, make_user):
    """Within the resolution too: a write to a conversation that another of the same
    owner has overtaken moves it to the top at once."""
    alice = await asyncio.to_thread(make_user, "alice")
    first, second = make_session("c-first", owner=alice), make_session("c-second", owner=alice)
    for session in (first, second, first, second, first):
        await session.add_items(numbered(1))
        newest = AgentSession.objects.filter(owner=alice).order_by("-updated_at")
        assert [row.session_id async for row in newest][:1] == [session.session_id]


EXACT_VALUES = [
    "NUL \u0000 inside",
    "emoji 😀🧪👩🏽‍💻",
    "RTL שלום مرحبا",
    "'; DROP TABLE django_agent_sessions_sessionitem; --",
    'quotes " \\ and \\u0000 escaped text',
    "lone surrogate \ud800 end",
    "x" * 100_000,
]


@pytest.mark.parametrize("text", EXACT_VALUES, ids=range(len(EXACT_VALUES)))
async def test_strings_round_trip_exactly(make_session, text):
    session = make_session()
    item = {"role": "user", "content": text}
    await session.add_items([item])
    assert await session.get_items() == [item]
    assert await session.pop_item() == item


async def test_any_json_value_round_trips_with_key_order(make_session):
    session = make_session()
    item = {
        "z": 1,
        "a": [1.5, 1.0, -0.0, 10**30, True, False, None, {"nested": {"k": []}}],
        "m": {"b": 2, "a": 1},
        "type": "custom",
    }
    await session.add_items([item])
    (stored,) = await session.get_items()
    assert json.dumps(stored) == json.dumps(item)
    assert list(stored) == ["z", "a", "m", "type"]
    assert type(stored["a"][1]) is float


async def test_a_one_megabyte_item(make_session):
    session = make_session()
    item = {"type": "function_call_output", "call_id": "c1", "output": "é" * 500_000}
    await session.add_items([item])
    assert await session.get_items() == [item]


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


async def test_an_undecodable_row_does_not_use_up_a_limit_slot(make_session):
    session = make_session()
    await session.add_items(numbered(3))
    row = await AgentSession.objects.aget(session_id=session.session_id)
    await SessionItem.objects.acreate(session=row, payload="{not json")
    assert texts(await session.get_items(2)) == ["message 1", "message 2"]
    assert texts(await session.get_items(5)) == ["message 0", "message 1", "message 2"]


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


async def test_a_hand_corrupted_row_is_skipped_not_fatal(make_session, caplog):
    session = make_session()
    await session.add_items(numbered(3))
    middle = await SessionItem.objects.order_by("id").values_list("id", flat=True)[1:2].aget()
    await SessionItem.objects.filter(id=middle).aupdate(payload="{not json")
    assert texts(await session.get_items()) == ["message 0", "message 2"]
    assert "not valid JSON" in caplog.text
    assert (await session.pop_item())["content"] == "message 2"
    # The corrupt row is dropped on the way to the next real item.
    assert (await session.pop_item())["content"] == "message 0"
    assert await session.pop_item() is None
