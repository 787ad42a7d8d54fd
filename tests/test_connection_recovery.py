"""A long-lived sync thread recovers after its database connection breaks."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError, connection

from tests.conftest import user_message

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        settings.TEST_DB != "postgres",
        reason="terminating a server-side backend is a PostgreSQL feature",
    ),
]


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def terminate(pid: int) -> None:
    from django.db import connections

    try:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    finally:
        connections.close_all()


async def test_the_next_operation_reconnects_after_a_server_side_disconnect(make_session):
    session = make_session()
    await session.add_items([user_message("before")])
    pid = await sync_to_async(backend_pid)()
    await sync_to_async(terminate, thread_sensitive=False)(pid)

    with pytest.raises(DatabaseError):
        await session.get_items()  # this query finds the connection broken
    await session.add_items([user_message("after")])
    assert [item["content"] for item in await session.get_items()] == ["before", "after"]
    assert await sync_to_async(backend_pid)() != pid
