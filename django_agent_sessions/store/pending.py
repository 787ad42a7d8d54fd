"""Reads of what waits for a person: pending calls, overdue runs, how calls were decided.

The writes (pause, decide, end) are ``store.approvals``'s.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from django_agent_sessions.models import AgentRun, ToolApproval
from django_agent_sessions.store.hops import hop

WAITING = AgentRun.Status.WAITING


@dataclass(frozen=True)
class PendingApproval:
    """A call waiting for a decision, as the ``history`` frame lists it."""

    run_id: str
    call_id: str
    name: str
    arguments: str
    seq: int  # of the run's last event, so a socket numbers the resumed run's events
    expires_at: str  # ISO 8601
    description: str = ""

    def wire(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "call_id": self.call_id,
            "name": self.name,
            "description": self.description,
            "arguments": self.arguments,
            "expires_at": self.expires_at,
        }


@hop
def summary(run_pk: int) -> list[dict[str, Any]]:
    """How each call of a run that waited was decided: for ``run_finished`` receivers."""
    rows = ToolApproval.objects.filter(run_id=run_pk).select_related("decided_by")
    return [
        {
            "call_id": row.call_id,
            "name": row.name,
            "arguments": row.arguments,
            "decision": row.decision,
            "reason": row.reason,
            "decided_by": row.decided_by,
            "requested_at": row.requested_at,
            "decided_at": row.decided_at,
        }
        for row in rows.order_by("pk")
    ]


@hop
def pending(session_pk: int) -> list[PendingApproval]:
    """The calls of the conversation's waiting run that wait for a decision."""
    rows = ToolApproval.objects.filter(
        run__session_id=session_pk, run__status=WAITING, decision__isnull=True
    ).order_by("pk")
    return [
        PendingApproval(
            run_id=str(row["run__run_id"]),
            call_id=row["call_id"],
            name=row["name"],
            arguments=row["arguments"],
            seq=row["run__event_seq"],
            expires_at=_iso(row["run__approval_expires_at"]),
            description=row["description"],
        )
        for row in rows.values(
            "run__run_id",
            "call_id",
            "name",
            "arguments",
            "run__event_seq",
            "run__approval_expires_at",
            "description",
        )
    ]


def _iso(moment: Any) -> str:
    return moment.isoformat() if moment else ""


@hop
def overdue(session_pk: int) -> bool:
    """Whether the conversation's waiting run is past its expiry."""
    return bool(
        AgentRun.objects.filter(
            session_id=session_pk, status=WAITING, approval_expires_at__lt=timezone.now()
        ).exists()
    )


@hop
def overdue_conversations(limit: int = 50) -> list[int]:
    """Conversations whose waiting run is past its expiry, for the sweep."""
    rows = AgentRun.objects.filter(status=WAITING, approval_expires_at__lt=timezone.now())
    return list(rows.values_list("session_id", flat=True)[:limit])


@hop
def progress(session_pk: int, run_id: str) -> tuple[str, int] | None:
    """A run of the conversation: its status and the seq of its last recorded event (a
    waiting run's last request or decision), for a tab that checks whether it missed
    any; None if the conversation has no such run."""
    try:
        key = uuid.UUID(run_id)
    except ValueError:
        return None
    runs = AgentRun.objects.filter(session_id=session_pk, run_id=key)
    found = runs.values_list("status", "event_seq").first()
    return None if found is None else (str(found[0]), int(found[1]))
