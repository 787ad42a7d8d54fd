"""``RunOrder``: a run's order, with its defaults, how it reads, and its end with its run."""

from __future__ import annotations

import pytest

from django_agent_sessions.models import AgentRun, AgentSession, RunOrder
from django_agent_sessions.store import orders
from tests.conftest import user_message
from tests.store.helpers import start, write

pytestmark = pytest.mark.django_db


def ordered(session_id: str, **fields: object) -> RunOrder:
    """A run of a new conversation, placed for a task with ``fields`` on its order."""
    conversation = write(session_id, user_message("hi"))
    started = start(conversation)
    order: RunOrder = RunOrder.objects.create(run_id=started.pk, **fields)
    return order


def test_an_order_is_one_execution_ordered_and_none_claimed_yet(session_id: str) -> None:
    order = ordered(session_id, origin=RunOrder.Origin.CODE)
    order.refresh_from_db()
    assert (order.ordered, order.claimed, order.claimed_by, order.claimed_at) == (1, 0, "", None)
    assert (order.input, order.agent, order.context, order.detached) == ({}, "", None, False)
    assert order.cancel_requested is False
    assert order.ordered_at is not None
    assert order.pk == order.run.pk  # one order per run, keyed by it


def test_an_order_reads_as_its_origin_and_its_claims(session_id: str) -> None:
    order = ordered(session_id, origin=RunOrder.Origin.SCHEDULE, ordered=2, claimed=1)
    assert str(order) == "a schedule 1/2"
    assert str(RunOrder(origin=orders.TAB)) == "a tab 0/1"


def test_the_origins_are_the_stores_names() -> None:
    assert RunOrder.Origin.values == [orders.TAB, orders.CODE, orders.SCHEDULE]


def test_an_order_is_deleted_with_its_run(session_id: str) -> None:
    order = ordered(session_id, origin=RunOrder.Origin.TAB)
    AgentRun.objects.filter(pk=order.pk).delete()
    assert not RunOrder.objects.exists()
    assert AgentSession.objects.filter(session_id=session_id).exists()


def test_an_order_is_deleted_with_its_conversation(session_id: str) -> None:
    order = ordered(session_id, origin=RunOrder.Origin.TAB)
    ordered("another", origin=RunOrder.Origin.CODE)
    AgentSession.objects.filter(session_id=session_id).delete()
    assert list(RunOrder.objects.values_list("origin", flat=True)) == ["code"]
    assert not AgentRun.objects.filter(pk=order.pk).exists()
