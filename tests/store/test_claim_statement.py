"""``store.claim_statement``: a run's start claimed in one PostgreSQL statement, with the
rows a task needs, exactly as ``store.orders``' transaction claims it (its tests,
``tests/store/test_orders.py``, run on both paths: this statement on PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from django_agent_sessions.models import AgentRun, RunOrder
from django_agent_sessions.store import claim_statement, orders
from tests.conftest import user_message
from tests.store.helpers import start, user, write

POSTGRESQL = connection.vendor == "postgresql"
pytestmark = pytest.mark.django_db


def claim(run_id: str) -> claim_statement.ClaimedStart | None:
    now = timezone.now()
    return claim_statement.claim_start(
        run_id, worker="w", now=now, lease_until=now + timedelta(seconds=60), using="default"
    )


def test_it_is_offered_on_postgresql_only() -> None:
    """Where ``chained_insert`` is: the same data-modifying WITH."""
    assert claim_statement.supported("default") is POSTGRESQL


@pytest.mark.skipif(not POSTGRESQL, reason="a data-modifying WITH is PostgreSQL's")
def test_the_owner_comes_back_as_the_orm_loads_it(session_id: str) -> None:
    owner = user("ann")
    owner.last_login = timezone.now()
    owner.save()
    conversation = write(session_id, user_message("hi"), owner_id=owner.pk)
    order = orders.Order(orders.CODE, {"text": "hi", "n": [1, 2]}, context={"t": {"x": None}})
    started = start(conversation, order=order)
    claimed = claim(started.run_id)
    assert claimed is not None
    loaded = get_user_model().objects.get(pk=owner.pk)
    assert claimed.owner == loaded
    fields = [field.attname for field in type(owner)._meta.concrete_fields]
    assert {f: getattr(claimed.owner, f) for f in fields} == {f: getattr(loaded, f) for f in fields}
    assert claimed.owner._state.db == "default"
    assert not claimed.owner._state.adding
    assert claimed.order == ("code", {"text": "hi", "n": [1, 2]}, "", {"t": {"x": None}}, False)
    assert (claimed.session_id, claimed.seq) == (session_id, 0)


@pytest.mark.skipif(not POSTGRESQL, reason="a data-modifying WITH is PostgreSQL's")
def test_nothing_is_claimed_for_an_unknown_run_or_a_second_time(session_id: str) -> None:
    assert claim("00000000-0000-0000-0000-000000000000") is None
    started = start(write(session_id, user_message("hi")), order=orders.Order(orders.TAB, {}))
    assert claim(started.run_id) is not None
    assert claim(started.run_id) is None
    assert RunOrder.objects.get(run_id=started.pk).claimed == 1


@pytest.mark.skipif(not POSTGRESQL, reason="a data-modifying WITH is PostgreSQL's")
def test_a_run_ended_while_queued_spends_the_claim_and_keeps_its_lease(session_id: str) -> None:
    started = start(write(session_id, user_message("hi")), order=orders.Order(orders.TAB, {}))
    ended = AgentRun.objects.filter(pk=started.pk)
    ended.update(status="cancelled")
    lease = ended.get().lease_expires_at
    assert claim(started.run_id) is None
    assert RunOrder.objects.get(run_id=started.pk).claimed == 1
    assert ended.get().lease_expires_at == lease
