"""Conversations and their items. Items are ordered by their auto-increment primary key,
never by timestamp. Every writer first locks its conversation row (see ``store/items.py``),
so within one conversation ids are assigned in commit order on every backend.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from django_agent_sessions import serialization
from django_agent_sessions.approvals.models import (  # its module: approvals/
    REJECTED_CANCELLED as REJECTED_CANCELLED,
)
from django_agent_sessions.approvals.models import REJECTED_EXPIRED as REJECTED_EXPIRED
from django_agent_sessions.approvals.models import ToolApproval as ToolApproval
from django_agent_sessions.chatkit_rows.models import (  # its module: chatkit_rows/
    ChatKitAttachment as ChatKitAttachment,
)
from django_agent_sessions.chatkit_rows.models import ChatKitItem as ChatKitItem
from django_agent_sessions.chatkit_rows.models import ChatKitThread as ChatKitThread
from django_agent_sessions.feedback.models import Feedback as Feedback  # its module: feedback/
from django_agent_sessions.files.models import Attachment as Attachment  # its module: files/
from django_agent_sessions.orders.models import RunOrder as RunOrder  # orders/
from django_agent_sessions.queueing.models import QueuedMessage as QueuedMessage  # queueing/
from django_agent_sessions.schedules.models import ScheduledRun as ScheduledRun  # schedules/
from django_agent_sessions.sharing.models import SharedLink as SharedLink  # sharing/
from django_agent_sessions.steering.models import SteerMessage as SteerMessage  # steering/
from django_agent_sessions.usage.models import RunModelUsage as RunModelUsage  # usage/
from django_agent_sessions.usage.models import UsageTotal as UsageTotal

SESSION_ID_MAX_LENGTH = 255
#: An untitled conversation is titled by the start of its first user message, this long.
AUTOMATIC_TITLE_CHARS = 80


class TitleSource(models.TextChoices):
    FIRST_MESSAGE = "", _("first message")
    MODEL = "model", _("model")
    PERSON = "person", _("person")


class AgentSession(models.Model):
    """One conversation: the SDK's ``session_id`` plus its owner and browsing metadata."""

    session_id = models.CharField(_("session id"), max_length=SESSION_ID_MAX_LENGTH, unique=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("owner"),
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="agent_sessions",
    )
    title = models.CharField(_("title"), max_length=255, blank=True)
    metadata = models.JSONField(_("metadata"), default=dict, blank=True)
    # Kept up to date by every write, so lists never need a COUNT per conversation.
    item_count = models.PositiveIntegerField(_("items"), default=0, editable=False)
    created_at = models.DateTimeField(_("created"), default=timezone.now, editable=False)
    # The time of the last write, to within a second (store.clock.UPDATED_AT_RESOLUTION):
    # two indexes hold it, for the admin, the chat's list and retention, and a burst of
    # writes need not rewrite them each time. Each owner's order stays exact.
    updated_at = models.DateTimeField(
        _("last activity"), default=timezone.now, db_index=True, editable=False
    )
    # A branch (DjangoSession.fork): the conversation and the item it was copied up to.
    branched_from = models.ForeignKey(
        "self",
        verbose_name=_("branched from"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="branches",
        editable=False,
    )
    branched_at_item_id = models.BigIntegerField(
        _("branched at item"), null=True, blank=True, editable=False
    )
    # Kept by the person (store.keeping): pinned first in the list; archived out of the
    # list and the search until asked for. Database defaults, so that a worker of the
    # previous release, inserting without these columns during a deploy, still can.
    pinned = models.BooleanField(_("pinned"), default=False, db_default=False)
    archived_at = models.DateTimeField(_("archived"), null=True, blank=True)
    # Who wrote the title: "" the start of the first message, "model", or "person". A
    # model's title is written only while this is still "" (store.titles): a rename wins.
    title_source = models.CharField(
        _("title source"),
        max_length=8,
        choices=TitleSource.choices,
        default="",  # TitleSource.FIRST_MESSAGE
        db_default="",
        blank=True,
    )
    # A temporary chat (store.temporary): in no list, search or export, and removed
    # with all it wrote once its last page closes (after a grace, so that a reload
    # keeps it) or TEMPORARY_TTL after its last activity, whichever comes first.
    temporary = models.BooleanField(_("temporary"), default=False, db_default=False, editable=False)
    # The pages open on a temporary chat, and when the last one closed.
    open_pages = models.PositiveIntegerField(
        _("open pages"), default=0, db_default=0, editable=False
    )
    left_at = models.DateTimeField(_("left"), null=True, blank=True, editable=False)

    class Meta:
        verbose_name = _("conversation")
        verbose_name_plural = _("conversations")
        indexes = [
            models.Index(fields=["owner", "-updated_at"], name="agent_sess_owner_recent"),
            # The TTL sweep's (store.temporary): only temporary chats, so it stays small.
            models.Index(
                fields=["updated_at"],
                condition=models.Q(temporary=True),
                name="agent_sess_temporary",
            ),
        ]

    def __str__(self) -> str:
        return self.title or self.session_id


class SessionItem(models.Model):
    """One SDK input item (a ``TResponseInputItem`` dict), stored as exact JSON text."""

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(
        AgentSession,
        verbose_name=_("conversation"),
        on_delete=models.CASCADE,
        related_name="items",
        # The (session, id) index below serves every lookup by session.
        db_index=False,
    )
    payload = models.TextField(_("payload"))
    item_type = models.CharField(_("type"), max_length=64, blank=True)
    role = models.CharField(_("role"), max_length=32, blank=True)
    call_id = models.CharField(_("call id"), max_length=255, blank=True)
    preview = models.CharField(_("preview"), max_length=200, blank=True)
    # What search finds (store.search): the text of a user or assistant message ("" for
    # other items). PostgreSQL indexes it with GIN, SQLite with an FTS5 table (0011).
    search_text = models.TextField(_("search text"), blank=True, db_default="", editable=False)
    created_at = models.DateTimeField(_("created"), default=timezone.now, editable=False)

    class Meta:
        verbose_name = _("item")
        verbose_name_plural = _("items")
        ordering = ["session", "id"]
        indexes = [models.Index(fields=["session", "id"], name="agent_item_session_order")]

    def __str__(self) -> str:
        return f"{self.item_type or 'item'} #{self.pk}"

    @property
    def data(self) -> Any:
        """The stored item, decoded."""
        return serialization.loads(self.payload)


class AgentRunQuerySet(models.QuerySet["AgentRun"]):
    """The questions asked of run records, each written once."""

    def running(self) -> AgentRunQuerySet:
        running: AgentRunQuerySet = self.filter(status=AgentRun.Status.RUNNING)
        return running

    def live(self, now: datetime) -> AgentRunQuerySet:
        """Running, and its worker renewed the lease in time: really in progress."""
        live: AgentRunQuerySet = self.running().filter(lease_expires_at__gte=now)
        return live

    def holding(self, now: datetime) -> AgentRunQuerySet:
        """Live, or waiting for decisions: the runs that hold their conversation (a new
        message there is ``busy``)."""
        holding: AgentRunQuerySet = self.live(now) | self.filter(status=AgentRun.Status.WAITING)
        return holding

    def stale(self, now: datetime) -> AgentRunQuerySet:
        """Running on paper only: the lease expired, so its worker died or hung."""
        stale: AgentRunQuerySet = self.running().filter(lease_expires_at__lt=now)
        return stale


class AgentRun(models.Model):
    """One agent run started through the websocket layer: its outcome and token usage.

    At most one run per conversation is ``running`` at a time, enforced by a conditional
    unique constraint so that it holds across every worker process. A worker renews
    ``lease_expires_at`` while its run is alive; a ``running`` row whose lease has
    expired belongs to a worker that died, and the next run may take it over.
    """

    class Status(models.TextChoices):
        RUNNING = "running", _("running")
        # Paused on tool calls that need a person's decision (see ``ToolApproval``). It
        # holds the conversation like a running run, but no worker, task or connection.
        WAITING = "waiting", _("waiting for approval")
        COMPLETED = "completed", _("completed")
        CANCELLED = "cancelled", _("cancelled")
        FAILED = "failed", _("failed")
        # Still going when its worker was told to stop (a deploy) and its drain time ran
        # out: ended by the worker itself, with a valid history (never ``worker_lost``).
        INTERRUPTED = "interrupted", _("interrupted")

    id = models.BigAutoField(primary_key=True)
    # The public id on the wire; not guessable, unlike the primary key.
    run_id = models.UUIDField(_("run id"), default=uuid.uuid4, unique=True, editable=False)
    session = models.ForeignKey(
        AgentSession,
        verbose_name=_("conversation"),
        on_delete=models.CASCADE,
        related_name="runs",
        # The (session, -started_at) index below serves every lookup by session.
        db_index=False,
    )
    status = models.CharField(
        _("status"), max_length=16, choices=Status.choices, default=Status.RUNNING
    )
    agent_name = models.CharField(_("agent"), max_length=255, blank=True)
    started_at = models.DateTimeField(_("started"), default=timezone.now)
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    lease_expires_at = models.DateTimeField(_("lease expires"), default=timezone.now)
    # The conversation's newest item id when the run started: what came before the run.
    history_item_id = models.BigIntegerField(_("last item before the run"), default=0)
    requests = models.PositiveIntegerField(_("requests"), default=0)
    input_tokens = models.PositiveBigIntegerField(_("input tokens"), default=0)
    output_tokens = models.PositiveBigIntegerField(_("output tokens"), default=0)
    total_tokens = models.PositiveBigIntegerField(_("total tokens"), default=0)
    cached_tokens = models.PositiveBigIntegerField(_("cached input tokens"), default=0)
    reasoning_tokens = models.PositiveBigIntegerField(_("reasoning tokens"), default=0)
    # The model of its first request ("" before it); every model's share: ``model_usage``.
    model = models.CharField(_("model"), max_length=255, blank=True)
    # The OpenTelemetry trace of the run (32 hex digits), when tracing is on.
    trace_id = models.CharField(_("trace id"), max_length=32, blank=True)
    error = models.TextField(_("error"), blank=True)
    # While waiting for approvals: the SDK's own serialisation of the paused run
    # (``RunState.to_string()``), emptied when the run resumes or ends.
    state = models.TextField(_("paused state"), blank=True, editable=False)
    # The ``seq`` of the last wire event sent, so a resumed run continues the numbering.
    event_seq = models.PositiveIntegerField(_("last event seq"), default=0, editable=False)
    # When the run first paused for an approval (kept once it resumes), and when the
    # current wait ends: past it, the run is cancelled and its pending calls rejected.
    waited_at = models.DateTimeField(_("waited for approval"), null=True, blank=True)
    approval_expires_at = models.DateTimeField(_("approval expires"), null=True, blank=True)
    # The wire code of a failed run (agent_error, worker_lost, ...), shown after a reload.
    error_code = models.CharField(_("error code"), max_length=32, blank=True)
    # The assistant text streamed by a run that was stopped or failed before its reply
    # was saved. Shown in history and the admin next to the run's items; never part of
    # the session's items, so the next model call does not see a half-written reply.
    partial_text = models.TextField(_("unfinished reply"), blank=True)
    # The conversation's newest item id when the run ended: the run's items are those
    # after history_item_id up to this one.
    last_item_id = models.BigIntegerField(_("last item of the run"), default=0)
    # The id the client gave its user_message (echoed on the message's item and errors).
    client_id = models.CharField(_("client id"), max_length=64, blank=True)

    objects = AgentRunQuerySet.as_manager()

    class Meta:
        verbose_name = _("run")
        verbose_name_plural = _("runs")
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["session"],
                condition=models.Q(status__in=["running", "waiting"]),
                name="agent_run_one_running_per_session",
            )
        ]
        indexes = [
            models.Index(fields=["session", "-started_at"], name="agent_run_session_recent"),
            # The usage page and budgets: runs of a period.
            models.Index(fields=["started_at"], name="agent_run_started"),
        ]
        permissions = [("exempt_from_quotas", _("Can run agents past the token budgets"))]

    def __str__(self) -> str:
        return f"{self.agent_name or 'run'} {self.run_id} ({self.status})"
