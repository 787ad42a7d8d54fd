"""One tool call of a run that waits for a person's decision, and that decision.

Its own module (re-exported by ``django_agent_sessions.models``) so that the conversation
model has room to grow; the model's app label and table are unchanged.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

# ToolApproval.reason of a call rejected because its run ended without a decision.
REJECTED_EXPIRED = "expired"
REJECTED_CANCELLED = "cancelled"


class ToolApproval(models.Model):
    """One tool call of a run that waits for a person's decision, and that decision.

    ``decision`` is set once, by a conditional ``UPDATE ... WHERE decision IS NULL``: when
    two tabs decide the same call at once, the database lets exactly one of them count.
    A call rejected because its run expired or was cancelled has no ``decided_by`` and a
    ``reason``.
    """

    class Decision(models.TextChoices):
        APPROVED = "approved", _("approved")
        REJECTED = "rejected", _("rejected")

    class Reason(models.TextChoices):
        PERSON = "", _("decided by a person")
        EXPIRED = REJECTED_EXPIRED, _("expired")
        CANCELLED = REJECTED_CANCELLED, _("run cancelled")

    id = models.BigAutoField(primary_key=True)
    run = models.ForeignKey(
        "django_agent_sessions.AgentRun",
        verbose_name=_("run"),
        on_delete=models.CASCADE,
        related_name="approvals",
        # The unique (run, call_id) constraint's index serves every lookup by run.
        db_index=False,
    )
    call_id = models.CharField(_("call id"), max_length=255)
    name = models.CharField(_("tool"), max_length=255)
    arguments = models.TextField(_("arguments"), blank=True)
    # What the tool does (its description when the run paused): what a person decides on.
    description = models.TextField(_("tool description"), blank=True)
    requested_at = models.DateTimeField(_("requested"), default=timezone.now)
    # NULL while pending: "decided" is "decision IS NOT NULL", which the race relies on.
    decision = models.CharField(  # noqa: DJ001
        _("decision"), max_length=16, choices=Decision.choices, null=True, blank=True
    )
    reason = models.CharField(
        _("reason"), max_length=16, choices=Reason.choices, default="", blank=True
    )
    # Sent to the model as the tool's output when the call is rejected.
    message = models.TextField(_("message"), blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("decided by"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    decided_at = models.DateTimeField(_("decided"), null=True, blank=True)

    class Meta:
        verbose_name = _("tool approval")
        verbose_name_plural = _("tool approvals")
        ordering = ["run", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "call_id"], name="agent_approval_one_per_call")
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.call_id} ({self.decision or 'pending'})"
