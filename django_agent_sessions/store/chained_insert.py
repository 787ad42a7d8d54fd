"""New rows, each pointing at the one before it, in one statement on PostgreSQL.

A conversation's first message creates the conversation and its run's record
(``store.first_messages``), and with runs as tasks the run's order too. As a transaction
that is four or five round trips (``BEGIN``, the ``INSERT``s, ``COMMIT``), each a wait
on the database thread that every chat's first message shares: at 50 simultaneous first
messages they were the largest part of that thread's work before the first tokens
(``benchmarks/README.md``, "SSE against the floor view"). PostgreSQL does it in one: a
data-modifying ``WITH`` inserts the first row, and the next row's foreign key is the id
it returns. One statement is atomic by itself.

The ``INSERT``s are Django's own (``SQLInsertCompiler``), with every field's
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

_ROW = "chained_row"  # the WITH queries' names start so; no table of the app does


def supported(using: str) -> bool:
    """Whether ``insert_pair`` works on ``using`` (PostgreSQL's data-modifying WITH)."""
    return connections[using].vendor == "postgresql"


def insert_pair(first: Model, second: Model, link: str, using: str) -> tuple[Any, Any]:
    """Insert ``first``, then ``second`` with its foreign key ``link`` set to the first's
    new id, in one statement; the two new primary keys, also set on the objects.

    Raises ``IntegrityError`` (with nothing written) when either row breaks a constraint.
    """
    first_id, second_id = insert_chain([first, second], [link], using)
    return first_id, second_id


def insert_chain(rows: list[Model], links: list[str], using: str) -> list[Any]:
    """Insert ``rows`` in order, each after the first with its foreign key ``links[n - 1]``
    set to the new id of the row before it, in one statement; the new primary keys in
    the order of ``rows``, also set on the objects (a run's order, whose key is its run,
    is a third row after its conversation and its run).

    Raises ``IntegrityError`` (with nothing written) when any row breaks a constraint.
    """
    assert len(rows) >= 2
    assert len(links) == len(rows) - 1
    connection = connections[using]
    queries: list[str] = []
    params: list[Any] = []
    id_of_previous = ""
    for number, (row, link) in enumerate(zip(rows, [None, *links], strict=True)):
        pk = row._meta.pk
        assert pk is not None
        if link is not None:
            setattr(row, _attname(row, link), RawSQL(id_of_previous, ()))
        sql, row_params = _insert(row, connection, [pk])
        queries.append(sql)
        params.extend(row_params)
        id_of_previous = f"(SELECT {connection.ops.quote_name(pk.column)} FROM {_ROW}_{number})"
    # The last INSERT returns its own key, then each earlier row's, read from its query.
    earlier = ", ".join(
        f"(SELECT {connection.ops.quote_name(row._meta.pk.column)} FROM {_ROW}_{number})"  # type: ignore[union-attr]
        for number, row in enumerate(rows[:-1])
    )
    named = ", ".join(f"{_ROW}_{number} AS ({sql})" for number, sql in enumerate(queries[:-1]))
    sql = f"WITH {named} {queries[-1]}" + (f", {earlier}" if earlier else "")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        last_id, *earlier_ids = cursor.fetchone()
    ids = [*earlier_ids, last_id]
    for number, (row, link) in enumerate(zip(rows, [None, *links], strict=True)):
        if link is not None:
            setattr(row, _attname(row, link), ids[number - 1])
        row.pk = ids[number]
        row._state.adding = False
        row._state.db = using
    return ids


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
