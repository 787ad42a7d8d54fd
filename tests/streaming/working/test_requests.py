"""``working.requests``: the run request a task rebuilds from a claimed order, where a
tab's worker builds it from its visitor: the scope the agent factory and ``RUN_CONTEXT``
get, the agent the order names, its context, its session and its message."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser

from django_agent_sessions import AgentRunContext, DjangoSession
from django_agent_sessions.store import approvals, orders
from django_agent_sessions.streaming.running.empty_history import EmptyHistorySession
from django_agent_sessions.streaming.working.requests import SCOPE_TYPE, request_of
from tests import order_agent

pytestmark = pytest.mark.django_db(transaction=True)

MESSAGE = {
    "text": "Look at this",
    "parts": [{"type": "input_image", "image_url": "data:image/png;base64,AAAA"}],
    "files": [{"id": 7, "name": "a.png", "content_type": "image/png", "size": 3}],
    "client_id": "tab-1",
}
RESUME = approvals.Resume(
    run_pk=1,
    run_id="r-1",
    agent_name="Counter",
    state="STATE",
    seq=4,
    history_item_id=0,
    decisions={"c1": (True, "")},
)


def tagged(default: AgentRunContext) -> dict[str, Any]:
    """A ``RUN_CONTEXT``: the project's tools get this instead of the default."""
    return {"tagged": default}


def claimed(
    order: orders.Order,
    *,
    owner: Any = None,
    history_item_id: int = 0,
    resume: approvals.Resume | None = None,
) -> orders.Claimed:
    return orders.Claimed(
        execution=1 if resume is None else 2,
        run_pk=1,
        run_id="r-1",
        session_pk=11,
        session_id="conv-task",
        owner=owner,
        history_item_id=history_item_id,
        seq=0,
        order=order,
        resume=resume,
    )


@pytest.fixture(autouse=True)
def _counting(settings: Any) -> None:
    settings.AGENT_SESSIONS = {"AGENT": order_agent.GATED, "RUNS": "tasks"}
    order_agent.reset()


async def test_the_factory_gets_a_task_scope_with_the_owner(django_user_model: Any) -> None:
    owner = await django_user_model.objects.acreate(username="alice")
    order = orders.Order(orders.SCHEDULE, MESSAGE, agent=order_agent.PATH)
    request = await request_of(claimed(order, owner=owner))
    scopes = order_agent.SCOPES
    assert scopes == [
        {"type": SCOPE_TYPE, "user": owner, "session_id": "conv-task", "origin": "schedule"}
    ]
    assert SCOPE_TYPE == "agent_sessions.task"
    assert request.agent.name == "Counter"  # the order's agent, not the setting's
    assert (request.user, request.session.owner_id) == (owner, owner.pk)
    context = request.context
    assert isinstance(context, AgentRunContext)
    assert (context.user, context.session_id, context.session) == (
        owner,
        "conv-task",
        request.session,
    )
    assert context.scope == order_agent.SCOPES[0]


async def test_a_conversation_without_an_owner_runs_for_an_anonymous_user() -> None:
    request = await request_of(claimed(orders.Order(orders.CODE, MESSAGE)))
    assert isinstance(request.user, AnonymousUser)
    assert request.session.owner_id is None
    assert isinstance(request.context, AgentRunContext)
    assert request.context.scope["user"] is request.user


async def test_an_order_without_an_agent_runs_the_setting() -> None:
    request = await request_of(claimed(orders.Order(orders.TAB, MESSAGE)))
    assert request.agent.name == "Gated"
    assert order_agent.AGENTS_MADE == {"conv-task": 1}


async def test_the_order_context_is_given_as_it_is() -> None:
    context = {"tenant": 7, "flags": ["a", "b"]}
    order = orders.Order(orders.CODE, MESSAGE, context=context)
    request = await request_of(claimed(order))
    assert request.context is context


async def test_the_default_context_goes_through_run_context(settings: Any) -> None:
    settings.AGENT_SESSIONS = {
        **settings.AGENT_SESSIONS,
        "RUN_CONTEXT": "tests.streaming.working.test_requests.tagged",
    }
    request = await request_of(claimed(orders.Order(orders.TAB, MESSAGE)))
    default = request.context["tagged"]
    assert isinstance(default, AgentRunContext)
    assert (default.session_id, default.scope["origin"]) == ("conv-task", "tab")
    # An order's own context is the project's already: RUN_CONTEXT is not applied.
    order = orders.Order(orders.CODE, MESSAGE, context={"mine": True})
    assert (await request_of(claimed(order))).context == {"mine": True}


async def test_only_a_start_with_no_history_reads_it_as_empty() -> None:
    order = orders.Order(orders.TAB, MESSAGE)
    first = await request_of(claimed(order, history_item_id=0))
    assert type(first.session) is EmptyHistorySession
    later = await request_of(claimed(order, history_item_id=5))
    assert type(later.session) is DjangoSession
    resumed = await request_of(claimed(order, history_item_id=0, resume=RESUME))
    assert type(resumed.session) is DjangoSession


async def test_the_message_and_detached_come_from_the_order() -> None:
    order = orders.Order(orders.CODE, MESSAGE, detached=True)
    request = await request_of(claimed(order))
    assert (request.text, request.client_id, request.detached) == ("Look at this", "tab-1", True)
    assert request.parts == tuple(MESSAGE["parts"])
    assert request.files == tuple(MESSAGE["files"])
    assert (request.conversation_pk, request.session_id) == (11, "conv-task")
    # A message with files stores them as files (as a tab's worker does).
    assert request.session.offload_chars == 0
    plain = orders.Order(orders.TAB, {"text": "Hi"})
    request = await request_of(claimed(plain))
    assert (request.text, request.parts, request.files, request.client_id) == ("Hi", (), (), "")
    assert (request.detached, request.session.offload_chars) == (False, None)
