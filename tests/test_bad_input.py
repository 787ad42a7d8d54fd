"""Items that cannot be stored exactly are refused whole, with errors that name them."""

from __future__ import annotations

import pytest
from django.test import override_settings

from django_agent_sessions.exceptions import ItemRejected
from django_agent_sessions.models import AgentSession, SessionItem
from tests.conftest import user_message

pytestmark = pytest.mark.django_db(transaction=True)


def nested(depth: int) -> dict:
    value: dict = {"leaf": True}
    for _ in range(depth - 1):
        value = {"n": value}
    return value


class Opaque:
    pass


BAD_ITEMS = [
    pytest.param("just text", TypeError, r"item 1: an item must be a dict, not str", id="str"),
    pytest.param(None, TypeError, r"item 1: an item must be a dict, not NoneType", id="none"),
    pytest.param({"x": Opaque()}, TypeError, r"item 1\['x'\]: Opaque is not JSON", id="object"),
    pytest.param({"x": {1, 2}}, TypeError, r"set is not JSON serializable", id="set"),
    pytest.param({"x": b"raw"}, TypeError, r"bytes is not JSON serializable", id="bytes"),
    pytest.param({"x": float("nan")}, ValueError, r"item 1\['x'\]: nan is not a valid", id="nan"),
    pytest.param({"x": [float("inf")]}, ValueError, r"\['x'\]\[0\]: inf is not", id="inf"),
    pytest.param({1: "int key"}, TypeError, r"key 1 is int, JSON keys must be str", id="key"),
    pytest.param(
        nested(101), ValueError, r"nesting deeper than .*MAX_ITEM_DEPTH.* \(100\)", id="depth"
    ),
    pytest.param(
        {"content": "x" * (4 * 1024 * 1024)},
        ValueError,
        r"item 1: \d+ bytes of JSON exceeds .*MAX_ITEM_BYTES.* \(4194304\)",
        id="size",
    ),
]


@pytest.mark.parametrize(("bad", "error", "message"), BAD_ITEMS)
async def test_a_bad_item_rejects_the_whole_batch(make_session, bad, error, message):
    session = make_session()
    await session.add_items([user_message("kept")])
    with pytest.raises(error, match=message):
        await session.add_items([user_message("first of batch"), bad, user_message("last")])
    assert [i["content"] for i in await session.get_items()] == ["kept"]
    row = await AgentSession.objects.aget(session_id=session.session_id)
    assert row.item_count == 1


async def test_a_bad_first_batch_creates_no_conversation(make_session):
    with pytest.raises(ItemRejected, match="not a valid JSON number"):
        await make_session().add_items([{"x": float("-inf")}])
    assert await AgentSession.objects.acount() == 0
    assert await SessionItem.objects.acount() == 0


async def test_add_items_needs_a_list(make_session):
    with pytest.raises(TypeError, match="takes a list of items, not dict"):
        await make_session().add_items(user_message("not in a list"))  # type: ignore[arg-type]


async def test_limits_come_from_settings(make_session):
    session = make_session()
    with override_settings(AGENT_SESSIONS={"MAX_ITEM_BYTES": 100, "MAX_ITEM_DEPTH": 3}):
        with pytest.raises(ValueError, match=r"exceeds .*\(100\)"):
            await session.add_items([user_message("y" * 200)])
        with pytest.raises(ValueError, match=r"deeper than .*\(3\)"):
            await session.add_items([nested(4)])
        await session.add_items([nested(3), user_message("y" * 50)])
    with override_settings(AGENT_SESSIONS={"MAX_ITEM_BYTES": None}):
        await session.add_items([user_message("z" * (5 * 1024 * 1024))])
    assert len(await session.get_items()) == 3


async def test_a_deep_hostile_item_is_refused_without_recursion(make_session):
    with pytest.raises(ValueError, match="nesting deeper"):
        await make_session().add_items([nested(100_000)])
