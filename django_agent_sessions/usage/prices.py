"""What tokens cost: ``AGENT_SESSIONS["PRICES"]``, per model, in one currency.

``{"gpt-4.1": {"input": "2.00", "cached_input": "0.50", "output": "8.00"}}``: the price
of a million tokens of each kind (strings or numbers; Decimal keeps cents exact). Cached
input tokens are part of the input tokens; they cost ``cached_input`` instead of
``input`` when it is given. Reasoning tokens are part of the output tokens. A model
without a price has no cost (None), which the usage page shows as a dash: no price is
guessed, none is set by default.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from django_agent_sessions.conf import app_settings

MILLION = Decimal(1_000_000)
KINDS = ("input", "cached_input", "output")


def price_table() -> Mapping[str, Mapping[str, Any]]:
    table = app_settings.PRICES
    return table if isinstance(table, Mapping) else {}


def price(value: Any) -> Decimal:
    """A price as Decimal; ValueError names a value that is not a number."""
    try:
        result = Decimal(str(value))
    except InvalidOperation:
        raise ValueError(f"{value!r} is not a price (a number, e.g. '2.50').") from None
    if not result.is_finite() or result < 0:
        raise ValueError(f"{value!r} is not a price (a number, e.g. '2.50').")
    return result


def cost(
    model: str, *, input_tokens: int, cached_tokens: int, output_tokens: int
) -> Decimal | None:
    """What a model's tokens cost, or None when the model has no price."""
    prices = price_table().get(model)
    if not prices:
        return None
    per_input = price(prices.get("input", 0))
    per_cached = price(prices["cached_input"]) if "cached_input" in prices else per_input
    per_output = price(prices.get("output", 0))
    cached = min(cached_tokens, input_tokens)
    total = (input_tokens - cached) * per_input + cached * per_cached + output_tokens * per_output
    return total / MILLION
