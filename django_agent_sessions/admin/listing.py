"""The conversation list's paginator and filters, and the kind of filter most are."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.paginator import Paginator
from django.db import connections
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.functional import cached_property
from django.utils.translation import gettext_lazy as _

from django_agent_sessions.store import conversations, keeping

# Above this many rows an unfiltered PostgreSQL changelist shows the planner's estimate
# instead of running COUNT(*) over the whole table.
ESTIMATE_ABOVE = 10_000


class EstimatedCountPaginator(Paginator):  # type: ignore[type-arg]
    """Counts exactly, except an unfiltered list of many rows on PostgreSQL."""

    @cached_property
    def count(self) -> int:
        rows = self.object_list
        if isinstance(rows, QuerySet) and _unfiltered(rows):
            estimate = conversations.estimated_rows(connections[rows.db], rows.model)
            if estimate is not None and estimate > ESTIMATE_ABOVE:
                return estimate
        return int(super().count)


def _unfiltered(rows: QuerySet[Any]) -> bool:
    """No filter but the list's own leaving out of temporary chats (``get_queryset``):
    they are few and short-lived, so the table's estimate still is the list's."""
    conditions = rows.query.where.children
    if not conditions:
        return True
    only = conditions[0] if len(conditions) == 1 else None
    target = getattr(getattr(only, "lhs", None), "target", None)
    return getattr(target, "name", "") == "temporary" and getattr(only, "rhs", None) is False


class EmptyOrSetFilter(admin.SimpleListFilter):
    """A filter of two choices: the rows whose ``field`` is empty (NULL), or those whose
    ``field`` is set; ``two_choices`` pairs each choice's value and label with whether it
    means empty."""

    field: str
    two_choices: tuple[tuple[str, Any, bool], ...]  # (value, label, the field is NULL)

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        return [(value, label) for value, label, _empty in self.two_choices]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        for value, _label, empty in self.two_choices:
            if self.value() == value:
                filtered: QuerySet[Any] = queryset.filter(**{f"{self.field}__isnull": empty})
                return filtered
        return queryset


class OwnerFilter(EmptyOrSetFilter):
    title = _("owner")
    parameter_name = "has_owner"
    field = "owner"
    two_choices = (("yes", _("Has an owner"), False), ("no", _("No owner"), True))


class ArchivedFilter(EmptyOrSetFilter):
    title = _("archived")
    parameter_name = "archived"
    field = "archived_at"
    two_choices = (("yes", _("Archived"), False), ("no", _("Not archived"), True))


class AgentFilter(admin.SimpleListFilter):
    """The conversations an agent ran in. Its choices are the agents of recent runs
    (``store.keeping.recent_agents``: one query, however many runs are stored)."""

    title = _("agent")
    parameter_name = "agent"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(name, name) for name in keeping.recent_agents()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        name = self.value()
        return keeping.with_agent(queryset, name) if name else queryset
