"""``SharedLinkAdmin``: every share link, to see what is shared and to revoke it.

Read-mostly: a link is its creator's, so staff never make or change one here; the one
write is the "Revoke" action (``store.sharing.revoke_all``), effective at once on every
worker. Staff read a shared conversation through its own page in the admin, not the
link: a link's page follows the same rules for staff as for anyone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from django_agent_sessions.admin.read_only import NoAddingOrEditing, conversation_link
from django_agent_sessions.models import SharedLink
from django_agent_sessions.store import sharing

if TYPE_CHECKING:
    _ModelAdmin = admin.ModelAdmin[SharedLink]
else:  # ModelAdmin is generic only in django-stubs.
    _ModelAdmin = admin.ModelAdmin


@admin.register(SharedLink)
class SharedLinkAdmin(NoAddingOrEditing, _ModelAdmin):
    list_display = ("__str__", "conversation", "created_by", "snapshot", "show_tools", "live")
    list_select_related = ("session", "created_by")
    list_filter = ("show_tools", "created_at", "revoked_at")
    search_fields = ("session__session_id", "session__title")
    ordering = ("-created_at",)
    list_per_page = 50
    show_full_result_count = False
    actions = ["revoke"]
    fields = (
        "conversation",
        "created_by",
        "up_to_item_id",
        "show_tools",
        "created_at",
        "expires_at",
        "revoked_at",
    )
    readonly_fields = fields

    @admin.display(description=_("conversation"))
    def conversation(self, link: SharedLink) -> SafeString:
        return conversation_link(link.session_id, link.session.title or link.session.session_id)

    @admin.display(description=_("up to item"))
    def snapshot(self, link: SharedLink) -> str:
        return str(_("follows")) if link.follows else str(link.up_to_item_id)

    @admin.display(description=_("live"), boolean=True)
    def live(self, link: SharedLink) -> bool:
        return link.is_live()

    @admin.action(description=_("Revoke the selected links"), permissions=["view"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[SharedLink]) -> None:
        count = sharing.revoke_all(queryset)
        message = ngettext("%d link revoked.", "%d links revoked.", count) % count
        self.message_user(request, message, messages.SUCCESS)
