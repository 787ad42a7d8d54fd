"""The shortcuts DjangoSession takes, and the library internals each one relies on.

Each shortcut (the direct hop onto asgiref's sync thread, the SQLite transaction and
cursor, the JSON encoder) leans on something a Django, asgiref or CPython release may
change. The ``*_assumption`` tests fail loudly when that happens; the others check that
the shortcut keeps every guarantee of the general path and that the general path is still
taken wherever the shortcut's conditions do not hold.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import sqlite3
import threading
from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any

import django.db.utils
import pytest
from asgiref.sync import SyncToAsync, ThreadSensitiveContext, async_to_sync, sync_to_async
from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper
from django.test.utils import CaptureQueriesContext
from django.utils import timezone as django_timezone

from django_agent_sessions import bridge, serialization
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.store import compaction, transactions
from django_agent_sessions.store import items as storage
from django_agent_sessions.store.clock import UPDATED_AT_RESOLUTION, read_clock
from tests.conftest import user_message

SQLITE = connection.vendor == "sqlite"
only_sqlite = pytest.mark.skipif(not SQLITE, reason="the SQLite shortcut (PostgreSQL: below)")


# -- the direct hop ------------------------------------------------------------------------


def test_asgiref_executor_choice_assumption():
    # asgiref 3.x picks the thread of a thread-sensitive call from exactly these.
    assert bridge.direct_hop_supported(), "asgiref changed how SyncToAsync picks its thread"


async def test_direct_hop_runs_where_asgiref_would():
    assert bridge._direct_hop_possible()
    asgiref_thread = await sync_to_async(threading.get_ident)()
    assert await bridge.run(threading.get_ident) == asgiref_thread
    assert asgiref_thread != threading.get_ident()
    # The same thread (and so the same connection) as Django's own async ORM.
    assert (
        await bridge.run(threading.get_ident)
        == await sync_to_async(threading.get_ident, thread_sensitive=True)()
    )


async def test_direct_hop_carries_the_callers_context():
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    var.set("caller")
    assert await bridge.run(var.get) == "caller"


def test_under_a_sync_caller_the_hop_runs_on_the_callers_thread():
    async def inner() -> tuple[bool, int]:
        return bridge._direct_hop_possible(), await bridge.run(threading.get_ident)

    possible, thread = async_to_sync(inner)()
    assert not possible
    assert thread == threading.get_ident()


async def test_in_a_thread_sensitive_context_the_hop_uses_that_contexts_thread():
    async with ThreadSensitiveContext():
        assert not bridge._direct_hop_possible()
        context_thread = await sync_to_async(threading.get_ident)()
        assert await bridge.run(threading.get_ident) == context_thread
    assert context_thread != await sync_to_async(threading.get_ident)()


async def test_shipped_path_turns_the_direct_hop_off():
    with bridge.shipped_path():
        assert not bridge._direct_hop_possible()
        assert not await bridge.run(bridge.shortcuts_allowed)
        assert (
            await bridge.run(threading.get_ident)
            == SyncToAsync.single_thread_executor.submit(threading.get_ident).result()
        )
    assert await bridge.run(bridge.shortcuts_allowed)


async def test_a_remembered_task_still_honours_a_thread_sensitive_context():
    assert bridge._direct_hop_possible()  # the task is now remembered
    async with ThreadSensitiveContext():
        assert not bridge._direct_hop_possible()
        context_thread = await sync_to_async(threading.get_ident)()
        assert await bridge.run(threading.get_ident) == context_thread
    assert bridge._direct_hop_possible()


async def test_a_remembered_task_is_not_kept_alive_by_its_context():
    import gc
    import weakref

    async def hop() -> bool:
        return bridge._direct_hop_possible()

    gc.disable()  # freed by reference counting alone: a cycle through its context would stay
    try:
        task = asyncio.ensure_future(hop())
        assert await task
        finished = weakref.ref(task)
        del task
        await asyncio.sleep(0)  # the loop lets go of the finished task's last callback
        assert finished() is None
    finally:
        gc.enable()
    assert bridge._direct_hop_possible()  # this task still looks for itself


def test_a_task_under_a_sync_caller_is_never_remembered():
    # ThreadSensitiveContext clears AsyncToSync.executors.current inside it and restores
    # the sync caller's executor when it exits: the hop must see the restored value.
    async def inner() -> list[bool]:
        seen = [bridge._direct_hop_possible()]
        async with ThreadSensitiveContext():
            seen.append(bridge._direct_hop_possible())
        seen.append(bridge._direct_hop_possible())
        seen.append(await bridge.run(threading.get_ident) == caller)
        return seen

    caller = threading.get_ident()
    assert async_to_sync(inner)() == [False, False, False, True]


def test_asgiref_sets_the_sync_callers_executor_only_where_the_hop_expects():
    # The per-task memory in bridge._no_sync_caller relies on asgiref assigning
    # AsyncToSync.executors.current only in AsyncToSync.__call__ (the sync caller's
    # context) and in ThreadSensitiveContext, which restores it on exit.
    import inspect

    import asgiref.sync

    source = inspect.getsource(asgiref.sync)
    assigning = [line.strip() for line in source.splitlines() if "executors.current =" in line]
    assert sorted(assigning) == [
        "AsyncToSync.executors.current = None",
        "AsyncToSync.executors.current = self._old_executor",
        "self.executors.current = current_executor",
        "self.executors.current = old_executor",
    ], "asgiref changed where it sets AsyncToSync.executors.current"


# -- the SQLite transaction and cursor ------------------------------------------------------


def _scope(session_id: str, owner_id: Any = None) -> storage.Scope:
    return storage.Scope(session_id, owner_id, "default")


def _encoded(*texts: str) -> list[serialization.EncodedItem]:
    return serialization.encode_items(
        [user_message(t) for t in texts], max_bytes=None, max_depth=50
    )


class Statements:
    """An ``execute_wrapper`` that records every statement the connection runs."""

    def __init__(self) -> None:
        self.sql: list[str] = []

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self.sql.append(sql)
        return execute(sql, params, many, context)

    def verbs(self) -> list[str]:
        return [
            " ".join(s.split()[:2]) if s.startswith("BEGIN") else s.split()[0] for s in self.sql
        ]


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_django_sqlite_connection_assumption():
    # Django keeps a SQLite connection in autocommit with the driver's legacy
    # transaction control and isolation_level None, and starts transactions itself.
    assert transactions.sqlite_shortcut_supported(), "Django's SQLite connection internals changed"
    connection.ensure_connection()
    raw = connection.connection
    assert isinstance(raw, sqlite3.Connection)
    assert connection.get_autocommit()
    assert raw.isolation_level is None
    assert not raw.in_transaction
    assert getattr(raw, "autocommit", transactions._LEGACY) == transactions._LEGACY
    # _prepare_cursor wraps any DB-API cursor as Django wraps its own.
    wrapped = connection._prepare_cursor(raw.cursor())
    assert isinstance(wrapped, CursorWrapper)
    assert type(wrapped.cursor) is sqlite3.Cursor
    # BEGIN IMMEDIATE on it opens a transaction that the driver's commit() ends.
    wrapped.execute("BEGIN IMMEDIATE")
    assert raw.in_transaction
    raw.commit()
    assert not raw.in_transaction
    wrapped.close()
    # The general path's SQL (with %s) is what Django's own cursor rewrites.
    with connection.cursor() as cursor:
        assert cursor.cursor.convert_query("SELECT %s") == "SELECT ?"


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_every_statement_of_a_shortcut_reaches_execute_wrappers(session_id):
    storage.append_items(_scope(session_id), _encoded("first"), "")  # creates it
    seen = Statements()
    with connection.execute_wrapper(seen):
        storage.append_items(_scope(session_id), _encoded("a", "b"), "")
        assert [i["content"] for i in storage.read_items(_scope(session_id), None)] == [
            "first",
            "a",
            "b",
        ]
        assert storage.pop_newest(_scope(session_id))["content"] == "b"
        storage.clear(_scope(session_id))
    assert seen.verbs() == [
        "BEGIN IMMEDIATE",
        "UPDATE",
        "INSERT",
        "SELECT",
        "BEGIN IMMEDIATE",
        "UPDATE",
        "DELETE",
        "BEGIN IMMEDIATE",
        "UPDATE",
        "DELETE",
    ]
    # The driver's placeholders; clear() deletes through the shared delete_items_of().
    assert all("%s" not in sql for sql in seen.sql[:-1])
    assert not connection.connection.in_transaction
    assert connection.get_autocommit()
    assert not connection.in_atomic_block
    assert AgentSession.objects.get(session_id=session_id).item_count == 0


def test_django_cursor_wrapper_execute_assumption():
    # sqlite3's own cursor inside one wrap_database_errors block does what
    # CursorWrapper.execute does when no execute_wrapper is installed: it must be told
    # if Django's path does more.
    assert transactions._cursor_wrapper_is_djangos()
    assert set(CursorWrapper._execute.__code__.co_names) <= {
        "apps",
        "ready",
        "stored_app_configs",
        "warnings",
        "warn",
        "APPS_NOT_READY_WARNING_MSG",
        "RuntimeWarning",
        "db",
        "validate_no_broken_transaction",
        "wrap_database_errors",
        "cursor",
        "execute",
    }, "CursorWrapper._execute does something new"
    assert "execute_wrappers" in CursorWrapper._execute_with_wrappers.__code__.co_names


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_shortcut_cursor_skips_only_an_empty_wrapper_chain(session_id):
    storage.append_items(_scope(session_id), _encoded("first"), "")
    raw = connection.connection
    assert type(transactions.driver_cursor(connection, raw)) is sqlite3.Cursor
    with connection.execute_wrapper(Statements()):
        assert type(transactions.driver_cursor(connection, raw)) is CursorWrapper


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_the_shortcut_cursor_is_kept_for_the_next_operation_on_its_connection(session_id):
    storage.append_items(_scope(session_id), _encoded("first"), "")
    storage.append_items(_scope(session_id), _encoded("a"), "")
    kept = _kept_cursor()
    assert storage.read_items(_scope(session_id), 20)
    assert storage.pop_newest(_scope(session_id))["content"] == "a"
    assert _kept_cursor() is kept
    # A reopened connection gets a cursor of its own.
    connection.close()
    assert storage.read_items(_scope(session_id), 20)
    assert _kept_cursor() is not kept
    assert _kept_cursor().connection is connection.connection


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_failed_operation_closes_the_kept_cursor(session_id, make_user):
    owner = make_user("owner")
    storage.append_items(_scope(session_id, owner.pk), _encoded("first"), "")  # creates it
    storage.read_items(_scope(session_id, owner.pk), None)
    kept = _kept_cursor()
    with pytest.raises(SessionOwnershipError):
        storage.pop_newest(_scope(session_id, owner.pk + 1))
    assert getattr(connection, transactions._KEPT, None) is None
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        kept.execute("SELECT 1")
    assert [i["content"] for i in storage.read_items(_scope(session_id, owner.pk), None)] == [
        "first"
    ]


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_kept_cursor_holds_no_statement_in_progress(session_id):
    # A statement in progress keeps a read snapshot open, and then the WAL cannot be
    # checkpointed (it grows without bound on a busy server). The probe must see one.
    storage.append_items(_scope(session_id), _encoded("a", "b", "c"), "")
    reader = connection.connection.cursor()
    reader.execute(f"SELECT id FROM {SessionItem._meta.db_table}")
    reader.fetchone()
    assert _checkpoint_blocked()
    reader.close()
    assert not _checkpoint_blocked()
    operations = [
        lambda: storage.append_items(_scope(session_id), _encoded("d", "e"), ""),
        lambda: storage.read_items(_scope(session_id), 2),
        lambda: storage.read_items(_scope(session_id), None),
        lambda: storage.pop_newest(_scope(session_id)),
        lambda: storage.take_back_last_turn(_scope(session_id)),
        lambda: compaction.snapshot(_scope(session_id), 1),
        lambda: storage.clear(_scope(session_id)),
    ]
    for operation in operations:
        operation()
        assert type(_kept_cursor()) is sqlite3.Cursor
        assert not _checkpoint_blocked(), operation


def _kept_cursor() -> Any:
    return getattr(connection, transactions._KEPT)[1]


def _checkpoint_blocked() -> bool:
    other = sqlite3.connect(connection.settings_dict["NAME"], timeout=0)
    try:
        # Another connection's write first, so that there is something to checkpoint.
        other.execute("PRAGMA user_version = user_version")
        other.execute(f"UPDATE {AgentSession._meta.db_table} SET title = title")
        other.commit()
        busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return bool(busy)
    finally:
        other.close()


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_patched_cursor_wrapper_sees_every_shortcut_statement(session_id, monkeypatch):
    # How APM agents (Sentry, New Relic, Datadog) watch queries: they replace
    # CursorWrapper's methods. The shortcut must then go through them.
    seen: list[str] = []
    django_execute = CursorWrapper.execute

    def watched(self: CursorWrapper, sql: str, params: Any = None) -> Any:
        seen.append(sql.split()[0])
        return django_execute(self, sql, params)

    storage.append_items(_scope(session_id), _encoded("first"), "")
    monkeypatch.setattr(CursorWrapper, "execute", watched)
    assert not transactions._cursor_wrapper_is_djangos()
    storage.append_items(_scope(session_id), _encoded("a"), "")
    assert storage.pop_newest(_scope(session_id))["content"] == "a"
    assert len(storage.read_items(_scope(session_id), 20)) == 1
    assert seen == ["BEGIN", "UPDATE", "INSERT", "BEGIN", "UPDATE", "DELETE", "SELECT"]
    monkeypatch.undo()
    assert transactions._cursor_wrapper_is_djangos()


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_shortcut_statement_error_is_translated_and_rolled_back(session_id, monkeypatch):
    storage.append_items(_scope(session_id), _encoded("first"), "")
    with pytest.raises(django.db.utils.OperationalError):
        transactions.select(connection, lambda sql: ("SELECT * FROM no_such_table", []))
    assert getattr(connection, transactions._KEPT, None) is None  # a failed read's cursor goes
    monkeypatch.setattr(
        transactions.Statements, "insert", lambda self, rows: "INSERT INTO no_such_table VALUES (1)"
    )
    with pytest.raises(django.db.utils.OperationalError):
        storage.append_items(_scope(session_id), _encoded("lost"), "")
    assert not connection.connection.in_transaction
    assert AgentSession.objects.get(session_id=session_id).item_count == 1


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_failing_commit_is_translated_and_rolled_back(session_id):
    # Django's SQLite foreign keys are deferred: an item of no conversation fails at COMMIT.
    storage.append_items(_scope(session_id), _encoded("first"), "")
    columns = "session_id, payload, item_type, role, call_id, preview, created_at"
    with (
        pytest.raises(django.db.utils.IntegrityError, match="FOREIGN KEY"),
        transactions.writing(connection, "default") as (cursor, _),
    ):
        cursor.execute(
            f"INSERT INTO {SessionItem._meta.db_table} ({columns}) "
            "VALUES (0, '{}', '', '', '', '', '2000-01-01 00:00:00')"
        )
    assert not connection.connection.in_transaction
    assert getattr(connection, transactions._KEPT, None) is None
    assert [i["content"] for i in storage.read_items(_scope(session_id), None)] == ["first"]


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_connection_closed_by_a_failed_rollback_does_not_hide_the_error(session_id, monkeypatch):
    # _roll_back closes a connection that cannot roll back (as atomic() does); closing
    # the operation's cursor afterwards must not replace the error in flight.
    storage.append_items(_scope(session_id), _encoded("first"), "")

    def rollback_fails(connection: Any, raw: sqlite3.Connection) -> None:
        raw.rollback()
        connection.close()

    monkeypatch.setattr(transactions, "_roll_back", rollback_fails)
    with pytest.raises(LookupError, match="in flight"):
        _write_then_fail()
    with pytest.raises(LookupError, match="in flight"):
        _read_on_a_closed_connection_then_fail()


def _write_then_fail() -> None:
    with transactions.writing(connection, "default") as (cursor, sql):
        cursor.execute(sql.touch, ["2000-01-01 00:00:00", 0])
        raise LookupError("in flight")


def _read_on_a_closed_connection_then_fail() -> None:
    def close_then_fail(sql: Any) -> tuple[str, list[Any]]:
        connection.close()
        raise LookupError("in flight")

    transactions.select(connection, close_then_fail)


@pytest.mark.parametrize(
    "overrides",
    [{}, {"USE_TZ": False}, {"TIME_ZONE": "America/Sao_Paulo"}],
    ids=["utc", "naive", "local-zone"],
)
def test_an_operations_clock_is_what_django_would_store(overrides, settings, monkeypatch):
    for name, value in overrides.items():
        setattr(settings, name, value)
    if "TIME_ZONE" in overrides:
        # The database's own time zone (DATABASES TIME_ZONE) decides the stored text.
        monkeypatch.setitem(connection.settings_dict, "TIME_ZONE", overrides["TIME_ZONE"])
        connection.__dict__.pop("timezone", None)
        connection.__dict__.pop("timezone_name", None)
    try:
        clock = read_clock(connection)
        adapt = connection.ops.adapt_datetimefield_value
        assert clock.stamp == adapt(clock.now)
        assert clock.threshold == adapt(clock.now - UPDATED_AT_RESOLUTION)
    finally:
        connection.__dict__.pop("timezone", None)
        connection.__dict__.pop("timezone_name", None)


@pytest.mark.parametrize(
    "moments",
    [
        # Whole seconds and microseconds, a year's end crossed, and the clock set back.
        ["2026-12-31T23:59:59", "2026-12-31T23:59:59.000007", "2027-01-01T00:00:00.999999"],
        ["2027-01-01T00:00:00", "2027-01-01T00:00:00.5", "2026-12-31T23:59:59.25"],
        # An aware time in another zone (a mocked now()), then UTC in the same second.
        ["2027-07-01T14:00:00.000005+02:00", "2027-07-01T12:00:00.000005"],
    ],
)
def test_the_utc_clock_formats_each_second_once_and_as_django_does(moments, monkeypatch):
    adapt = connection.ops.adapt_datetimefield_value
    assert not UPDATED_AT_RESOLUTION.microseconds  # what the per-second texts rely on
    for text in moments:
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt_timezone.utc)
        monkeypatch.setattr(django_timezone, "now", lambda moment=moment: moment)
        clock = read_clock(connection)
        assert (clock.now, clock.stamp) == (moment, adapt(moment))
        assert clock.threshold == adapt(moment - UPDATED_AT_RESOLUTION)


@pytest.mark.django_db(transaction=True)
def test_with_query_logging_the_general_path_runs_and_is_logged(session_id):
    storage.append_items(_scope(session_id), _encoded("first"), "")
    with CaptureQueriesContext(connection) as queries:
        storage.append_items(_scope(session_id), _encoded("a"), "")
        storage.read_items(_scope(session_id), 20)
        storage.pop_newest(_scope(session_id))
    logged = [q["sql"] for q in queries.captured_queries]
    assert any(sql.startswith("UPDATE") for sql in logged)
    assert any(sql.startswith("INSERT") for sql in logged)
    assert any(sql.startswith("SELECT") for sql in logged)
    assert any(sql.startswith("DELETE") for sql in logged)
    assert all("?" not in sql for sql in logged)  # Django's own cursor and SQL


@pytest.mark.django_db(transaction=True)
def test_inside_a_callers_transaction_a_write_joins_it(session_id):
    storage.append_items(_scope(session_id), _encoded("kept"), "")

    class Undo(Exception):
        pass

    def undone_in_a_transaction() -> None:
        with transaction.atomic():
            storage.append_items(_scope(session_id), _encoded("undone"), "")
            assert storage.pop_newest(_scope(session_id))["content"] == "undone"
            storage.append_items(_scope(session_id), _encoded("undone too"), "")
            raise Undo

    with pytest.raises(Undo):
        undone_in_a_transaction()
    assert [i["content"] for i in storage.read_items(_scope(session_id), None)] == ["kept"]
    assert AgentSession.objects.get(session_id=session_id).item_count == 1


@only_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_failing_shortcut_write_rolls_back_everything(session_id, monkeypatch, make_user):
    storage.append_items(_scope(session_id), _encoded("kept"), "")

    def broken(*args: Any) -> None:
        raise RuntimeError("the insert failed")

    monkeypatch.setattr(storage, "_insert_items", broken)
    with pytest.raises(RuntimeError, match="the insert failed"):
        storage.append_items(_scope(session_id), _encoded("lost"), "")
    monkeypatch.undo()
    assert not connection.connection.in_transaction
    assert AgentSession.objects.get(session_id=session_id).item_count == 1
    # An ownership refusal: nothing written, no transaction left open.
    owner = make_user("someone")
    with pytest.raises(SessionOwnershipError):
        storage.append_items(_scope(session_id, owner.pk), _encoded("refused"), "")
    with pytest.raises(SessionOwnershipError):
        storage.pop_newest(_scope(session_id, owner.pk))
    assert not connection.connection.in_transaction
    assert SessionItem.objects.filter(session__session_id=session_id).count() == 1
    assert AgentSession.objects.get(session_id=session_id).item_count == 1


@pytest.mark.django_db(transaction=True)
def test_the_first_write_creates_the_conversation(session_id, make_user):
    owner = make_user("first")
    storage.append_items(_scope(session_id, owner.pk), _encoded("hello"), "Hello")
    row = AgentSession.objects.get(session_id=session_id)
    assert (row.owner_id, row.title, row.item_count) == (owner.pk, "Hello", 1)
    if SQLITE:
        assert not connection.connection.in_transaction


@pytest.mark.django_db(transaction=True)
def test_shipped_path_and_shortcut_store_the_same(session_id):
    with bridge.shipped_path():
        storage.append_items(_scope(session_id), _encoded("a", "b"), "")
    storage.append_items(_scope(session_id), _encoded("c"), "")
    with bridge.shipped_path():
        assert storage.pop_newest(_scope(session_id))["content"] == "c"
        shipped = storage.read_items(_scope(session_id), 5)
    assert storage.read_items(_scope(session_id), 5) == shipped
    assert [i["content"] for i in shipped] == ["a", "b"]


@pytest.mark.skipif(SQLITE, reason="PostgreSQL only")
@pytest.mark.django_db(transaction=True)
def test_postgresql_never_takes_the_sqlite_shortcut(session_id):
    connection.ensure_connection()
    assert transactions.driver(connection) is None
    seen = Statements()
    with connection.execute_wrapper(seen):
        storage.append_items(_scope(session_id), _encoded("a"), "")
    assert "BEGIN IMMEDIATE" not in seen.verbs()
    assert all("?" not in sql for sql in seen.sql)


async def test_shortcuts_keep_the_guarantees_under_concurrency_in_one_process(
    transactional_db, session_id
):
    # Several event loops' worth of writers on one conversation, all on the shortcut.
    from django_agent_sessions import DjangoSession

    session = DjangoSession(session_id)
    await session.add_items([user_message(f"m{i}") for i in range(40)])
    popped = await asyncio.gather(*(session.pop_item() for _ in range(45)))
    texts = [p["content"] for p in popped if p is not None]
    assert sorted(texts) == sorted(f"m{i}" for i in range(40))
    assert popped.count(None) == 5


# -- the encoder ---------------------------------------------------------------------------


def test_cpython_json_encoder_assumption():
    assert serialization._FAST_ENCODE is not None, "json.encoder.c_make_encoder changed"


@pytest.mark.parametrize(
    "item",
    [
        {"role": "user", "content": "plain"},
        {"content": 'é 🎉 \u0000 \u2028 " \\ \t عربى', "n": [1, -1, 0, 10**30]},
        {"f": [1.0, -0.0, 1e300, 2.5e-308, 0.1], "b": [True, False, None]},
        {"nested": {"a": [{"b": [[], {}]}]}, "": ""},
        {"keys": {"z": 1, "a": 2, "é": 3}},
    ],
)
def test_fast_encoder_output_is_identical(item):
    assert serialization.dumps(item) == json.dumps(
        item, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )


def test_fast_encoder_refuses_nan():
    assert serialization._FAST_ENCODE is not None
    with pytest.raises(ValueError, match="Out of range float"):
        serialization._FAST_ENCODE({"x": float("nan")})


@pytest.mark.parametrize(
    "payload",
    [
        '{"a":1}',
        ' {"a":1}',
        '{"a":1} ',
        '{"a":1}\n',
        '{"a":1}{"b":2}',
        '{"a":1',
        "",
        "nul",
        "\ufeff{}",
        "[1,2.50,-0,1e400]",
        '"\\ud800"',
        '{"a":NaN}',
        "3",
        "null",
    ],
)
def test_fast_decoding_decides_as_json_loads(payload):
    try:
        expected = [json.loads(payload)]
    except ValueError:
        expected = []
    assert serialization.decode_payloads([payload]) == expected
