"""A share link of a conversation (``AGENT_SESSIONS["SHARE_LINKS"]``, docs/conversations.md)."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

#: ``secrets.token_urlsafe(32)``: 256 random bits, 43 characters; nobody guesses one.
TOKEN_BYTES = 32


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


class SharedLink(models.Model):
    """Who may read a conversation without owning it: whoever has ``token``.

    ``up_to_item_id`` is the snapshot (the newest item when the link was made: the
    page never shows a later one); None follows the conversation ("update" mode, the
    same URL). ``revoked_at`` and ``expires_at`` end it; the row stays for the owner's
    list and the admin. The token is checked in the database on every request.
    """

    id = models.BigAutoField(primary_key=True)
    token = models.CharField(_("token"), max_length=64, unique=True, default=new_token)
    session = models.ForeignKey(
        "django_agent_sessions.AgentSession",
        verbose_name=_("conversation"),
        on_delete=models.CASCADE,  # a deleted conversation takes its links
        related_name="shared_links",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("created by"),
        on_delete=models.CASCADE,
        related_name="+",
    )
    up_to_item_id = models.BigIntegerField(_("up to item"), null=True, blank=True)
    show_tools = models.BooleanField(_("shows tool calls and outputs"), default=False)
    expires_at = models.DateTimeField(_("expires"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True)
    created_at = models.DateTimeField(_("created"), default=timezone.now, editable=False)

    class Meta:
        app_label = "django_agent_sessions"
        verbose_name = _("shared link")
        verbose_name_plural = _("shared links")
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["created_by", "-created_at"], name="agent_link_by_owner")]

    def __str__(self) -> str:
        return f"{self.token[:8]}…"

    @property
    def follows(self) -> bool:
        """ "Update" mode: the page shows the conversation as it is now."""
        return self.up_to_item_id is None

    def is_live(self) -> bool:
        """Neither revoked nor expired."""
        expired = self.expires_at is not None and self.expires_at <= timezone.now()
        return self.revoked_at is None and not expired
