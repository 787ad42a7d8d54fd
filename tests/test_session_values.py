"""What DjangoSession stores comes back exactly: any string and any JSON value, key order
kept, large items too; and a row that does not decode is skipped, not fatal."""

from __future__ import annotations

import json

import pytest

from django_agent_sessions.models import AgentSession, SessionItem
from tests.session_helpers import numbered, texts

pytestmark = pytest.mark.django_db(transaction=True)


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


async def test_an_undecodable_row_does_not_use_up_a_limit_slot(make_session):
    session = make_session()
    await session.add_items(numbered(3))
    row = await AgentSession.objects.aget(session_id=session.session_id)
    await SessionItem.objects.acreate(session=row, payload="{not json")
    assert texts(await session.get_items(2)) == ["message 1", "message 2"]
    assert texts(await session.get_items(5)) == ["message 0", "message 1", "message 2"]


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
