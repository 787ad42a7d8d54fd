"""Token budgets: ``AGENT_SESSIONS["QUOTAS"]``, a dict over ``DEFAULTS``.

A person's budget is checked before each run starts, against what their runs spent in
the period, read from the database (``store.usage.spent_by``), so the runs of every
worker count. The periods are calendar days and months in the project's ``TIME_ZONE``;
a run counts in the period it started in. A run that starts within the budget may
finish past it (its tokens are not known before it ends), unless it spends more than
``RUN_TOKENS``, which stops it; so a person who sends one message at a time spends at
most one run past a budget. Budgets apply to signed-in people (anonymous visitors have
``RATE_LIMIT``); staff, when ``EXEMPT_STAFF``, and holders of the permission
``django_agent_sessions.exempt_from_quotas`` have none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from django_agent_sessions.conf import app_settings
from django_agent_sessions.store.usage import spent_by

DEFAULTS: dict[str, Any] = {
    # Tokens (input and output) a person's runs may spend per calendar day / month.
    "TOKENS_PER_DAY": None,
    "TOKENS_PER_MONTH": None,
    # Budgets of one model, over the above: {"gpt-4.1": {"TOKENS_PER_DAY": 50_000}}. The
    # model is the one the conversation's agent calls (its first model call's).
    "MODELS": {},
    # Staff run without budgets.
    "EXEMPT_STAFF": True,
    # Most tokens one run may spend: past it the run is stopped (run.failed,
    # run_token_limit), its history valid. None: no ceiling.
    "RUN_TOKENS": None,
    # The chat shows the person what is left of their budget.
    "SHOW_REMAINING": False,
}
PERIODS = {"TOKENS_PER_DAY": "day", "TOKENS_PER_MONTH": "month"}
EXEMPT_PERMISSION = "django_agent_sessions.exempt_from_quotas"


def setting(name: str) -> Any:
    configured = app_settings.QUOTAS
    if isinstance(configured, Mapping) and name in configured:
        return configured[name]
    return DEFAULTS[name]


@dataclass(frozen=True)
class Budget:
    name: str  # the period and, for a model's budget, "model_" first
    limit: int
    start: datetime
    resets_at: datetime


@dataclass(frozen=True)
class Standing:
    """Where a person stands: the fewest tokens left of any budget (None: no budget) and
    when that budget refills; once budgets are spent, when the last of them refills
    (None: a budget of nothing, which never does)."""

    remaining: int | None = None
    resets_at: datetime | None = None

    @property
    def exceeded(self) -> bool:
        return self.remaining is not None and self.remaining <= 0


UNLIMITED = Standing()


def period(kind: str, now: datetime) -> tuple[datetime, datetime]:
    """The local calendar day or month around ``now``: its start and its end."""
    local = timezone.localtime(now)
    start = local.replace(hour=0, minute=0, second=0, microsecond=0)
    if kind == "month":
        start = start.replace(day=1)
    # Wall-clock arithmetic: the next local midnight, whatever a DST change does.
    end = (
        start + timedelta(days=1) if kind == "day" else (start + timedelta(days=32)).replace(day=1)
    )
    return start, end


def budgets(limits: Mapping[str, Any], now: datetime, prefix: str = "") -> list[Budget]:
    found = []
    for key, kind in PERIODS.items():
        if limits.get(key) is not None:
            start, end = period(kind, now)
            found.append(Budget(prefix + kind, int(limits[key]), start, end))
    return found


async def exempt(user: Any) -> bool:
    if user is None or not user.is_authenticated:
        return True
    if setting("EXEMPT_STAFF") and user.is_staff:
        return True
    return bool(await user.ahas_perm(EXEMPT_PERMISSION))


async def standing(user: Any, model: str, now: datetime | None = None) -> Standing:
    """Where ``user`` stands with the budgets of ``model`` (and of every model)."""
    now = now or timezone.now()
    model_limits = (setting("MODELS") or {}).get(model) or {}
    every, of_model = budgets(_limits(), now), budgets(model_limits, now, "model_")
    if not (every or of_model) or await exempt(user):
        return UNLIMITED
    spent, spent_on_model = await spent_by(
        user.pk,
        {budget.name: budget.start for budget in every},
        model=model,
        model_since={budget.name: budget.start for budget in of_model},
    )
    spent |= spent_on_model
    left = {budget: budget.limit - spent[budget.name] for budget in (*every, *of_model)}
    tightest = min(left, key=lambda budget: left[budget])
    exhausted = [budget for budget, tokens in left.items() if tokens <= 0]
    if not exhausted:
        return Standing(left[tightest], tightest.resets_at)
    if any(budget.limit <= 0 for budget in exhausted):  # a budget of nothing never refills
        return Standing(left[tightest], None)
    return Standing(left[tightest], max(budget.resets_at for budget in exhausted))


def _limits() -> dict[str, Any]:
    return {key: setting(key) for key in PERIODS}
