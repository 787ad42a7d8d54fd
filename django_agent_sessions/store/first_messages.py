"""A conversation's first message: the conversation and its run recorded in one hop.

Every first message of a new chat creates its conversation and then records its run.
Apart, that is two hops and two transactions, and the run's start locks the
conversation, looks for runs whose worker died and for the newest item: work for a
conversation that a moment ago did not exist. Together, in one transaction, the
conversation's row is new and not yet visible to anyone else: it has no runs and no
items, so the run is recorded at once (measured on the streaming benchmark: the first
message's CPU before its first token, see ``benchmarks/README.md``).
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.store import chained_insert, conversations, orders, runs
from django_agent_sessions.store.hops import hop
from django_agent_sessions.temporary.settings import forced_for


@hop
def open_and_start(
    session_id: str,
    *,
    owner_id: Any,
    agent_name: str,
    lease_seconds: float,
    client_id: str = "",
    order: orders.Order | None = None,
    temporary: bool = False,
    user: Any = None,
) -> tuple[conversations.OpenedConversation, runs.StartedRun | None]:
    """The conversation ``session_id`` (created for ``owner_id`` if it does not exist)
    and its new run, or None if it existed and has a run already.

    For a visitor that found no conversation: one transaction of two INSERTs. One that
    exists (another tab or worker created it since the visitor looked) gets the usual
    ``runs.start``, or ``SessionOwnershipError`` like ``conversations.open_conversation``
    when it is someone else's, with nothing written. ``order``: the run's, for a task.
    ``temporary``: a new conversation is a temporary chat (as it is when
    ``FORCE_TEMPORARY`` says so for ``user``, asked here, on the database's thread: a
    rule may look at the user's groups).
    """
    now, using = timezone.now(), runs.database()
    temporary = temporary or forced_for(user)
    try:
        # The visitor found no conversation a moment ago: create it (without looking
        # again), and its run; nothing else can see the new row before the commit.
        run = runs.new_record(now, agent_name, lease_seconds, client_id)
        conversation = AgentSession(session_id=session_id, owner_id=owner_id, temporary=temporary)
        conversation_pk, run = _create_both(conversation, run, using, order)
        opened = conversations.OpenedConversation(conversation_pk, session_id, True, temporary)
        return opened, runs.StartedRun(run.pk, str(run.run_id), run.history_item_id)
    except IntegrityError:
        pass  # created meanwhile, by another tab or worker: the conversation's usual start
    opened = conversations.open_conversation(session_id, owner_id=owner_id)
    started = runs.start.sync(
        opened.pk,
        agent_name=agent_name,
        lease_seconds=lease_seconds,
        client_id=client_id,
        order=order,
    )
    return opened, started


def _create_both(
    conversation: AgentSession, run: AgentRun, using: str, order: orders.Order | None
) -> tuple[int, AgentRun]:
    """The conversation and ``run`` (its first run), both new; ``IntegrityError`` with
    nothing written if the id is taken.

    One statement on PostgreSQL outside a transaction (``store.chained_insert``: one
    round trip instead of four, or five with the order); else a transaction (a
    savepoint inside the caller's).
    """
    connection = transaction.get_connection(using)
    if chained_insert.supported(using) and not connection.in_atomic_block:
        rows = [conversation, run] if order is None else [conversation, run, order.row()]
        chained_insert.insert_chain(rows, ["session", "run"][: len(rows) - 1], using)
        return conversation.pk, run
    with transaction.atomic(using=using):
        conversation.save(using=using, force_insert=True)
        run.session_id = conversation.pk
        run.save(using=using, force_insert=True)
        if order is not None:
            order.write(run.pk, using)
    return conversation.pk, run
