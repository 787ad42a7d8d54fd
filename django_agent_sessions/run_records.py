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
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max, Q
from django.db.models.functions import Length
from django.utils import timezone

from django_agent_sessions import serialization
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem

logger = logging.getLogger(__name__)

STALE_RUN_ERROR = "The worker running this run stopped before it finished (its lease expired)."
WORKER_LOST = "worker_lost"
# Most expired runs one sweep marks; the next sweep takes the rest.
_EXPIRE_BATCH = 50


@dataclass(frozen=True)
class OpenedSession:
    """A conversation a socket may use."""

    pk: int
    session_id: str


@dataclass(frozen=True)
class ExpiredRun:
    """A run whose worker died: marked failed (``worker_lost``) by this caller."""

    pk: int
    run_id: str
    session_pk: int
    owner_id: Any


@dataclass(frozen=True)
class StartedRun:
    pk: int
    run_id: str
    # The conversation's newest item id before the run: history older than the run.
    history_item_id: int
    # Runs of the conversation whose lease had expired, marked failed on the way.
    expired: tuple[ExpiredRun, ...] = ()


@dataclass(frozen=True)
class Usage:
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0


@dataclass(frozen=True)
class StoredItem:
    id: int
    created_at: datetime
    item: Any


@dataclass(frozen=True)
class RunNote:
    """A run as history shows it: which items are its own, and how it ended."""

    run_id: str
    status: str
    history_item_id: int  # its items come after this one ...
    last_item_id: int  # ... up to this one (0 while it runs)
    partial_text: str
    error_code: str
    client_id: str


@dataclass(frozen=True)
class History:
    entries: list[StoredItem]
    runs: list[RunNote]
    active_run_id: str | None
    has_more: bool = False  # older items exist (page with before_id)

    @property
    def items(self) -> list[Any]:
        return [entry.item for entry in self.entries]


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


def start_run(
    session_pk: int, *, agent_name: str, lease_seconds: float, client_id: str = ""
) -> StartedRun | None:
    """Record a new running run, or return None if one is already running.

    A running record whose lease expired is marked failed first, in the same
    transaction, so a dead worker's run does not make the conversation busy forever.
    """
    now = timezone.now()
    with transaction.atomic():
        expired = expire_stale_runs(now, session_pk=session_pk)
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
                    client_id=serialization.column_text(client_id, 64),
                )
        except IntegrityError:
            return None
    return StartedRun(
        pk=run.pk,
        run_id=str(run.run_id),
        history_item_id=run.history_item_id,
        expired=tuple(expired),
    )


def expire_stale_runs(now: Any = None, *, session_pk: int | None = None) -> list[ExpiredRun]:
    """Mark running runs whose lease expired as failed (``worker_lost``).

    Their worker died (or hung past its lease). Each run is claimed by one conditional
    UPDATE, so when several workers sweep at once, exactly one of them marks (and
    announces) each run.
    """
    now = now or timezone.now()
    stale = AgentRun.objects.filter(status=AgentRun.Status.RUNNING, lease_expires_at__lt=now)
    if session_pk is not None:
        stale = stale.filter(session_id=session_pk)
    candidates = list(
        stale.values_list("pk", "run_id", "session_id", "session__owner_id")[:_EXPIRE_BATCH]
    )
    expired = []
    for pk, run_id, run_session_pk, owner_id in candidates:
        newest = SessionItem.objects.filter(session_id=run_session_pk).aggregate(n=Max("id"))
        claimed = AgentRun.objects.filter(
            pk=pk, status=AgentRun.Status.RUNNING, lease_expires_at__lt=now
        ).update(
            status=AgentRun.Status.FAILED,
            finished_at=now,
            error=STALE_RUN_ERROR,
            error_code=WORKER_LOST,
            last_item_id=newest["n"] or 0,
        )
        if claimed:
            logger.warning("Run %s lost its worker (lease expired); marked failed.", run_id)
            expired.append(ExpiredRun(pk, str(run_id), run_session_pk, owner_id))
    return expired


def expired_record(run_pk: int) -> AgentRun:
    """The record of an expired run, for ``run_finished``."""
    record: AgentRun = AgentRun.objects.select_related("session", "session__owner").get(pk=run_pk)
    return record


def renew_lease(run_pk: int, *, lease_seconds: float) -> bool:
    """Extend a running run's lease; False if it is no longer running (taken over)."""
    expires = timezone.now() + timedelta(seconds=lease_seconds)
    updated = AgentRun.objects.filter(pk=run_pk, status=AgentRun.Status.RUNNING).update(
        lease_expires_at=expires
    )
    return bool(updated == 1)


