"""``ScheduledRunAdmin``: the runs that start by themselves (docs/schedules.md).

Unlike the records the admin only reads, a schedule is configuration: staff add, change,
disable and delete them here. A changed timing, or a schedule enabled again, starts its
series from the time of the change (unless the next firing is set by hand), so that
firings missed while it was off or timed otherwise are not caught up. "Fire now" makes
the selected schedules due: the schedulers' next pass fires them, each once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from django_agent_sessions.models import ScheduledRun
from django_agent_sessions.store import schedules

if TYPE_CHECKING:
    _ModelAdmin = admin.ModelAdmin[ScheduledRun]
else:  # ModelAdmin is generic only in django-stubs.
    _ModelAdmin = admin.ModelAdmin

RUNS_PAGE = "admin:django_agent_sessions_agentrun_changelist"
# A change of these starts the series again from the time of the change.
TIMING_FIELDS = {"every", "cron", "enabled"}
ERROR_PREVIEW_CHARS = 80


@admin.register(ScheduledRun)
class ScheduledRunAdmin(_ModelAdmin):
    list_display = (
        "name",
        "agent_path",
        "schedule",
        "owner",
        "enabled",
        "next_fire_at",
        "last_fired_at",
        "last_run",
        "last_error_start",
    )
    list_filter = ("enabled",)
    search_fields = ("name", "agent", "input")
    list_select_related = ("owner",)
    # Conversations and users can be many: their ids, never a <select> of them all.
    raw_id_fields = ("session", "owner")
    actions = ("fire_now",)
    fieldsets = (
        (None, {"fields": ("name", "agent", "input", "session", "owner", "enabled")}),
        (_("When"), {"fields": ("every", "cron", "next_fire_at")}),
        (_("Last firing"), {"fields": ("last_fired_at", "last_run", "last_error", "created_at")}),
    )
    readonly_fields = ("last_fired_at", "last_run", "last_error", "created_at")

    def save_model(self, request: HttpRequest, obj: ScheduledRun, form: Any, change: bool) -> None:
        changed = set(form.changed_data)
        if change and "next_fire_at" not in changed and changed & TIMING_FIELDS:
            obj.next_fire_at = None  # computed again on save, from now
        super().save_model(request, obj, form, change)

    @admin.display(description=_("agent"), ordering="agent")
    def agent_path(self, schedule: ScheduledRun) -> str:
        return schedule.agent or str(_("(the AGENT setting)"))

    @admin.display(description=_("schedule"))
    def schedule(self, schedule: ScheduledRun) -> str:
        return schedule.timing_text

    @admin.display(description=_("last run"), ordering="last_run_id")
    def last_run(self, schedule: ScheduledRun) -> str:
        """A link to the run in the runs' list (found by its id: runs are pruned with
        their conversations, so the schedule keeps the id, not a foreign key)."""
        if not schedule.last_run_id:
            return str(self.get_empty_value_display())
        url = f"{reverse(RUNS_PAGE)}?{urlencode({'q': schedule.last_run_id})}"
        return format_html('<a href="{}">{}</a>', url, schedule.last_run_id)

    @admin.display(description=_("last error"))
    def last_error_start(self, schedule: ScheduledRun) -> str:
        error = schedule.last_error
        return error if len(error) <= ERROR_PREVIEW_CHARS else error[:ERROR_PREVIEW_CHARS] + "…"

    @admin.action(description=_("Fire selected schedules now"), permissions=["change"])
    def fire_now(self, request: HttpRequest, queryset: QuerySet[ScheduledRun]) -> None:
        due = schedules.fire_soon(list(queryset.values_list("pk", flat=True)), timezone.now())
        self.message_user(
            request,
            ngettext(
                "%(count)d schedule is due: the schedulers' next pass fires it.",
                "%(count)d schedules are due: the schedulers' next pass fires them.",
                due,
            )
            % {"count": due},
            messages.SUCCESS if due else messages.WARNING,
        )
