"""The usage page: runs, requests, tokens and cost per day, user or model, for staff who may
view runs.

It takes the place of the ``RunModelUsage`` changelist, so the admin index links to it
(and the run list's tools do too); there is nothing else to see of those rows here. The
figures come from ``store.usage_report`` (no ORM here), the cells from ``usage_table``
(the page and its CSV export are the same cells) and the chart from ``usage_chart``.
"""

from __future__ import annotations

import csv
from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from django_agent_sessions.admin.read_only import ReadOnly
from django_agent_sessions.admin.usage_chart import chart
from django_agent_sessions.admin.usage_table import table
from django_agent_sessions.models import RunModelUsage
from django_agent_sessions.store import usage_report
from django_agent_sessions.store.usage_report import Filters, Group

VIEW_RUNS = ("django_agent_sessions.view_agentrun", "django_agent_sessions.change_agentrun")
TEMPLATE = "admin/django_agent_sessions/usage.html"


class UsageForm(forms.Form):
    """The page's filters, from the query string; a missing date is the default range's."""

    start = forms.DateField(
        label=_("From"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
    )
    end = forms.DateField(
        label=_("To"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
    )
    group = forms.ChoiceField(
        label=_("Group by"),
        required=False,
        choices=[("day", _("day")), ("user", _("user")), ("model", _("model"))],
    )
    user = forms.CharField(label=_("User"), required=False, max_length=255)
    model = forms.CharField(
        label=_("Model"),
        required=False,
        max_length=255,
        widget=forms.TextInput(attrs={"list": "usage-models"}),
    )

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        default = Filters.default()
        cleaned["start"] = cleaned.get("start") or default.start
        cleaned["end"] = cleaned.get("end") or default.end
        cleaned["group"] = cleaned.get("group") or "day"
        if cleaned["start"] > cleaned["end"]:
            raise forms.ValidationError(gettext("The first day is after the last."))
        return cleaned

    def filters(self) -> Filters:
        data = self.cleaned_data
        return Filters(
            start=data["start"],
            end=data["end"],
            user=data.get("user", "").strip(),
            model=data.get("model", "").strip(),
        )

    def grouping(self) -> Group:
        group: Group = self.cleaned_data["group"]
        return group

    def query(self, **changes: str) -> str:
        """The query string of these filters (explicit dates), with ``changes``."""
        filters = self.filters()
        values = {
            "start": filters.start.isoformat(),
            "end": filters.end.isoformat(),
            "group": self.grouping(),
            "user": filters.user,
            "model": filters.model,
            **changes,
        }
        return urlencode({name: value for name, value in values.items() if value})


@admin.register(RunModelUsage)
class UsageAdmin(ReadOnly, admin.ModelAdmin):  # type: ignore[type-arg]
    """The usage page, in place of the per-model rows' changelist."""

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return any(request.user.has_perm(permission) for permission in VIEW_RUNS)

    def get_urls(self) -> list[URLPattern]:
        name = f"{self.opts.app_label}_{self.opts.model_name}"
        return [
            path("", self.admin_site.admin_view(self.usage_view), name=f"{name}_changelist"),
            path("csv/", self.admin_site.admin_view(self.csv_view), name=f"{name}_csv"),
        ]

    def usage_view(self, request: HttpRequest) -> HttpResponse:
        form = self._form(request)
        context: dict[str, Any] = {
            **self.admin_site.each_context(request),
            "title": gettext("Usage"),
            "opts": self.opts,
            "form": form,
            "runs_url": reverse("admin:django_agent_sessions_agentrun_changelist"),
            "time_zone": timezone.get_current_timezone_name(),
        }
        if form.is_valid():
            filters, group = form.filters(), form.grouping()
            report = usage_report.report(filters, group)
            days = report if group == "day" else usage_report.report(filters, "day")
            shown = table(report)
            captions = {
                "day": gettext("Usage per day"),
                "user": gettext("Usage per user"),
                "model": gettext("Usage per model"),
            }
            context.update(
                table=shown,
                caption=captions[group],
                # A user's or a model's row links to its days.
                lines=[
                    (line, line.narrows and "?" + form.query(group="day", **dict([line.narrows])))
                    for line in shown.lines
                ],
                chart=chart(days),
                models=sorted(model for model in report.total.models if model),
                csv_url=f"{reverse('admin:' + self._name('csv'))}?{form.query()}",
            )
        return TemplateResponse(request, TEMPLATE, context)

    def csv_view(self, request: HttpRequest) -> HttpResponse:
        form = self._form(request)
        if not form.is_valid():
            return HttpResponseBadRequest(form.errors.as_text(), content_type="text/plain")
        filters, group = form.filters(), form.grouping()
        shown = table(usage_report.report(filters, group))
        name = f"usage-{filters.start.isoformat()}-{filters.end.isoformat()}-{group}.csv"
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        writer = csv.writer(response)
        writer.writerow(shown.header)
        writer.writerows(line.cells for line in shown.lines)
        writer.writerow(shown.total)
        return response

    def _form(self, request: HttpRequest) -> UsageForm:
        if not self.has_view_permission(request):
            raise PermissionDenied
        # What is not given is the default's, shown in the form as it is used.
        data = request.GET.copy()
        default = Filters.default()
        for name, value in (("start", default.start), ("end", default.end), ("group", "day")):
            if not data.get(name):
                data[name] = str(value)
        return UsageForm(data=data)

    def _name(self, view: str) -> str:
        return f"{self.opts.app_label}_{self.opts.model_name}_{view}"
