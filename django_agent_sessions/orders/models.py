"""``RunOrder``: a run asked for away from the web worker that executes it."""

from __future__ import annotations

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class RunOrder(models.Model):
    """What a run was asked to do, and which of its executions were claimed.

    An execution is the run's start (1) or a resumption after decisions (2, 3, ...).
    ``ordered`` counts the executions enqueued, ``claimed`` those a task took: a task
    claims execution N by a conditional ``UPDATE ... WHERE claimed = N - 1``, so a task
    delivered twice, retried or redelivered after its worker died finds it taken and
    does nothing (``store.orders.claim``).
    """

    class Origin(models.TextChoices):
        TAB = "tab", _("a tab")
        CODE = "code", _("code")
        SCHEDULE = "schedule", _("a schedule")

    run = models.OneToOneField(
        "django_agent_sessions.AgentRun",
        verbose_name=_("run"),
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="order",
    )
    origin = models.CharField(_("started from"), max_length=16, choices=Origin.choices)
    # The message: {"text": ..., "parts": [...], "files": [...], "client_id": ...}.
    input = models.JSONField(_("input"), default=dict)
    # A dotted path to an agents.Agent or a factory; "" for AGENT_SESSIONS["AGENT"].
    agent = models.CharField(_("agent path"), max_length=255, blank=True)
    # What the run's tools receive as ctx.context, when the order gave one (JSON).
    context = models.JSONField(_("context"), null=True, blank=True)
    # True: the run goes on when the last tab watching it leaves (code, schedules).
    detached = models.BooleanField(_("runs without a tab"), default=False)
    ordered = models.PositiveIntegerField(_("executions ordered"), default=1)
    claimed = models.PositiveIntegerField(_("executions claimed"), default=0)
    claimed_by = models.CharField(_("claimed by"), max_length=255, blank=True)
    claimed_at = models.DateTimeField(_("claimed"), null=True, blank=True)
    # Set by a Stop: an execution claimed before the Stop reached it stops once it listens.
    cancel_requested = models.BooleanField(_("stop requested"), default=False)
    ordered_at = models.DateTimeField(_("ordered"), default=timezone.now)

    class Meta:
        verbose_name = _("run order")
        verbose_name_plural = _("run orders")
        indexes = [
            # The starts no task has claimed yet (store.orders.claim_waiting): a handful
            # of rows at any time, however many orders the table keeps.
            models.Index(
                fields=["ordered_at"], condition=models.Q(claimed=0), name="agent_order_unclaimed"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_origin_display()} {self.claimed}/{self.ordered}"
