"""``ToolApprovalAdmin``: tool calls that waited for a person, and how they were decided.

Read-only: staff see which calls are pending and who decided the others, when; deciding
is the conversation owner's, in the chat (only the owner may decide).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from django_agent_sessions.admin.listing import EmptyOrSetFilter
from django_agent_sessions.admin.read_only import ReadOnly
from django_agent_sessions.models import ToolApproval

if TYPE_CHECKING:
    _ModelAdmin = admin.ModelAdmin[ToolApproval]
else:  # ModelAdmin is generic only in django-stubs.
    _ModelAdmin = admin.ModelAdmin


class PendingFilter(EmptyOrSetFilter):
    title = _("state")
    parameter_name = "state"
    field = "decision"
    two_choices = (("pending", _("pending"), True), ("decided", _("decided"), False))


@admin.register(ToolApproval)
class ToolApprovalAdmin(ReadOnly, _ModelAdmin):
    list_display = (
        "name",
        "conversation",
        "state",
        "decided_by",
        "requested_at",
        "decided_at",
    )
    list_select_related = ("run__session", "decided_by")
    list_filter = (PendingFilter, "decision", "reason")
    search_fields = ("call_id", "name", "run__session__session_id")
    ordering = ("-requested_at",)
    list_per_page = 50
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    fields = (
        "conversation",
        "run_id_display",
        "name",
        "description",
        "call_id",
        "arguments",
        "state",
        "message",
        "decided_by",
        "requested_at",
        "decided_at",
    )
    readonly_fields = fields

    @admin.display(description=_("conversation"), ordering="run__session__session_id")
    def conversation(self, obj: ToolApproval) -> str:
        return str(obj.run.session.session_id)

    @admin.display(description=_("run"))
    def run_id_display(self, obj: ToolApproval) -> str:
        return f"{obj.run.run_id} ({obj.run.get_status_display()})"

    @admin.display(description=_("decision"), ordering="decision")
    def state(self, obj: ToolApproval) -> str:
        if obj.decision is None:
            return str(_("pending"))
        decision = str(obj.get_decision_display())
        return f"{decision} ({obj.get_reason_display()})" if obj.reason else decision
