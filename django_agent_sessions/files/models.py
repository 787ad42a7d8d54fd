"""A file of a conversation, kept in Django's storage (``AGENT_SESSIONS["ATTACHMENTS"]``)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class Attachment(models.Model):
    """One file's bytes, stored once per conversation (by SHA-256) and referenced from
    the items that hold it. Removed with its conversation."""

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(
        "django_agent_sessions.AgentSession",
        verbose_name=_("conversation"),
        on_delete=models.CASCADE,
        related_name="attachments",
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("owner"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    name = models.CharField(_("name"), max_length=255, blank=True)
    content_type = models.CharField(_("content type"), max_length=100)
    size = models.PositiveBigIntegerField(_("size"))
    sha256 = models.CharField(_("SHA-256"), max_length=64)
    # The name the storage gave the file (the storage is the one the settings name).
    storage_name = models.CharField(_("storage name"), max_length=255)
    created_at = models.DateTimeField(_("created"), default=timezone.now, editable=False)

    class Meta:
        app_label = "django_agent_sessions"
        verbose_name = _("attachment")
        verbose_name_plural = _("attachments")
        ordering = ["session", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "sha256"], name="agent_attachment_once_per_conversation"
            )
        ]

    def __str__(self) -> str:
        return self.name or self.storage_name
