"""``usage.prices``: tokens to cost with PRICES, exact in Decimal; no price, no cost."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import override_settings

from django_agent_sessions.usage import prices

PRICES = {"large": {"input": "2.00", "cached_input": "0.50", "output": 8}, "flat": {"input": 1}}


@override_settings(AGENT_SESSIONS={"PRICES": PRICES})
def test_cached_input_costs_its_own_price_and_the_rest_the_input_price():
    cost = prices.cost(
        "large", input_tokens=1_000_000, cached_tokens=400_000, output_tokens=500_000
    )
    assert cost == Decimal("1.2") + Decimal("0.2") + Decimal("4")


@override_settings(AGENT_SESSIONS={"PRICES": PRICES})
def test_without_a_cached_price_cached_tokens_cost_the_input_price():
    assert prices.cost("flat", input_tokens=3, cached_tokens=2, output_tokens=10) == Decimal(
        "0.000003"
    )


@override_settings(AGENT_SESSIONS={"PRICES": PRICES})
def test_a_model_without_a_price_has_no_cost():
    assert prices.cost("unknown", input_tokens=5, cached_tokens=0, output_tokens=5) is None


def test_no_prices_by_default():
    assert prices.cost("large", input_tokens=5, cached_tokens=0, output_tokens=5) is None


@pytest.mark.parametrize("bad", ["free", "-1", "NaN", None])
def test_a_price_that_is_not_a_number_is_named(bad):
    with pytest.raises(ValueError, match="is not a price"):
        prices.price(bad)
