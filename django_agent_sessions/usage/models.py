"""One model's share of one run's usage, and the totals kept of removed temporary chats."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class RunModelUsage(models.Model):
    """The requests and tokens one model spent in one run.

    A run whose agents use one model has one row; a handoff to an agent on another model
    adds a row. The run's own columns hold the totals; these rows say which model spent
    them (usage by model, cost, budgets per model). Written with the run's lease renewals
    and at its end, so a run whose worker died still shows what it spent.
    """

    id = models.BigAutoField(primary_key=True)
    run = models.ForeignKey(
        "django_agent_sessions.AgentRun",
        verbose_name=_("run"),
        on_delete=models.CASCADE,
        related_name="model_usage",
        # The unique (run, model) constraint's index serves every lookup by run.
        db_index=False,
    )
    model = models.CharField(_("model"), max_length=255)
    requests = models.PositiveIntegerField(_("requests"), default=0)
    input_tokens = models.PositiveBigIntegerField(_("input tokens"), default=0)
    cached_tokens = models.PositiveBigIntegerField(_("cached input tokens"), default=0)
    output_tokens = models.PositiveBigIntegerField(_("output tokens"), default=0)
    reasoning_tokens = models.PositiveBigIntegerField(_("reasoning tokens"), default=0)
    total_tokens = models.PositiveBigIntegerField(_("total tokens"), default=0)

    class Meta:
        verbose_name = _("model usage")
        verbose_name_plural = _("model usage")
        constraints = [
            models.UniqueConstraint(fields=["run", "model"], name="agent_run_usage_one_per_model")
        ]
        indexes = [models.Index(fields=["model"], name="agent_run_usage_model")]

    def __str__(self) -> str:
        return f"{self.model}: {self.total_tokens} tokens"


class UsageTotal(models.Model):
    """What a person's removed temporary chats spent, per local day and model: the
    totals their budgets still count once the runs are gone (``store.usage_totals``).

    ``model`` "" holds the runs' totals (the budgets of every model); a model's name,
    that model's share (its own budgets). Nothing says which conversation spent them.
    """

    id = models.BigAutoField(primary_key=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("owner"),
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,  # the unique (owner, day, model) constraint's index serves it
    )
    day = models.DateField(_("day"))
    model = models.CharField(_("model"), max_length=255, blank=True)
    total_tokens = models.PositiveBigIntegerField(_("total tokens"), default=0)

    class Meta:
        verbose_name = _("usage total")
        verbose_name_plural = _("usage totals")
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "day", "model"], name="agent_usage_total_one_per_day"
            )
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.model or '*'}: {self.total_tokens} tokens"
