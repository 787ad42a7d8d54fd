"""The conversation list's paginator and filter."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.paginator import Paginator
from django.db import connections
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.functional import cached_property
from django.utils.translation import gettext_lazy as _

from django_agent_sessions.store import conversations

# Above this many rows an unfiltered PostgreSQL changelist shows the planner's estimate
# instead of running COUNT(*) over the whole table.
ESTIMATE_ABOVE = 10_000


class EstimatedCountPaginator(Paginator):  # type: ignore[type-arg]
    """Counts exactly, except an unfiltered list of many rows on PostgreSQL."""

    @cached_property
    def count(self) -> int:
        rows = self.object_list
        if isinstance(rows, QuerySet) and not rows.query.where:
            estimate = conversations.estimated_rows(connections[rows.db], rows.model)
            if estimate is not None and estimate > ESTIMATE_ABOVE:
                return estimate
        return int(super().count)


class OwnerFilter(admin.SimpleListFilter):
    title = _("owner")
    parameter_name = "has_owner"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        return [("yes", _("Has an owner")), ("no", _("No owner"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        choice = self.value()
        if choice in {"yes", "no"}:
            filtered: QuerySet[Any] = queryset.filter(owner__isnull=choice == "no")
            return filtered
        return queryset
