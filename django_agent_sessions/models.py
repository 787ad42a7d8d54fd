"""Conversations and their items.

Items are ordered by their auto-increment primary key, never by timestamp. Every writer
first locks its conversation row (see ``store/items.py``), so within one conversation ids are
assigned in commit order on every backend.
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

SESSION_ID_MAX_LENGTH = 255


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
    updated_at = models.DateTimeField(
        _("last activity"), default=timezone.now, db_index=True, editable=False
    )

    class Meta:
        verbose_name = _("conversation")
        verbose_name_plural = _("conversations")
        indexes = [models.Index(fields=["owner", "-updated_at"], name="agent_sess_owner_recent")]

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
        COMPLETED = "completed", _("completed")
        CANCELLED = "cancelled", _("cancelled")
        FAILED = "failed", _("failed")

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
    error = models.TextField(_("error"), blank=True)

    objects = AgentRunQuerySet.as_manager()

    class Meta:
        verbose_name = _("run")
        verbose_name_plural = _("runs")
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["session"],
                condition=models.Q(status="running"),
                name="agent_run_one_running_per_session",
            )
        ]
        indexes = [models.Index(fields=["session", "-started_at"], name="agent_run_session_recent")]

    def __str__(self) -> str:
        return f"{self.agent_name or 'run'} {self.run_id} ({self.status})"
