"""System checks of ``AGENT_SESSIONS["QUOTAS"]`` and ``["PRICES"]`` (ids E080-E082): the
prices are checked here, beside the budgets, as both are what runs may cost."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.checks import CheckMessage, Error

from django_agent_sessions.budgets.quotas import DEFAULTS, PERIODS
from django_agent_sessions.conf import app_settings
from django_agent_sessions.usage import prices

_ID = "django_agent_sessions"
_TOKEN_KEYS = (*PERIODS, "RUN_TOKENS")


def check_budgets(**kwargs: Any) -> list[CheckMessage]:
    if not app_settings.is_dict():
        return []
    return [*_quota_errors(app_settings.QUOTAS), *_price_errors(app_settings.PRICES)]


def _quota_errors(configured: Any) -> list[CheckMessage]:
    if configured is None:
        return []
    if not isinstance(configured, Mapping):
        return [_error("['QUOTAS']", f"must be a dict, not {type(configured).__name__}", "E080")]
    errors: list[CheckMessage] = [
        _error(
            "['QUOTAS']", f"has an unknown key {key!r}", "E080", f"Known: {', '.join(DEFAULTS)}."
        )
        for key in sorted(set(configured) - set(DEFAULTS))
    ]
    errors += _budget_errors("['QUOTAS']", configured, _TOKEN_KEYS)
    models = configured.get("MODELS") or {}
    if not isinstance(models, Mapping):
        return [*errors, _error("['QUOTAS']['MODELS']", "must be a dict of model names", "E081")]
    for model, limits in models.items():
        where = f"['QUOTAS']['MODELS'][{model!r}]"
        if not isinstance(limits, Mapping) or set(limits) - set(PERIODS):
            hint = f"For example {{'TOKENS_PER_DAY': 50000}}; keys: {', '.join(PERIODS)}."
            errors.append(_error(where, "must be a dict of budgets", "E081", hint))
        else:
            errors += _budget_errors(where, limits, PERIODS)
    return errors


def _budget_errors(where: str, limits: Mapping[str, Any], keys: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    for key in keys:
        value = limits.get(key)
        if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            continue
        problem = f"is {value!r}; it must be a whole number >= 0 or None"
        errors.append(_error(f"{where}[{key!r}]", problem, "E081"))
    return errors


def _price_errors(configured: Any) -> list[CheckMessage]:
    if configured is None:
        return []
    hint = "For example {'gpt-4.1': {'input': '2.00', 'cached_input': '0.50', 'output': '8.00'}}."
    if not isinstance(configured, Mapping):
        return [_error("['PRICES']", "must be a dict of models' prices", "E082", hint)]
    errors: list[CheckMessage] = []
    for model, table in configured.items():
        if not isinstance(table, Mapping) or set(table) - set(prices.KINDS):
            errors.append(
                _error(f"['PRICES'][{model!r}]", "must be a dict of prices", "E082", hint)
            )
            continue
        for kind, value in table.items():
            try:
                prices.price(value)
            except ValueError as error:
                errors.append(_error(f"['PRICES'][{model!r}][{kind!r}]", str(error), "E082", hint))
    return errors


def _error(where: str, problem: str, code: str, hint: str = "") -> Error:
    return Error(
        f"AGENT_SESSIONS[{where.split('[')[0]!r}]{where[len(where.split('[')[0]) :]} {problem}.",
        hint=hint or "See docs/operations.md, 'Budgets'.",
        id=f"{_ID}.{code}",
    )
