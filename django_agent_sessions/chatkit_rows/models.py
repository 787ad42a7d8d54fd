"""What ChatKit keeps beside a conversation: its thread, its items and its attachments.

A ChatKit thread is an ``AgentSession`` (its id is the ``session_id``, its owner the
conversation's). These rows hold ChatKit's own JSON, exactly as ChatKit gave it, so that
every item type round-trips (widgets, workflows, hidden context have no SDK form). A user
or assistant message is also written as an SDK item (a ``SessionItem``), the one
``DjangoSession`` reads: ``session_item_id`` names it. That is a plain number, not a
foreign key, as ``Feedback.item_id``: the session's own operations delete items with one
statement, which a foreign key would refuse.

No import of the ChatKit library here: the models exist (and migrate) without the extra.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class ChatKitThread(models.Model):
    """A conversation's ChatKit thread: ChatKit's ``ThreadMetadata`` as JSON text."""

    id = models.BigAutoField(primary_key=True)
    session = models.OneToOneField(
        "django_agent_sessions.AgentSession",
        verbose_name=_("conversation"),
        on_delete=models.CASCADE,
        related_name="chatkit_thread",
    )
    payload = models.TextField(_("payload"))

    class Meta:
        app_label = "django_agent_sessions"
        verbose_name = _("ChatKit thread")
        verbose_name_plural = _("ChatKit threads")

    def __str__(self) -> str:
        return f"ChatKit thread #{self.pk}"


class ChatKitItem(models.Model):
    """One ChatKit thread item, ordered by its primary key within its conversation
    (never by its timestamp)."""

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(
        "django_agent_sessions.AgentSession",
        verbose_name=_("conversation"),
        on_delete=models.CASCADE,
        related_name="chatkit_items",
        db_index=False,  # the (session, item_id) constraint's index serves it
    )
    item_id = models.CharField(_("item id"), max_length=255)
    kind = models.CharField(_("type"), max_length=64)
    payload = models.TextField(_("payload"))
    # The SessionItem holding this item's SDK form, for messages (None for the rest).
    session_item_id = models.BigIntegerField(_("SDK item"), null=True, blank=True)
    created_at = models.DateTimeField(_("created"), default=timezone.now, editable=False)

    class Meta:
        app_label = "django_agent_sessions"
        verbose_name = _("ChatKit item")
        verbose_name_plural = _("ChatKit items")
        ordering = ["session", "id"]
        constraints = [
            models.UniqueConstraint(fields=["session", "item_id"], name="agent_chatkit_item_once")
        ]
        indexes = [models.Index(fields=["session", "id"], name="agent_chatkit_item_order")]

    def __str__(self) -> str:
        return f"{self.kind} {self.item_id}"


class ChatKitAttachment(models.Model):
    """A file given to ChatKit: its ``Attachment`` JSON and, once uploaded, its bytes
    in the attachments' storage (``AGENT_SESSIONS["ATTACHMENTS"]``). It exists before
    its thread does (ChatKit uploads first); the message that carries it names it."""

    id = models.BigAutoField(primary_key=True)
    attachment_id = models.CharField(_("attachment id"), max_length=255, unique=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("owner"),
        on_delete=models.CASCADE,
        related_name="+",
    )
    session = models.ForeignKey(
        "django_agent_sessions.AgentSession",
        verbose_name=_("conversation"),
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="chatkit_attachments",
    )
    payload = models.TextField(_("payload"))
    storage_name = models.CharField(_("storage name"), max_length=255, blank=True)
    size = models.PositiveBigIntegerField(_("size"), default=0)
    created_at = models.DateTimeField(_("created"), default=timezone.now, editable=False)

    class Meta:
        app_label = "django_agent_sessions"
        verbose_name = _("ChatKit attachment")
        verbose_name_plural = _("ChatKit attachments")

    def __str__(self) -> str:
        return self.attachment_id
