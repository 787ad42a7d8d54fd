"""The SQL that claims runs' starts for a task worker (``store.claim_statement``).

PostgreSQL only: each step of a claim is a data-modifying ``WITH`` query reading the
rows of the step before it, so one statement takes the steps of the transaction that
``store.orders.claim`` runs elsewhere, in the same order and under the same locks. Only
table and column names quoted by the connection, from model ``_meta``, are interpolated.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.backends.base.base import BaseDatabaseWrapper

from django_agent_sessions.models import AgentRun, AgentSession, RunOrder
from django_agent_sessions.store.statements import table


def _tables(connection: BaseDatabaseWrapper) -> tuple[str, ...]:
    """The runs', orders', conversations' and users' tables."""
    return tuple(
        table(connection, model) for model in (AgentRun, RunOrder, AgentSession, get_user_model())
    )


def _owner(connection: BaseDatabaseWrapper, owner_columns: list[str]) -> tuple[str, str]:
    """The owner's selected columns (``u``) and its primary key's column."""
    quote = connection.ops.quote_name
    owner = ", ".join(f"u.{quote(column)}" for column in owner_columns)
    return owner, quote(get_user_model()._meta.pk.column)  # type: ignore[union-attr]


# What a claim returns of its run and order, from ``_claim_steps``' rows.
_CLAIMED = """leased.id, leased.run_id, leased.history_item_id, leased.event_seq,
            claimed.origin, claimed.input, claimed.agent, claimed.context, claimed.detached"""


def _claim_steps(runs: str, orders: str, targets: str) -> str:
    """The two steps every claim ends with, after its ``target`` rows (joined as
    ``targets``): claimed, the order's conditional claim (worker and time as
    parameters); leased, a running run's lease (its end and the running status)."""
    return f"""claimed AS (
            UPDATE {orders} o SET claimed = 1, claimed_by = %s, claimed_at = %s
            FROM {targets}
            WHERE o.run_id = t.run_pk AND o.claimed = 0 AND o.ordered >= 1
            RETURNING o.run_id, o.origin, o.input, o.agent, o.context, o.detached
        ), leased AS (
            UPDATE {runs} r SET lease_expires_at = %s
            FROM claimed c WHERE r.id = c.run_id AND r.status = %s
            RETURNING r.id, r.run_id, r.history_item_id, r.event_seq
        )"""


def claim_start(connection: BaseDatabaseWrapper, owner_columns: list[str]) -> str:
    """A run's start claimed in one statement: its run id, worker, time, lease and the
    running status as parameters."""
    runs, orders, conversations, users = _tables(connection)
    owner, owner_pk = _owner(connection, owner_columns)
    # target: the run and its order; locked: its conversation (``lock_many``'s no-op
    # UPDATE); then the claim and the lease (``_claim_steps``).
    return f"""
        WITH target AS (
            SELECT r.id AS run_pk, r.session_id AS session_pk
            FROM {runs} r JOIN {orders} o ON o.run_id = r.id
            WHERE r.run_id = %s
        ), locked AS (
            UPDATE {conversations} s SET item_count = s.item_count
            FROM target t WHERE s.id = t.session_pk
            RETURNING s.id, s.session_id, s.owner_id
        ), {_claim_steps(runs, orders, "target t JOIN locked l ON l.id = t.session_pk")}
        SELECT {_CLAIMED}, locked.id, locked.session_id, {owner}
        FROM leased JOIN claimed ON claimed.run_id = leased.id CROSS JOIN locked
        LEFT JOIN {users} u ON u.{owner_pk} = locked.owner_id
    """


def claim_waiting_starts(connection: BaseDatabaseWrapper, owner_columns: list[str]) -> str:
    """The starts no task has claimed yet, oldest order first, claimed in one statement:
    the running status, the limit, the worker, the time, the lease and the running
    status again as parameters.

    It never waits for a lock, so that it cannot deadlock with another worker doing
    the same: a conversation locked by anyone (a Stop, a claim, an end) is skipped, and
    that run is left to its own task. ``FOR NO KEY UPDATE`` is the lock the no-op
    ``UPDATE`` of ``claim_start`` takes."""
    runs, orders, conversations, users = _tables(connection)
    owner, owner_pk = _owner(connection, owner_columns)
    return f"""
        WITH target AS (
            SELECT o.run_id AS run_pk, s.id AS session_pk, s.session_id, s.owner_id,
                o.ordered_at
            FROM {orders} o
            JOIN {runs} r ON r.id = o.run_id
            JOIN {conversations} s ON s.id = r.session_id
            WHERE o.claimed = 0 AND o.ordered >= 1 AND r.status = %s
            ORDER BY o.ordered_at
            LIMIT %s
            FOR NO KEY UPDATE OF s SKIP LOCKED
        ), {_claim_steps(runs, orders, "target t")}
        SELECT {_CLAIMED}, t.session_pk, t.session_id, {owner}
        FROM leased JOIN claimed ON claimed.run_id = leased.id
        JOIN target t ON t.run_pk = leased.id
        LEFT JOIN {users} u ON u.{owner_pk} = t.owner_id
        ORDER BY t.ordered_at
    """
