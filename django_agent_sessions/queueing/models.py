"""A message waiting for its conversation's reply to end (``WHILE_RUNNING = "queue"``)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class QueuedMessage(models.Model):
    """A message sent during a reply, not sent yet; sent in ``id`` order.

    A row, not a value in a worker's memory: it survives a reload and the death of the
    worker that ran the reply. It is deleted in the transaction that records the run
    answering it (``store.queued``), so it is sent once. ``owner`` is the conversation's
    owner when it was queued (None: an anonymous visitor's conversation); only they edit
    or remove it.
    """

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(
        "django_agent_sessions.AgentSession",
        on_delete=models.CASCADE,
        related_name="queued_messages",
        verbose_name=_("conversation"),
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("owner"),
    )
    text = models.TextField(_("text"))
    client_id = models.CharField(_("client id"), max_length=64, blank=True, default="")
    created_at = models.DateTimeField(_("created"), default=timezone.now, editable=False)

    class Meta:
        verbose_name = _("queued message")
        verbose_name_plural = _("queued messages")
        ordering = ["id"]
        indexes = [models.Index(fields=["session", "id"], name="agent_queued_in_order")]

    def __str__(self) -> str:
        return self.text[:80]