def finish_run(
    run_pk: int,
    *,
    status: str,
    usage: Usage,
    error: str = "",
    error_code: str = "",
    partial_text: str = "",
) -> AgentRun | None:
    """Record how a run ended. Returns the record, or None if it was taken over.

    ``partial_text`` is the assistant text a stopped or failed run had streamed of a
    reply it never saved; history shows it with the run's status.
    """
    now = timezone.now()
    newest = AgentRun.objects.filter(pk=run_pk).values_list("session_id", flat=True)
    last_item = SessionItem.objects.filter(session_id__in=newest).aggregate(n=Max("id"))
    updated = AgentRun.objects.filter(pk=run_pk, status=AgentRun.Status.RUNNING).update(
        status=status,
        finished_at=now,
        lease_expires_at=now,
        requests=usage.requests,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        error=error,
        error_code=error_code[:32],
        partial_text=serialization.column_text(partial_text, len(partial_text)),
        last_item_id=last_item["n"] or 0,
    )
    if not updated:
        logger.warning("Run pk=%s was taken over before it finished as %s.", run_pk, status)
        return None
    record: AgentRun = AgentRun.objects.select_related("session").get(pk=run_pk)
    return record


def load_history(
    session_pk: int,
    *,
    up_to_item_id: int | None,
    limit: int | None,
    max_chars: int | None = None,
    before_id: int | None = None,
) -> History:
    """The newest stored items (oldest first), the runs they belong to, the running run.

    At most ``limit`` items and ``max_chars`` characters of stored JSON (the newest item
    is always included, however large: it is at most ``MAX_ITEM_BYTES``), so one history
    frame is bounded whatever the conversation holds. ``before_id`` pages back: only
    items older than that id. ``up_to_item_id`` leaves out items saved by a run whose
    progress the caller already has from the run itself (see ``runs.py``).
    """
    rows = SessionItem.objects.filter(session_id=session_pk)
    if up_to_item_id is not None:
        rows = rows.filter(id__lte=up_to_item_id)
    if before_id is not None:
        rows = rows.filter(id__lt=before_id)
    sizes = rows.order_by("-id").annotate(size=Length("payload")).values_list("id", "size")
    if limit is not None:
        sizes = sizes[: limit + 1]
    chosen: list[int] = []
    total, has_more = 0, False
    for index, (item_id, size) in enumerate(sizes.iterator()):
        if (limit is not None and index >= limit) or (
            max_chars is not None and chosen and total + size > max_chars
        ):
            has_more = True
            break
        chosen.append(item_id)
        total += size
    stored = (
        SessionItem.objects.filter(id__in=chosen)
        .order_by("id")
        .values_list("id", "created_at", "payload")
    )
    entries = []
    for item_id, created_at, payload in stored:
        decoded = serialization.decode_payloads([payload])
        if decoded:
            entries.append(StoredItem(item_id, created_at, decoded[0]))
    if has_more:
        entries = _without_orphan_outputs(entries)
    return History(
        entries=entries,
        runs=_runs_of(
            session_pk,
            entries,
            has_more=has_more,
            page=up_to_item_id is not None or before_id is not None,
        ),
        active_run_id=_active_run_id(session_pk),
        has_more=has_more,
    )


_MAX_RUN_NOTES = 200


def _runs_of(
    session_pk: int, entries: list[StoredItem], *, has_more: bool, page: bool
) -> list[RunNote]:
    """The runs whose items (or whose unfinished reply) fall within ``entries``.

    A run's items are those after its ``history_item_id`` up to its ``last_item_id``.
    """
    runs = AgentRun.objects.filter(session_id=session_pk)
    if has_more and entries:  # runs that ended before the oldest item shown: older pages
        runs = runs.filter(Q(status=AgentRun.Status.RUNNING) | Q(last_item_id__gte=entries[0].id))
    if page:  # an older page, or the part of history before the running run
        runs = runs.exclude(status=AgentRun.Status.RUNNING)
        last = entries[-1].id if entries else 0
        runs = runs.filter(history_item_id__lte=last)
    rows = runs.order_by("-started_at").values_list(
        "run_id",
        "status",
        "history_item_id",
        "last_item_id",
        "partial_text",
        "error_code",
        "client_id",
    )[:_MAX_RUN_NOTES]
    return [
        RunNote(str(run_id), status, after, last, partial, code, client_id)
        for run_id, status, after, last, partial, code, client_id in list(rows)[::-1]
    ]


def _active_run_id(session_pk: int) -> str | None:
    active = (
        AgentRun.objects.filter(
            session_id=session_pk,
            status=AgentRun.Status.RUNNING,
            lease_expires_at__gte=timezone.now(),
        )
        .values_list("run_id", flat=True)
        .first()
    )
    return None if active is None else str(active)


def _without_orphan_outputs(entries: list[StoredItem]) -> list[StoredItem]:
    kept = serialization.drop_orphan_outputs([entry.item for entry in entries])
    if len(kept) == len(entries):
        return entries
    kept_ids = {id(item) for item in kept}
    return [entry for entry in entries if id(entry.item) in kept_ids]
