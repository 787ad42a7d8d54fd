"""One person's rating of one assistant reply."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class Feedback(models.Model):
    """A thumbs up or down on a reply, with an optional comment and tags.

    One per person per reply (changing it updates the row). ``item_id`` is the reply's
    ``SessionItem`` id, not a foreign key: regenerating the turn deletes the reply, and
    its rating stays, with the reply's text in ``reply``. Removed with the conversation.
    """

    RATINGS = [(1, _("good")), (-1, _("bad"))]

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(
        "django_agent_sessions.AgentSession",
        verbose_name=_("conversation"),
        on_delete=models.CASCADE,
        related_name="feedback",
    )
    run = models.ForeignKey(
        "django_agent_sessions.AgentRun",
        verbose_name=_("run"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="feedback",
    )
    item_id = models.BigIntegerField(_("reply item"))
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("user"),
        on_delete=models.CASCADE,
        related_name="+",
    )
    rating = models.SmallIntegerField(_("rating"), choices=RATINGS)
    comment = models.TextField(_("comment"), blank=True)
    # ",tag,other tag," so that a tag filters with one LIKE on every database.
    tags = models.CharField(_("tags"), max_length=500, blank=True)
    agent_name = models.CharField(_("agent"), max_length=255, blank=True)
    reply = models.TextField(_("reply"), help_text=_("The rated item, as it was stored."))
    created_at = models.DateTimeField(_("given"), default=timezone.now, editable=False)
    updated_at = models.DateTimeField(_("changed"), default=timezone.now)

    class Meta:
        app_label = "django_agent_sessions"
        verbose_name = _("feedback")
        verbose_name_plural = _("feedback")
        ordering = ["-updated_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "session", "item_id"], name="agent_feedback_once_per_person"
            )
        ]
        indexes = [models.Index(fields=["session", "item_id"], name="agent_feedback_reply")]

    def __str__(self) -> str:
        return f"{self.get_rating_display()} on item {self.item_id}"

    @property
    def tag_list(self) -> list[str]:
        return [tag for tag in self.tags.split(",") if tag]
