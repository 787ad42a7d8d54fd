"""``store.approvals``: a run's pause on tool calls, one decision per call, the claim of
the run by the last decision, and the end of a waiting run with its calls rejected.

The end-to-end flows with the SDK's Runner are in ``tests/websocket/test_approvals.py``;
these call the sync functions on records built directly.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession, ToolApproval
from django_agent_sessions.store import approvals, runs
from tests.conftest import user_message
from tests.store.helpers import call, item_ids, stored, user, write

pytestmark = pytest.mark.django_db

USAGE = {"requests": 2, "input_tokens": 20, "output_tokens": 4, "total_tokens": 24}
CALLS = [
    approvals.RequestedCall("c1", "pay", '{"to": "Ann"}', "Sends money"),
    approvals.RequestedCall("c2", "pay", '{"to": "Bob"}'),
]


def paused(session_id: str, *, timeout: timedelta = timedelta(minutes=5)) -> AgentRun:
    """A run of a new conversation, paused on CALLS after storing their calls."""
    conversation = write(session_id, user_message("Pay Ann and Bob"))
    started = runs.start.sync(conversation.pk, agent_name="Payments", lease_seconds=60)
    assert started is not None
    write(session_id, call("c1", "pay"), call("c2", "pay"))
    expires = approvals.pause.sync(
        started.pk, state="STATE", seq=3, calls=CALLS, usage=USAGE, timeout=timeout
    )
    assert expires is not None
    return AgentRun.objects.get(pk=started.pk)


def decide(
    run: AgentRun, call_id: str, approve: bool, message: str = ""
) -> approvals.Decided | None:
    return approvals.decide.sync(
        run.session_id, call_id, approve=approve, message=message, user_id=None, lease_seconds=60
    )


def test_a_pause_parks_the_run_on_its_calls(session_id: str) -> None:
    before = timezone.now()
    run = paused(session_id)
    assert (run.status, run.state, run.event_seq, run.total_tokens) == ("waiting", "STATE", 3, 24)
    assert run.waited_at is not None
    assert run.approval_expires_at is not None
    assert run.approval_expires_at - before >= timedelta(minutes=5)
    rows = ToolApproval.objects.filter(run=run).order_by("pk")
    assert [(r.call_id, r.description, r.decision) for r in rows] == [
        ("c1", "Sends money", None),
        ("c2", "", None),
    ]
    # A run that is not running any more (here: already waiting) is not paused again.
    again = approvals.pause.sync(
        run.pk, state="OTHER", seq=9, calls=CALLS, usage=USAGE, timeout=timedelta(minutes=1)
    )
    assert again is None
    assert AgentRun.objects.get(pk=run.pk).state == "STATE"


def test_a_run_deleted_with_its_conversation_is_not_paused(session_id: str) -> None:
    conversation = write(session_id, user_message("Pay Ann"))
    started = runs.start.sync(conversation.pk, agent_name="Payments", lease_seconds=60)
    assert started is not None
    conversation.delete()  # retention or the admin, while the run streams
    paused_until = approvals.pause.sync(
        started.pk, state="STATE", seq=3, calls=CALLS, usage=USAGE, timeout=timedelta(minutes=1)
    )
    assert paused_until is None
    assert not ToolApproval.objects.exists()


def test_a_decision_counts_once_and_is_numbered(session_id: str) -> None:
    run = paused(session_id)
    decider = user("alice")
    first = approvals.decide.sync(
        run.session_id, "c1", approve=True, message="ignored", user_id=decider.pk, lease_seconds=60
    )
    assert first == approvals.Decided(str(run.run_id), "c1", True, seq=4)
    assert decide(run, "c1", False) is None  # a second tab: the first decision stands
    assert decide(run, "no-such-call", True) is None
    row = ToolApproval.objects.get(run=run, call_id="c1")
    # An approval carries no rejection message, whatever was sent with it.
    assert (row.decision, row.message, row.decided_by_id) == ("approved", "", decider.pk)
    assert AgentRun.objects.get(pk=run.pk).status == "waiting"  # c2 is still pending


def test_the_last_decision_claims_the_run_for_resuming(session_id: str) -> None:
    run = paused(session_id)
    decide(run, "c1", True)
    last = decide(run, "c2", False, "No. " * 1000)
    assert last is not None
    assert last.resume is not None
    message = ("No. " * 1000)[: approvals.MAX_MESSAGE_CHARS]
    assert last.resume == approvals.Resume(
        run_pk=run.pk,
        run_id=str(run.run_id),
        agent_name="Payments",
        state="STATE",
        seq=5,
        history_item_id=item_ids(session_id)[-1],
        decisions={"c1": (True, ""), "c2": (False, message)},
    )
    resumed = AgentRun.objects.get(pk=run.pk)
    assert (resumed.status, resumed.state, resumed.approval_expires_at) == ("running", "", None)
    assert resumed.lease_expires_at > timezone.now()


def test_no_decision_past_the_expiry_or_for_another_conversation(session_id: str) -> None:
    run = paused(session_id)
    other = AgentSession.objects.create(session_id="other")
    assert (
        approvals.decide.sync(
            other.pk, "c1", approve=True, message="", user_id=None, lease_seconds=60
        )
        is None
    )
    AgentRun.objects.filter(pk=run.pk).update(
        approval_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert decide(run, "c1", True) is None
    assert not ToolApproval.objects.filter(decision__isnull=False).exists()


def test_ending_a_waiting_run_rejects_its_pending_calls(session_id: str) -> None:
    run = paused(session_id)
    decide(run, "c1", False, "Not Ann.")  # seq 4
    ended = approvals.end_waiting.sync(run.session_id, reason=approvals.CANCELLED)
    assert ended == approvals.Ended(run.pk, str(run.run_id), seq=4, call_ids=["c2"])
    record = AgentRun.objects.get(pk=run.pk)
    # c2's approval.resolved is seq 5, the run's end seq 6.
    assert (record.status, record.event_seq, record.state) == ("cancelled", 6, "")
    rejected = ToolApproval.objects.get(run=run, call_id="c2")
    assert (rejected.decision, rejected.reason) == ("rejected", "cancelled")
    # Each call has its output: the person's rejection message, else the SDK's default.
    outputs = {item["call_id"]: item["output"] for item in stored(session_id) if "output" in item}
    assert outputs == {"c1": "Not Ann.", "c2": approvals.REJECTION_OUTPUT}
    assert record.last_item_id == item_ids(session_id)[-1]
    assert approvals.end_waiting.sync(run.session_id, reason=approvals.CANCELLED) is None


def test_only_an_overdue_or_the_named_run_is_ended(session_id: str) -> None:
    run = paused(session_id)
    end = approvals.end_waiting.sync
    assert end(run.session_id, reason=approvals.EXPIRED, only_overdue=True) is None
    assert end(run.session_id, reason=approvals.CANCELLED, run_id="not-a-run-id") is None
    other_id = "00000000-0000-4000-8000-000000000000"
    assert end(run.session_id, reason=approvals.CANCELLED, run_id=other_id) is None
    assert AgentRun.objects.get(pk=run.pk).status == "waiting"
    AgentRun.objects.filter(pk=run.pk).update(
        approval_expires_at=timezone.now() - timedelta(seconds=1)
    )
    ended = end(run.session_id, reason=approvals.EXPIRED, run_id=str(run.run_id), only_overdue=True)
    assert ended is not None
    assert ended.call_ids == ["c1", "c2"]
    reasons = ToolApproval.objects.filter(run=run).values_list("reason", flat=True)
    assert set(reasons) == {"expired"}
