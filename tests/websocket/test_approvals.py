"""Tool approvals on the run records, with the real SDK Runner and ScriptedModel."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from agents import Runner
from agents.testing import assistant_message
from asgiref.sync import async_to_sync
from django.utils import timezone

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentRun, AgentSession, ToolApproval
from django_agent_sessions.store import approvals, open_calls, pending
from django_agent_sessions.store import runs as store_runs
from django_agent_sessions.streaming.running import paused
from tests.approval_agent import payment_agent, two_payments
from tests.processes import REPO_ROOT, worker_env

pytestmark = pytest.mark.django_db(transaction=True)
LEASE = 60.0


def _interrupted_run(session_id: str) -> tuple[int, int, list[approvals.RequestedCall]]:
    """Runs the payment agent until it stops on two calls; pauses its record."""
    session = AgentSession.objects.create(session_id=session_id)
    started = store_runs.start.sync(session.pk, agent_name="Payments", lease_seconds=LEASE)
    assert started is not None

    async def run() -> Any:
        result = Runner.run_streamed(
            payment_agent(two_payments()), "Pay Ann and Bob", session=DjangoSession(session_id)
        )
        async for _ in result.stream_events():
            pass
        return result

    result = async_to_sync(run)()
    assert [item.tool_name for item in result.interruptions] == ["send_payment"] * 2
    state, calls = paused.pause(result)
    expires = approvals.pause.sync(
        started.pk, state=state, seq=7, calls=calls, usage={}, timeout=timedelta(hours=1)
    )
    assert expires is not None
    return session.pk, started.pk, calls


def _decide(session_pk: int, call_id: str, approve: bool, **kw: Any) -> approvals.Decided | None:
    return approvals.decide.sync(
        session_pk,
        call_id,
        approve=approve,
        message=kw.get("message", ""),
        user_id=kw.get("user_id"),
        lease_seconds=LEASE,
    )


def _stored(session_id: str) -> list[Any]:
    return async_to_sync(DjangoSession(session_id).get_items)()


def test_a_paused_run_resumes_in_a_fresh_process(session_id: str, make_user: Callable) -> None:
    user = make_user("ann")
    session_pk, run_pk, calls = _interrupted_run(session_id)
    assert [c.call_id for c in calls] == ["call-ann", "call-bob"]
    assert json.loads(calls[0].arguments) == {"amount": 5, "to": "ann"}
    run = AgentRun.objects.get(pk=run_pk)
    assert run.status == "waiting"
    assert run.state
    assert run.event_seq == 7
    assert run.waited_at
    assert [p.call_id for p in pending.pending.sync(session_pk)] == ["call-ann", "call-bob"]

    # Decided one by one, in any order; the last decision claims the run.
    first = _decide(session_pk, "call-bob", False, message="Bob is not a payee", user_id=user.pk)
    assert first is not None
    assert first.resume is None
    last = _decide(session_pk, "call-ann", True, user_id=user.pk)
    assert last is not None
    assert last.resume is not None
    assert AgentRun.objects.get(pk=run_pk).status == "running"
    assert last.resume.decisions == {
        "call-ann": (True, ""),
        "call-bob": (False, "Bob is not a payee"),
    }
    decided = ToolApproval.objects.get(run_id=run_pk, call_id="call-ann")
    assert decided.decided_by_id == user.pk
    assert decided.decided_at is not None

    payload = {"state": last.resume.state, "decisions": last.resume.decisions}
    process = subprocess.run(
        [sys.executable, "-m", "tests.approval_agent"],
        input=json.dumps({**payload, "session_id": session_id}),
        env=worker_env(),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 0, process.stderr
    out = json.loads(process.stdout.strip().splitlines()[-1])
    assert out == {"final_output": "Paid Ann; Bob's payment was refused.", "executed": ["ann"]}

    items = _stored(session_id)
    summary = [(i.get("type", "message"), i.get("call_id") or i.get("role")) for i in items]
    assert summary == [
        ("message", "user"),
        ("function_call", "call-ann"),
        ("function_call", "call-bob"),
        ("function_call_output", "call-ann"),
        ("function_call_output", "call-bob"),
        ("message", "assistant"),
    ]
    assert items[3]["output"] == "sent 5 to ann"
    assert items[4]["output"] == "Bob is not a payee"


def test_a_rejection_reaches_the_model_and_the_run_goes_on(session_id: str) -> None:
    session_pk, _, _ = _interrupted_run(session_id)
    _decide(session_pk, "call-ann", False)
    last = _decide(session_pk, "call-bob", False)
    assert last is not None
    assert last.resume is not None
    agent = payment_agent([assistant_message("Nothing was sent.")])
    resumed = last.resume

    async def resume() -> Any:
        state = await paused.restore(agent, resumed.state, resumed.decisions, context=None)
        result = Runner.run_streamed(agent, state, session=DjangoSession(session_id))
        async for _ in result.stream_events():
            pass
        return result

    result = async_to_sync(resume)()
    assert result.final_output == "Nothing was sent."
    sent_to_model = agent.model.calls[0].input  # type: ignore[union-attr]
    outputs = [i["output"] for i in sent_to_model if i.get("type") == "function_call_output"]
    assert outputs == [approvals.REJECTION_OUTPUT] * 2


@pytest.mark.parametrize(
    "call_id", ["no-such-call", "call-ann"], ids=["unknown", "already decided"]
)
def test_a_bad_decision_writes_nothing(session_id: str, call_id: str) -> None:
    session_pk, run_pk, _ = _interrupted_run(session_id)
    assert _decide(session_pk, "call-ann", True) is not None
    before = list(ToolApproval.objects.filter(run_id=run_pk).values())
    assert _decide(session_pk, call_id, False) is None
    assert list(ToolApproval.objects.filter(run_id=run_pk).values()) == before
    assert AgentRun.objects.get(pk=run_pk).status == "waiting"


def test_a_decision_from_another_conversation_is_unknown(session_id: str) -> None:
    _, run_pk, _ = _interrupted_run(session_id)
    other = AgentSession.objects.create(session_id=session_id + "-other")
    assert _decide(other.pk, "call-ann", True) is None
    assert not ToolApproval.objects.filter(run_id=run_pk, decision__isnull=False).exists()


def test_concurrent_decisions_on_one_call_count_once(session_id: str) -> None:
    session_pk, run_pk, _ = _interrupted_run(session_id)
    results: list[Any] = []
    barrier = threading.Barrier(4)

    def decide(approve: bool) -> None:
        from django.db import connection

        try:
            barrier.wait(timeout=30)
            results.append(_decide(session_pk, "call-ann", approve))
        finally:
            connection.close()

    threads = [threading.Thread(target=decide, args=(i % 2 == 0,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    counted = [r for r in results if r is not None]
    assert len(results) == 4
    assert len(counted) == 1
    row = ToolApproval.objects.get(run_id=run_pk, call_id="call-ann")
    assert row.decision == ("approved" if counted[0].approve else "rejected")


def test_concurrent_last_decisions_resume_exactly_once(session_id: str) -> None:
    session_pk, run_pk, _ = _interrupted_run(session_id)
    results: list[Any] = []
    barrier = threading.Barrier(2)

    def decide(call_id: str) -> None:
        from django.db import connection

        try:
            barrier.wait(timeout=30)
            results.append(_decide(session_pk, call_id, True))
        finally:
            connection.close()

    threads = [threading.Thread(target=decide, args=(c,)) for c in ("call-ann", "call-bob")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert all(r is not None for r in results)
    assert len(results) == 2
    assert sum(r.resume is not None for r in results) == 1
    assert AgentRun.objects.get(pk=run_pk).status == "running"


def test_a_waiting_run_holds_the_conversation(session_id: str) -> None:
    session_pk, _, _ = _interrupted_run(session_id)
    assert store_runs.start.sync(session_pk, agent_name="x", lease_seconds=LEASE) is None


def test_an_expired_run_is_cancelled_with_its_calls_rejected(session_id: str) -> None:
    session_pk, run_pk, _ = _interrupted_run(session_id)
    assert approvals.end_waiting.sync(session_pk, reason="expired", only_overdue=True) is None
    AgentRun.objects.filter(pk=run_pk).update(
        approval_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert pending.overdue.sync(session_pk)
    # A decision that arrives too late counts for nothing and writes nothing: ending the
    # run is the expiry's (lifecycle.end_waiting tells every tab and run_finished).
    assert _decide(session_pk, "call-ann", True) is None
    assert AgentRun.objects.get(pk=run_pk).status == "waiting"
    assert not ToolApproval.objects.filter(run_id=run_pk, decision__isnull=False).exists()
    ended = approvals.end_waiting.sync(session_pk, reason="expired", only_overdue=True)
    assert ended is not None
    assert sorted(ended.call_ids) == ["call-ann", "call-bob"]
    run = AgentRun.objects.get(pk=run_pk)
    assert run.status == "cancelled"
    assert run.state == ""
    assert run.finished_at
    rows = ToolApproval.objects.filter(run_id=run_pk)
    assert {(r.decision, r.reason, r.decided_by_id) for r in rows} == {
        ("rejected", "expired", None)
    }
    items = _stored(session_id)
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    assert [(o["call_id"], o["output"]) for o in outputs] == [
        ("call-ann", approvals.REJECTION_OUTPUT),
        ("call-bob", approvals.REJECTION_OUTPUT),
    ]
    # The conversation is free again.
    assert store_runs.start.sync(session_pk, agent_name="x", lease_seconds=LEASE) is not None


def test_cancel_ends_a_waiting_run_once(session_id: str) -> None:
    session_pk, run_pk, _ = _interrupted_run(session_id)
    _decide(session_pk, "call-ann", True)
    ended = approvals.end_waiting.sync(session_pk, reason="cancelled")
    assert ended is not None
    assert ended.call_ids == ["call-bob"]
    assert ended.seq == 8  # the requests' 7, then the decision on call-ann
    # Then the rejection of call-bob (9) and the run's end (10).
    assert AgentRun.objects.get(pk=run_pk).event_seq == 10
    assert approvals.end_waiting.sync(session_pk, reason="cancelled") is None
    rows = {r.call_id: (r.decision, r.reason) for r in ToolApproval.objects.filter(run_id=run_pk)}
    assert rows == {"call-ann": ("approved", ""), "call-bob": ("rejected", "cancelled")}
    outputs = [i for i in _stored(session_id) if i.get("type") == "function_call_output"]
    # The approved call never ran: its output says so, not that it was rejected.
    assert [(o["call_id"], o["output"]) for o in outputs] == [
        ("call-ann", open_calls.NOT_RESUMED_CALL),
        ("call-bob", approvals.REJECTION_OUTPUT),
    ]
