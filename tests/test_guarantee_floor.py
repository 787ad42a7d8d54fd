"""The guarantee floor (``benchmarks/guarantee_floor.py``) does the work DjangoSession does.

Its figures say how fast any implementation keeping DjangoSession's guarantees can be;
they mean that only if it skips none of the work. So it must leave the database exactly
as DjangoSession leaves it, item by item, column by column, and answer as it answers.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
from django.db import connection

from benchmarks.guarantee_floor import FloorSession
from django_agent_sessions import DjangoSession
from django_agent_sessions.exceptions import ItemRejected
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.store import bridge

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "sqlite", reason="the floor measures SQLiteSession's database only"
    ),
]

TURNS: list[list[dict[str, Any]]] = [
    [{"role": "user", "content": "  What's   the weather\tin Lisbon?  "}],
    [
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": '{"q": 1}'},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Sunny, 24 °C.", "annotations": []}],
        },
    ],
    [{"role": "user", "content": "Thanks"}, {"role": "assistant", "content": "You're welcome"}],
]


@pytest.fixture
async def floor() -> AsyncIterator[FloorSession]:
    session = FloorSession("floor", connection.settings_dict["NAME"], threading.local())
    yield session
    await bridge.run(session.close)


async def _exercise(session: Any) -> list[Any]:
    answers: list[Any] = []
    for turn in TURNS:
        await session.add_items(turn)
        answers.append(await session.get_items(limit=2))
    answers.append(await session.pop_item())
    answers.append(await session.get_items())
    return answers


def _stored(session_id: str) -> tuple[tuple[Any, ...], list[tuple[Any, ...]]]:
    conversation = AgentSession.objects.get(session_id=session_id)
    items = SessionItem.objects.filter(session=conversation).order_by("id")
    return (
        (conversation.title, conversation.item_count, conversation.owner_id),
        list(items.values_list("payload", "item_type", "role", "call_id", "preview")),
    )


async def test_the_floor_stores_and_answers_exactly_what_django_session_does(
    floor: FloorSession,
) -> None:
    floor_answers = await _exercise(floor)
    django_answers = await _exercise(DjangoSession("django"))

    assert floor_answers == django_answers
    assert await bridge.run(_stored, "floor") == await bridge.run(_stored, "django")


async def test_the_floor_validates_before_writing(floor: FloorSession) -> None:
    await floor.add_items(TURNS[0])
    with pytest.raises(ItemRejected, match="item 1"):
        await floor.add_items([{"role": "user", "content": "kept out"}, {"x": float("nan")}])

    assert await floor.get_items() == TURNS[0]


async def test_the_floor_pops_exactly_once_to_empty(floor: FloorSession) -> None:
    await floor.add_items(TURNS[2])

    assert await floor.pop_item() == TURNS[2][1]
    assert await floor.pop_item() == TURNS[2][0]
    assert await floor.pop_item() is None
    assert (await bridge.run(_stored, "floor"))[0][1] == 0


async def test_without_columns_the_floor_stores_the_same_json_and_nothing_else(
    floor: FloorSession,
) -> None:
    floor.columns = False
    await _exercise(floor)
    await _exercise(DjangoSession("django"))

    (_, count, _), rows = await bridge.run(_stored, "floor")
    (_, django_count, _), django_rows = await bridge.run(_stored, "django")
    assert count == django_count
    assert [row[0] for row in rows] == [row[0] for row in django_rows]
    assert {row[1:] for row in rows} == {("", "", "", "")}
    with pytest.raises(ItemRejected, match="item 0"):
        await floor.add_items([{"x": float("inf")}])
