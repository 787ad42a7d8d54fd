"""What the chat page shows of a person's token budget (``QUOTAS["SHOW_REMAINING"]``):
rendered with the page, and read again after each reply (``budget.js``), so the runs of
every tab and worker count."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, JsonResponse
from django.utils import formats, timezone
from django.views.decorators.http import require_GET

from django_agent_sessions.budgets import quotas


def budget_of(user: Any) -> dict[str, Any] | None:
    """The tokens left of the person's tightest budget and when it refills; None when
    the page shows nothing (not asked for, no budget, exempt)."""
    if not quotas.setting("SHOW_REMAINING"):
        return None
    # The budgets of every model: the agent (and so its model) is built per conversation.
    standing = async_to_sync(quotas.standing)(user, "")
    if standing.remaining is None:
        return None
    resets = "" if standing.resets_at is None else timezone.localtime(standing.resets_at)
    return {
        "remaining": max(0, standing.remaining),
        "resets": formats.date_format(resets, "SHORT_DATETIME_FORMAT") if resets else "",
    }


@require_GET
@login_required
def budget(request: HttpRequest) -> JsonResponse:
    """The budget line's data; ``{}`` when there is none to show."""
    return JsonResponse(budget_of(request.user) or {})
