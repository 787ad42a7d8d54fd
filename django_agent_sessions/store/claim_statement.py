"""A run's start claimed by its task in one statement on PostgreSQL.

A task worker claims each run it is handed before it runs it (``store.orders.claim``).
As a transaction that is six round trips (the order's lookup, the conversation's lock,
the conditional claim, the lease, the read of the order with its run, conversation and
owner, ``COMMIT``), and a worker claims its runs one after another: at 50 simultaneous
first messages they were about half of what a task worker did between taking one task
and the next (``benchmarks/README.md``, "Runs as tasks benchmark"). PostgreSQL does the
same in one statement: each step is a data-modifying ``WITH`` query that reads the rows
the step before it returned, so the steps run in the same order, under the same locks,
and one statement is atomic by itself.

Under ``READ COMMITTED`` an ``UPDATE`` that meets a row a transaction committed after
the statement began (a Stop that spent the claim, an end that closed the run) checks
its ``WHERE`` again on the committed row, as each statement of the transaction did.
Only a start (execution 1) is claimed here: a resumption also reads its decisions.

``claim_waiting_starts`` claims, in one statement too, the starts no task has claimed
yet: a worker that takes one task claims the runs whose tasks wait behind it in the
queue (``store.orders.claim_waiting``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from django.contrib.auth import get_user_model
from django.db import connections
from django.db.models import JSONField

from django_agent_sessions.models import AgentRun, RunOrder
from django_agent_sessions.store import chained_insert, claim_statements


class ClaimedStart(NamedTuple):
    """The rows a claimed start needs, as ``store.orders`` reads them."""

    run_pk: int
    run_id: str
    history_item_id: int
    seq: int
    order: tuple[str, Any, str, Any, bool]  # origin, input, agent, context, detached
    session_pk: int
    session_id: str
    owner: Any  # a user, or None


# ``claim_start`` works where ``chained_insert`` does: PostgreSQL's data-modifying WITH.
supported = chained_insert.supported


def claim_start(
    run_id: str, *, worker: str, now: datetime, lease_until: datetime, using: str
) -> ClaimedStart | None:
    """Claim the start of run ``run_id`` for ``worker`` and renew its lease to
    ``lease_until``, in one statement; None if it is not ordered, taken or ended (a claim
    of a run that ended while queued is spent all the same, as in ``store.orders``)."""
    params = (run_id, worker, now, lease_until, AgentRun.Status.RUNNING)
    claimed = _claimed(claim_statements.claim_start, params, using)
    return claimed[0] if claimed else None


def claim_waiting_starts(
    limit: int, *, worker: str, now: datetime, lease_until: datetime, using: str
) -> list[ClaimedStart]:
    """Claim for ``worker`` up to ``limit`` starts that no task has claimed yet, oldest
    order first, in one statement that waits for no lock (a run whose conversation is
    locked is left to its own task); each claimed start's lease renewed."""
    running = AgentRun.Status.RUNNING
    params = (running, limit, worker, now, lease_until, running)
    return _claimed(claim_statements.claim_waiting_starts, params, using)


def _claimed(build: Any, params: tuple[Any, ...], using: str) -> list[ClaimedStart]:
    """The starts a statement ``build`` makes claims, read from its rows."""
    connection = connections[using]
    owner_fields = get_user_model()._meta.concrete_fields
    with connection.cursor() as cursor:
        cursor.execute(build(connection, [str(field.column) for field in owner_fields]), params)
        rows = cursor.fetchall()
    return [_claimed_start(row, connection, owner_fields) for row in rows]


def _claimed_start(row: tuple[Any, ...], connection: Any, owner_fields: Any) -> ClaimedStart:
    (run_pk, public_id, history_item_id, seq, origin, given, agent, context, detached) = row[:9]
    session_pk, session_id = row[9:11]
    return ClaimedStart(
        run_pk=run_pk,
        run_id=str(public_id),
        history_item_id=history_item_id,
        seq=seq,
        order=(
            origin,
            _json("input", given, connection),
            agent,
            _json("context", context, connection),
            detached,
        ),
        session_pk=session_pk,
        session_id=session_id,
        owner=_owner(connection, owner_fields, row[11:]),
    )


def _json(name: str, value: Any, connection: Any) -> Any:
    """A JSON column of the order, decoded as its field decodes it."""
    field = RunOrder._meta.get_field(name)
    assert isinstance(field, JSONField)
    return field.from_db_value(value, None, connection)  # type: ignore[arg-type]


def _owner(connection: Any, fields: Any, values: tuple[Any, ...]) -> Any:
    """The owner's row as a model instance, converted as the ORM converts it; None."""
    user_model = get_user_model()
    pk_at = [field.primary_key for field in fields].index(True)
    if values[pk_at] is None:
        return None
    converted = []
    for field, value in zip(fields, values, strict=True):
        column = field.get_col(user_model._meta.db_table)
        for convert in connection.ops.get_db_converters(column) + column.get_db_converters(
            connection
        ):
            value = convert(value, column, connection)
        converted.append(value)
    return user_model.from_db(connection.alias, [field.attname for field in fields], converted)
