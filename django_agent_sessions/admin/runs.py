"""The admin of run records: what each websocket run did. Read-only.

A run record is written by the worker that ran it (or by the worker that found it lost):
staff read status, agent, where it was started from (a tab, code, a schedule) and which
task worker executed it, duration, token usage and the error, follow the link to its
trace (docs/operations.md) and the one to the conversation's transcript, where a stopped
or failed run's unfinished reply is shown with its status. Nobody adds, edits or deletes
runs here.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from django_agent_sessions.admin.read_only import ReadOnly, conversation_link
from django_agent_sessions.models import AgentRun, RunOrder
from django_agent_sessions.telemetry import settings as telemetry
from django_agent_sessions.usage.counts import COUNTS


@admin.register(AgentRun)
class AgentRunAdmin(ReadOnly, admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = [
        "run_id",
        "status",
        "agent_name",
        "model",
        "conversation",
        "started_from",
        "started_at",
        "duration",
        "total_tokens",
        "error_code",
    ]
    list_filter = [
        "status",
        "order__origin",
        "model",
        "error_code",
        "started_at",
    ]
    search_fields = ["run_id", "session__session_id", "agent_name", "trace_id"]
    list_select_related = ["session", "order"]
    date_hierarchy = "started_at"

    def get_queryset(self, request: HttpRequest) -> QuerySet[AgentRun]:
        # A temporary chat's runs go with it, unseen (store.temporary).
        runs: QuerySet[AgentRun] = super().get_queryset(request).exclude(session__temporary=True)
        return runs

    ordering = ["-started_at"]
    fields = (
        "run_id",
        "conversation",
        "started_from",
        "executed_by",
        "status",
        "agent_name",
        "model",
        "started_at",
        "finished_at",
        "duration",
        *COUNTS,
        "error_code",
        "error",
        "partial_text",
        "client_id",
        "trace",
    )
    readonly_fields = fields

    @admin.display(description=_("conversation"), ordering="session__session_id")
    def conversation(self, run: AgentRun) -> str:
        return conversation_link(run.session_id, run.session.session_id)

    @admin.display(description=_("started from"), ordering="order__origin")
    def started_from(self, run: AgentRun) -> str:
        """A tab, unless its order says code or a schedule (a run of a tab executed in
        its web worker has no order)."""
        order = _order_of(run)
        return str(_("a tab") if order is None else order.get_origin_display())

    @admin.display(description=_("executed by"))
    def executed_by(self, run: AgentRun) -> str:
        """The task worker that claimed its last execution; empty for a web worker."""
        order = _order_of(run)
        return order.claimed_by if order is not None and order.claimed_by != "stop" else "-"

    @admin.display(description=_("trace id"), ordering="trace_id")
    def trace(self, run: AgentRun) -> str:
        """The run's OpenTelemetry trace: a link when ``TELEMETRY["TRACE_URL"]`` is set."""
        if not run.trace_id:
            return str(self.get_empty_value_display())
        url = telemetry.trace_url(run.trace_id)
        return format_html('<a href="{}">{}</a>', url, run.trace_id) if url else run.trace_id

    @admin.display(description=_("duration"))
    def duration(self, run: AgentRun) -> str:
        if run.finished_at is None:
            return str(self.get_empty_value_display())
        seconds = (run.finished_at - run.started_at).total_seconds()
        return _("%(seconds).1f s") % {"seconds": seconds}


def _order_of(run: AgentRun) -> RunOrder | None:
    try:
        return run.order
    except RunOrder.DoesNotExist:
        return None
