"""Messages for a running reply (``WHILE_RUNNING = "steer"``): stored for the run here,
claimed by the run before each model call (``streaming.running.steering``).

Only the run itself claims its messages (one task per run), so a claim needs no lock
against another claim: it reads the pending rows, then deletes the ones it read. What
must not race is a message arriving as the run ends: ``add`` takes the conversation's
lock first, the lock ``runs.finish`` takes to record the end, and stores the message
only while the run is live. A message stored before the end is therefore seen by the
end's last claim (``claim`` after the end is recorded); one arriving after it finds no
live run, and the caller sends it as a new message.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from django_agent_sessions.models import AgentRun, SteerMessage
from django_agent_sessions.store.hops import hop
from django_agent_sessions.store.runs import database, lock_conversation


@dataclass(frozen=True)
class Steer:
    text: str
    client_id: str


@dataclass(frozen=True)
class Accepted:
    run_id: str  # the run the message will enter


@hop(write=True)
def add(session_pk: int, text: str, client_id: str = "") -> Accepted | None:
    """Store ``text`` for the conversation's live run; None if no run is live there (a
    run waiting for approvals has no model call coming until a person decides)."""
    using = database()
    with transaction.atomic(using=using):
        lock_conversation(session_pk, using)
        runs = AgentRun.objects.using(using).live(timezone.now())
        run = runs.filter(session_id=session_pk).only("pk", "run_id").first()
        if run is None:
            return None
        SteerMessage.objects.using(using).create(run=run, text=text, client_id=client_id)
        return Accepted(str(run.run_id))


@hop(write=True)
def claim(run_pk: int) -> list[Steer]:
    """The run's pending messages, oldest first, now taken: one query when none wait
    (what nearly every model call finds)."""
    using = database()
    pending = list(
        SteerMessage.objects.using(using)
        .filter(run_id=run_pk)
        .order_by("id")
        .values_list("id", "text", "client_id")
    )
    if pending:
        SteerMessage.objects.using(using).filter(id__in=[row[0] for row in pending]).delete()
    return [Steer(text, client_id) for _, text, client_id in pending]
