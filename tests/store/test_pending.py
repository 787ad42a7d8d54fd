"""``store.pending``: the reads of what waits for a person (a waiting run's undecided calls,
overdue runs), how a run's calls were decided, and the progress a tab checks against."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession, ToolApproval
from django_agent_sessions.store import pending
from tests.store.helpers import user

pytestmark = pytest.mark.django_db


def waiting_run(
    session_id: str, *, expires: datetime, calls: tuple[str, ...] = ("c1", "c2")
) -> AgentRun:
    """A run waiting on ``calls``, as ``approvals.pause`` leaves it."""
    conversation = AgentSession.objects.create(session_id=session_id)
    run = AgentRun.objects.create(
        session=conversation, status="waiting", event_seq=7, approval_expires_at=expires
    )
    for call_id in calls:
        ToolApproval.objects.create(
            run=run, call_id=call_id, name="pay", arguments='{"n": 1}', description="Pays"
        )
    return run


def in_minutes(minutes: int) -> datetime:
    return timezone.now() + timedelta(minutes=minutes)


def test_pending_lists_the_undecided_calls_of_the_waiting_run(session_id: str) -> None:
    expires = in_minutes(5)
    run = waiting_run(session_id, expires=expires)
    ToolApproval.objects.filter(run=run, call_id="c1").update(decision="approved")
    waiting_run("other-conversation", expires=expires, calls=("elsewhere",))
    found = pending.pending.sync(run.session_id)
    assert found == [
        pending.PendingApproval(
            str(run.run_id), "c2", "pay", '{"n": 1}', 7, expires.isoformat(), "Pays"
        )
    ]
    assert found[0].wire() == {
        "run_id": str(run.run_id),
        "call_id": "c2",
        "name": "pay",
        "description": "Pays",
        "arguments": '{"n": 1}',
        "expires_at": expires.isoformat(),
    }


def test_nothing_is_pending_once_the_run_stopped_waiting(session_id: str) -> None:
    run = waiting_run(session_id, expires=in_minutes(5))
    AgentRun.objects.filter(pk=run.pk).update(status="cancelled")
    # Its approval rows are still undecided, but no run waits on them.
    assert pending.pending.sync(run.session_id) == []


def test_overdue_runs_and_their_conversations() -> None:
    late = [waiting_run(f"late-{n}", expires=in_minutes(-1)) for n in range(3)]
    on_time = waiting_run("on-time", expires=in_minutes(5))
    assert pending.overdue.sync(late[0].session_id)
    assert not pending.overdue.sync(on_time.session_id)
    assert sorted(pending.overdue_conversations.sync()) == sorted(r.session_id for r in late)
    assert len(pending.overdue_conversations.sync(limit=2)) == 2
    # A run that is past its expiry but no longer waiting is not overdue.
    AgentRun.objects.filter(pk=late[0].pk).update(status="cancelled")
    assert not pending.overdue.sync(late[0].session_id)


def test_progress_is_a_runs_status_and_last_seq(session_id: str) -> None:
    run = waiting_run(session_id, expires=in_minutes(5))
    other = AgentSession.objects.create(session_id="other")
    assert pending.progress.sync(run.session_id, str(run.run_id)) == ("waiting", 7)
    # Another conversation's run, and text that is no run id, name no run of this one.
    assert pending.progress.sync(other.pk, str(run.run_id)) is None
    assert pending.progress.sync(run.session_id, "not-a-uuid") is None


def test_the_summary_says_how_each_call_was_decided(session_id: str) -> None:
    run = waiting_run(session_id, expires=in_minutes(5))
    decider, decided_at = user("alice"), timezone.now()
    ToolApproval.objects.filter(run=run, call_id="c1").update(
        decision="approved", decided_by=decider, decided_at=decided_at
    )
    ToolApproval.objects.filter(run=run, call_id="c2").update(
        decision="rejected", reason="expired", decided_at=decided_at
    )
    summary = pending.summary.sync(run.pk)
    assert [(s["call_id"], s["decision"], s["reason"]) for s in summary] == [
        ("c1", "approved", ""),
        ("c2", "rejected", "expired"),
    ]
    assert (summary[0]["decided_by"], summary[1]["decided_by"]) == (decider, None)
    assert summary[0]["decided_at"] == decided_at
    assert pending.summary.sync(10**9) == []
