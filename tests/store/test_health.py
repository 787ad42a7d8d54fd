"""``store.health``: keeping long-lived connections usable without a ``SELECT 1`` per
operation.

Around a long-lived caller's function, connections past ``CONN_MAX_AGE`` are replaced; on
PostgreSQL a connection the server ended is closed before the next operation (the socket
says so, no query is sent), and elsewhere Django's own health check is asked for instead.
``tests/test_connection_recovery.py`` checks the same through DjangoSession and sockets.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection, connections

from django_agent_sessions.store import health

# The connection itself is closed and reopened: no test transaction may hold it.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def max_age(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The default connection, reopened with ``CONN_MAX_AGE`` set to the parameter."""
    saved = connection.settings_dict["CONN_MAX_AGE"]
    connection.settings_dict["CONN_MAX_AGE"] = request.param
    connection.close()
    connection.ensure_connection()
    try:
        yield request.param
    finally:
        connection.settings_dict["CONN_MAX_AGE"] = saved
        connection.close()


class Recorder:
    """An ``execute_wrapper`` that records every statement the connection runs."""

    def __init__(self) -> None:
        self.sql: list[str] = []

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self.sql.append(sql)
        return execute(sql, params, many, context)


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def end_from_the_server(pid: int) -> None:
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            # Waits until the backend has exited, so its goodbye is on our socket.
            cursor.execute("SELECT pg_terminate_backend(%s, 10000)", [pid])
    finally:
        other.close()


def test_a_wrapped_function_keeps_its_name_and_result() -> None:
    def operation(a: int, *, b: int) -> int:
        """Adds."""
        return a + b

    wrapped = health.with_fresh_connections(operation)
    assert wrapped(2, b=3) == 5
    assert (wrapped.__name__, wrapped.__doc__) == ("operation", "Adds.")


@pytest.mark.parametrize("max_age", [0], indirect=True)
def test_an_obsolete_connection_is_replaced_before_and_after(max_age: Any) -> None:
    seen: list[Any] = []

    def operation() -> None:
        seen.append(connection.connection)  # what the function finds
        connection.ensure_connection()
        seen.append(connection.connection)

    old = connection.connection
    health.with_fresh_connections(operation)()
    # CONN_MAX_AGE = 0: each connection is obsolete as soon as it is made, as after a
    # request. The old one was closed before the function, its own one after it.
    assert seen[0] is None
    assert seen[1] is not None
    assert seen[1] is not old
    assert connection.connection is None


@pytest.mark.parametrize("max_age", [None], indirect=True)
def test_a_persistent_healthy_connection_is_kept_and_costs_no_query(max_age: Any) -> None:
    kept = connection.connection
    recorder = Recorder()
    with connection.execute_wrapper(recorder):
        health.with_fresh_connections(lambda: None)()
        health.refresh_connections()
        health.replace_if_ended_by_server(connection)
    assert connection.connection is kept
    assert recorder.sql == []  # no SELECT 1: the socket poll (or nothing) stands in
    # On PostgreSQL the poll counts as Django's check; elsewhere Django's check is asked
    # for again (CONN_HEALTH_CHECKS), once per operation.
    assert connection.health_check_done is (connection.vendor == "postgresql")  # type: ignore[attr-defined]


@pytest.mark.parametrize("max_age", [None], indirect=True)
def test_a_connection_the_server_ended_is_closed_before_the_next_operation(
    max_age: Any,
) -> None:
    if connection.vendor != "postgresql":
        # No server to end a SQLite connection: the module leaves it to Django's check.
        connection.health_check_done = True  # type: ignore[attr-defined]
        health.replace_if_ended_by_server(connection)
        assert connection.health_check_done is False  # type: ignore[attr-defined]
        assert connection.connection is not None
        return
    pid = backend_pid()
    end_from_the_server(pid)
    health.replace_if_ended_by_server(connection)
    assert connection.connection is None  # closed, not left to fail the operation
    assert backend_pid() != pid  # the next query reconnects
