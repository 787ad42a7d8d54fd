"""The synchronous, transactional half of websocket runs: conversations and run records.

Each public function is one whole operation, called from async code through one
``channels.db.database_sync_to_async`` hop (which also closes connections a restarted
database broke). Nothing here knows about websockets or the SDK.

At most one run per conversation is ``running``: a conditional unique constraint on
``AgentRun`` enforces it in the database, so it holds across worker processes. A worker
renews its run's lease while the run is alive. A ``running`` record whose lease has
expired was left by a worker that died (or hung); starting the next run marks it failed
in the same transaction, so a crash never blocks a conversation for longer than the lease.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from django_agent_sessions import serialization
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem

logger = logging.getLogger(__name__)

STALE_RUN_ERROR = "The worker running this run stopped before it finished (its lease expired)."


@dataclass(frozen=True)
class OpenedSession:
    """A conversation a socket may use."""

    pk: int
    session_id: str


@dataclass(frozen=True)
class StartedRun:
    pk: int
    run_id: str
    # The conversation's newest item id before the run: history older than the run.
    history_item_id: int


@dataclass(frozen=True)
class Usage:
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0


@dataclass(frozen=True)
class History:
    items: list[Any]
    active_run_id: str | None


def open_session(session_id: str, *, owner_id: Any, anonymous: bool) -> OpenedSession:
    """The conversation ``session_id``, created for ``owner_id`` if it does not exist.

    Raises ``SessionOwnershipError`` when it belongs to someone else: to another user,
    or, for a signed-in user, to nobody. Anonymous sockets (``owner_id`` None) may only
    use conversations without an owner; their ids are namespaced by the caller.
    """
    session, _ = AgentSession.objects.get_or_create(
        session_id=session_id, defaults={"owner_id": owner_id}
    )
    expected = None if anonymous else owner_id
    if session.owner_id != expected:
        raise SessionOwnershipError("This conversation belongs to another user.")
    return OpenedSession(pk=session.pk, session_id=session.session_id)


def start_run(session_pk: int, *, agent_name: str, lease_seconds: float) -> StartedRun | None:
    """Record a new running run, or return None if one is already running.

    A running record whose lease expired is marked failed first, in the same
    transaction, so a dead worker's run does not make the conversation busy forever.
    """
    now = timezone.now()
    with transaction.atomic():
        stale = AgentRun.objects.filter(
            session_id=session_pk, status=AgentRun.Status.RUNNING, lease_expires_at__lt=now
        ).update(status=AgentRun.Status.FAILED, finished_at=now, error=STALE_RUN_ERROR)
        if stale:
            logger.warning("Took over %d stale run(s) of conversation pk=%s.", stale, session_pk)
        newest = SessionItem.objects.filter(session_id=session_pk).aggregate(newest=Max("id"))
        try:
            # A savepoint, so that losing the race leaves the outer transaction usable.
            with transaction.atomic():
                run = AgentRun.objects.create(
                    session_id=session_pk,
                    agent_name=serialization.column_text(agent_name, 255),
                    started_at=now,
                    lease_expires_at=now + timedelta(seconds=lease_seconds),
                    history_item_id=newest["newest"] or 0,
                )
        except IntegrityError:
            return None
    return StartedRun(pk=run.pk, run_id=str(run.run_id), history_item_id=run.history_item_id)


def renew_lease(run_pk: int, *, lease_seconds: float) -> bool:
    """Extend a running run's lease; False if it is no longer running (taken over)."""
    expires = timezone.now() + timedelta(seconds=lease_seconds)
    updated = AgentRun.objects.filter(pk=run_pk, status=AgentRun.Status.RUNNING).update(
        lease_expires_at=expires
    )
    return bool(updated == 1)


def finish_run(run_pk: int, *, status: str, usage: Usage, error: str = "") -> AgentRun | None:
    """Record how a run ended. Returns the record, or None if it was taken over."""
    now = timezone.now()
    updated = AgentRun.objects.filter(pk=run_pk, status=AgentRun.Status.RUNNING).update(
        status=status,
        finished_at=now,
        lease_expires_at=now,
        requests=usage.requests,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        error=error,
    )
    if not updated:
        logger.warning("Run pk=%s was taken over before it finished as %s.", run_pk, status)
        return None
    record: AgentRun = AgentRun.objects.select_related("session").get(pk=run_pk)
    return record


def load_history(session_pk: int, *, up_to_item_id: int | None, limit: int | None) -> History:
    """The newest ``limit`` stored items (oldest first) and the running run, if any.

    ``up_to_item_id`` leaves out items saved by a run whose progress the caller already
    has from the run itself (see ``runs.py``).
    """
    items = SessionItem.objects.filter(session_id=session_pk)
    if up_to_item_id is not None:
        items = items.filter(id__lte=up_to_item_id)
    payloads = items.order_by("-id").values_list("payload", flat=True)
    if limit is not None:
        payloads = payloads[:limit]
    decoded = serialization.decode_payloads(reversed(list(payloads)))
    if limit is not None:
        decoded = serialization.drop_orphan_outputs(decoded)
    active = (
        AgentRun.objects.filter(
            session_id=session_pk,
            status=AgentRun.Status.RUNNING,
            lease_expires_at__gte=timezone.now(),
        )
        .values_list("run_id", flat=True)
        .first()
    )
    return History(items=decoded, active_run_id=None if active is None else str(active))
