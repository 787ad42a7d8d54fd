"""``FeedbackAdmin``: people's ratings of replies, to find the bad answers.

Read-only: a rating is its giver's. The list filters by rating, tag, agent and date; a
rating's page links to the transcript at the rated reply (or says it was regenerated).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from django_agent_sessions.admin import positions
from django_agent_sessions.admin.conversations import AgentSessionAdmin
from django_agent_sessions.admin.read_only import (
    NoAddingOrEditing,
    conversation_link,
    conversation_url,
)
from django_agent_sessions.conf import app_settings
from django_agent_sessions.models import Feedback, SessionItem

if TYPE_CHECKING:
    _ModelAdmin = admin.ModelAdmin[Feedback]
else:  # ModelAdmin is generic only in django-stubs.
    _ModelAdmin = admin.ModelAdmin


class TagFilter(admin.SimpleListFilter):
    title = _("tag")
    parameter_name = "tag"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        return [(tag, tag) for tag in app_settings.FEEDBACK_TAGS]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        tag = self.value()
        return queryset.filter(tags__contains=f",{tag},") if tag else queryset


@admin.register(Feedback)
class FeedbackAdmin(NoAddingOrEditing, _ModelAdmin):
    # A rating is its giver's: staff never write or change one, but may delete it.
    list_display = ("updated_at", "rating", "tag_names", "agent_name", "user", "conversation")
    list_select_related = ("session", "user")
    list_filter = ("rating", TagFilter, "agent_name", "updated_at")
    search_fields = ("comment", "session__session_id")
    date_hierarchy = "updated_at"
    ordering = ("-updated_at",)
    list_per_page = 50
    show_full_result_count = False
    fields = (
        "conversation",
        "at_the_reply",
        "rating",
        "tag_names",
        "comment",
        "agent_name",
        "user",
        "reply",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # A temporary chat's ratings go with it, unseen (store.temporary).
        rated: QuerySet[Any] = super().get_queryset(request).exclude(session__temporary=True)
        return rated

    @admin.display(description=_("tags"))
    def tag_names(self, feedback: Feedback) -> str:
        return ", ".join(feedback.tag_list)

    @admin.display(description=_("conversation"), ordering="session__session_id")
    def conversation(self, feedback: Feedback) -> SafeString:
        return conversation_link(feedback.session_id, feedback.session.session_id)

    @admin.display(description=_("in the transcript"))
    def at_the_reply(self, feedback: Feedback) -> SafeString | str:
        items = SessionItem.objects.filter(session_id=feedback.session_id)
        if not items.filter(pk=feedback.item_id).exists():
            return str(_("The reply is no longer in the conversation (regenerated or cleared)."))
        per_page = AgentSessionAdmin.transcript_per_page
        pages = positions.pages_of(
            feedback.session_id, [feedback.item_id], per_page, using=items.db
        )
        page = pages[feedback.item_id]
        link = f"{conversation_url(feedback.session_id)}?page={page}#item-{feedback.item_id}"
        return format_html('<a href="{}">{}</a>', link, _("the rated reply"))
