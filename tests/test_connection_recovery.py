"""A long-lived sync thread recovers after its database connection breaks."""

from __future__ import annotations

import select
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection, connections

from django_agent_sessions.store import conversations
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
            # The timeout makes the server wait until the backend has exited, so its
            # socket is closed by the time the test goes on (PostgreSQL >= 14).
            cursor.execute("SELECT pg_terminate_backend(%s, 10000)", [pid])
    finally:
        connections.close_all()


async def test_the_next_operation_reconnects_after_a_server_side_disconnect(make_session):
    session = make_session()
    await session.add_items([user_message("before")])
    pid = await sync_to_async(backend_pid)()
    await sync_to_async(terminate, thread_sensitive=False)(pid)

    # Health checks are off in the test settings: the socket alone says the server
    # ended the connection, and the operation reconnects instead of failing.
    assert [item["content"] for item in await session.get_items()] == ["before"]
    await session.add_items([user_message("after")])
    assert [item["content"] for item in await session.get_items()] == ["before", "after"]
    assert await sync_to_async(backend_pid)() != pid


class UsabilityChecks:
    """Counts Django's ``is_usable()`` checks (its ``SELECT 1``) on one connection."""

    def __init__(self, checked: Any) -> None:
        self.calls = 0
        self._checked = checked
        checked.is_usable = self._is_usable

    def _is_usable(self) -> bool:
        self.calls += 1
        return bool(type(self._checked).is_usable(self._checked))

    def remove(self) -> None:
        del self._checked.is_usable


async def stop_counting(checks: UsabilityChecks) -> None:
    await sync_to_async(checks.remove)()
    # The sync thread's connection was opened with health_checks_on's settings (and may
    # be listening): later tests get a new one.
    await sync_to_async(connections.close_all)()


@pytest.fixture
def health_checks_on() -> Iterator[None]:
    """Persistent connections with ``CONN_HEALTH_CHECKS = True`` (the example project's
    settings), for connections opened from now on."""
    settings_dict = connections["default"].settings_dict
    saved = {key: settings_dict[key] for key in ("CONN_HEALTH_CHECKS", "CONN_MAX_AGE")}
    settings_dict.update(CONN_HEALTH_CHECKS=True, CONN_MAX_AGE=None)
    connections.close_all()
    try:
        yield
    finally:
        settings_dict.update(saved)
        connections.close_all()


async def test_a_healthy_connection_costs_no_select_1_per_operation(make_session, health_checks_on):
    await sync_to_async(connections.close_all)()  # the sync thread reconnects with them on
    session = make_session()
    await session.add_items([user_message("first")])
    checks = await sync_to_async(lambda: UsabilityChecks(connections["default"]))()
    try:
        for n in range(5):
            await session.add_items([user_message(f"m{n}")])
            await session.get_items(limit=2)
            await session.pop_item()
        assert checks.calls == 0

        pid = await sync_to_async(backend_pid)()
        await sync_to_async(terminate, thread_sensitive=False)(pid)
        assert [item["content"] for item in await session.get_items()] == ["first"]
        assert checks.calls == 1  # the socket showed the server's goodbye: checked once
    finally:
        await stop_counting(checks)


async def test_the_websocket_layer_reconnects_after_a_server_side_disconnect(
    make_session, health_checks_on
):
    await sync_to_async(connections.close_all)()
    session = make_session()
    await session.add_items([user_message("stored")])
    found = await conversations.afind_conversation(session.session_id, owner_id=None)
    assert found is not None
    checks = await sync_to_async(lambda: UsabilityChecks(connections["default"]))()
    try:
        pid = await sync_to_async(backend_pid)()
        for _ in range(3):
            again = await conversations.afind_conversation(session.session_id, owner_id=None)
            assert again == found
        assert checks.calls == 0  # with CONN_HEALTH_CHECKS on, Django would check each time
        assert await sync_to_async(backend_pid)() == pid  # one persistent connection

        await sync_to_async(terminate, thread_sensitive=False)(pid)
        assert await conversations.afind_conversation(session.session_id, owner_id=None) == found
        assert checks.calls == 1
    finally:
        await stop_counting(checks)


def listen() -> None:
    with connection.cursor() as cursor:
        cursor.execute("LISTEN agent_sessions_test")


def notify() -> None:
    try:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT pg_notify('agent_sessions_test', 'hello')")
    finally:
        connections.close_all()


def wait_until_readable() -> None:
    """Until the notification has reached this thread's socket, unread (as it would
    sit between two operations)."""
    poller = select.poll()
    poller.register(connections["default"].connection.fileno(), select.POLLIN)
    assert poller.poll(10_000), "the notification never reached the socket"


async def test_a_socket_with_something_else_to_read_is_checked_and_kept(
    make_session, health_checks_on
):
    # Not every byte on the socket is a goodbye: a notification (LISTEN/NOTIFY) makes it
    # readable too. Django's check decides, and a connection that passes it stays.
    await sync_to_async(connections.close_all)()
    session = make_session()
    await session.add_items([user_message("kept")])
    pid = await sync_to_async(backend_pid)()
    checks = await sync_to_async(lambda: UsabilityChecks(connections["default"]))()
    try:
        await sync_to_async(listen)()
        await sync_to_async(notify, thread_sensitive=False)()
        await sync_to_async(wait_until_readable)()
        assert [item["content"] for item in await session.get_items()] == ["kept"]
        assert checks.calls == 1
        assert await sync_to_async(backend_pid)() == pid  # the same connection
        await session.get_items()
        assert checks.calls == 1  # the check read the notification: quiet again
    finally:
        await stop_counting(checks)
