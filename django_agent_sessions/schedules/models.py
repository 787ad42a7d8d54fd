"""A run that starts by itself, on an interval or a cron expression (docs/schedules.md)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from django_agent_sessions.schedules import timing


class ScheduledRun(models.Model):
    """An agent, an input and a timing: each firing is an ordinary run, started as
    ``start_run`` starts one (origin ``"schedule"``), in ``session`` or in a new
    conversation each time.

    ``next_fire_at`` is the claim: a scheduler fires a firing only if it moves
    ``next_fire_at`` from the value it read (``store.schedules.claim``), so schedulers
    in several processes fire each firing once. Blank, it is computed on save.
    """

    id = models.BigAutoField(primary_key=True)
    name = models.CharField(_("name"), max_length=200)
    agent = models.CharField(
        _("agent"),
        max_length=255,
        blank=True,
        help_text=_(
            "Dotted path to an agents.Agent or to a function returning one; "
            "blank: the AGENT_SESSIONS['AGENT'] setting."
        ),
    )
    input = models.TextField(_("input"), help_text=_("The message each run starts with."))
    session = models.ForeignKey(
        "django_agent_sessions.AgentSession",
        verbose_name=_("conversation"),
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="schedules",
        help_text=_("Each run continues this conversation; blank: a new one each time."),
    )
    every = models.DurationField(
        _("every"), null=True, blank=True, help_text=_("An interval, e.g. 1:00:00 for hourly.")
    )
    cron = models.CharField(
        _("cron"),
        max_length=100,
        blank=True,
        help_text=_("Or a cron expression in the project's time zone, e.g. 0 9 * * 1-5."),
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("owner"),
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="agent_schedules",
        help_text=_("Whose runs they are: quotas and the conversations' owner."),
    )
    enabled = models.BooleanField(_("enabled"), default=True)
    next_fire_at = models.DateTimeField(
        _("next firing"),
        null=True,
        blank=True,
        help_text=_("Blank: computed from the interval or the cron expression."),
    )
    last_fired_at = models.DateTimeField(_("last firing"), null=True, blank=True, editable=False)
    # The run's id as text, not a foreign key: runs are pruned with their conversations.
    last_run_id = models.CharField(_("last run"), max_length=64, blank=True, editable=False)
    last_error = models.TextField(_("last error"), blank=True, editable=False)
    created_at = models.DateTimeField(_("created"), default=timezone.now, editable=False)

    class Meta:
        app_label = "django_agent_sessions"
        verbose_name = _("scheduled run")
        verbose_name_plural = _("scheduled runs")
        ordering = ["name", "id"]
        indexes = [
            # The schedulers' one question, "what is due?", reads enabled rows only.
            models.Index(
                fields=["next_fire_at"],
                condition=models.Q(enabled=True),
                name="agent_schedule_due",
            )
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(every__isnull=False, every__gt=timedelta(0), cron="")
                | (models.Q(every__isnull=True) & ~models.Q(cron="")),
                name="agent_schedule_one_timing",
            )
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.next_fire_at is None and (self.every is not None or self.cron):
            self.next_fire_at = timing.first_firing(
                every=self.every, cron=self.cron, now=timezone.now()
            )
        super().save(*args, **kwargs)

    @property
    def timing_text(self) -> str:
        return timing.describe(every=self.every, cron=self.cron)

    def clean(self) -> None:
        super().clean()
        self.cron = self.cron.strip()
        if (self.every is None) == (not self.cron):
            message = _("Give either an interval (every) or a cron expression, not both.")
            if self.every is None:
                message = _("Give an interval (every) or a cron expression: one of them.")
            raise ValidationError(message)
        if self.every is not None and self.every <= timedelta(0):
            raise ValidationError({"every": _("The interval must be longer than zero.")})
        if self.cron and (error := timing.cron_error(self.cron)):
            raise ValidationError({"cron": error})
