"""A message sent during a reply, waiting for its run's next model call (``WHILE_RUNNING
= "steer"``). The run may be on another worker: the row is how the message reaches it,
and the truth of whether it entered (the run claims it, deleting it, before that call)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class SteerMessage(models.Model):
    """One message for ``run``; claimed rows are deleted, so what is here is pending."""

    id = models.BigAutoField(primary_key=True)  # the order the messages enter in
    run = models.ForeignKey(
        "django_agent_sessions.AgentRun",
        verbose_name=_("run"),
        on_delete=models.CASCADE,  # a deleted run (or conversation) takes its messages
        related_name="steer_messages",
    )
    text = models.TextField(_("text"))
    client_id = models.CharField(_("client id"), max_length=64, blank=True)
    created_at = models.DateTimeField(_("created"), default=timezone.now, editable=False)

    class Meta:
        verbose_name = _("message for a running reply")
        verbose_name_plural = _("messages for running replies")
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.text[:40]} (run {self.run_id})"
