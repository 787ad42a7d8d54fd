"""Two new rows, the second pointing at the first, in one statement on PostgreSQL.

A conversation's first message creates the conversation and its run's record
(``store.first_messages``). As a transaction that is four round trips (``BEGIN``, two
``INSERT``s, ``COMMIT``), each a wait on the database thread that every chat's first
message shares: at 50 simultaneous first messages they were the largest part of that
thread's work before the first tokens (``benchmarks/README.md``, "SSE against the floor
view"). PostgreSQL does it in one: a data-modifying ``WITH`` inserts the first row, and
the second row's foreign key is the id it returns. One statement is atomic by itself.

Both ``INSERT``s are Django's own (``SQLInsertCompiler``), with every field's
``pre_save`` and default, so the rows are exactly what ``objects.create()`` writes;
only the ``WITH`` around them is written here. Like ``QuerySet.update()``, this sends
no ``pre_save``/``post_save`` signal.
"""

from __future__ import annotations

from typing import Any

from django.db import connections
from django.db.models import Field, Model
from django.db.models.expressions import RawSQL
from django.db.models.sql import InsertQuery

_FIRST = "first_row"  # the WITH query's name; no table of the app has it


def supported(using: str) -> bool:
    """Whether ``insert_pair`` works on ``using`` (PostgreSQL's data-modifying WITH)."""
    return connections[using].vendor == "postgresql"


def insert_pair(first: Model, second: Model, link: str, using: str) -> tuple[Any, Any]:
    """Insert ``first``, then ``second`` with its foreign key ``link`` set to the first's
    new id, in one statement; the two new primary keys, also set on the objects.

    Raises ``IntegrityError`` (with nothing written) when either row breaks a constraint.
    """
    connection = connections[using]
    first_pk = first._meta.pk
    assert first_pk is not None
    assert second._meta.pk is not None
    first_sql, first_params = _insert(first, connection, [first_pk])
    # The foreign key's value is the first row's id, read from the WITH query.
    id_of_first = f"(SELECT {connection.ops.quote_name(first_pk.column)} FROM {_FIRST})"
    link_column = _attname(second, link)
    setattr(second, link_column, RawSQL(id_of_first, ()))
    second_sql, second_params = _insert(second, connection, [second._meta.pk])
    sql = f"WITH {_FIRST} AS ({first_sql}) {second_sql}, {id_of_first}"
    with connection.cursor() as cursor:
        cursor.execute(sql, (*first_params, *second_params))
        second_id, first_id = cursor.fetchone()
    first.pk, second.pk = first_id, second_id
    setattr(second, link_column, first_id)
    first._state.adding = second._state.adding = False
    first._state.db = second._state.db = using
    return first_id, second_id


def _attname(obj: Model, name: str) -> str:
    field = obj._meta.get_field(name)
    assert isinstance(field, Field)  # a foreign key of obj's own
    return field.attname


def _insert(obj: Model, connection: Any, returning: list[Field[Any, Any]]) -> tuple[str, Any]:
    """The ``INSERT ... RETURNING`` that ``obj.save()`` would run for a new row."""
    meta = obj._meta
    fields = [
        field
        for field in meta.local_concrete_fields
        if field is not meta.auto_field and not getattr(field, "generated", False)
    ]
    query = InsertQuery(type(obj))
    query.insert_values(fields, [obj])
    compiler = query.get_compiler(connection=connection)
    compiler.returning_fields = returning
    [(sql, params)] = compiler.as_sql()
    return sql, params
