"""docs/operations.md's budgets and prices say what the code does: the QUOTAS block has
every key of the defaults (and no other), and both blocks pass the system checks."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from django.test import override_settings

from django_agent_sessions.budgets.checks import check_budgets
from django_agent_sessions.budgets.quotas import DEFAULTS

DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def settings_block(title: str) -> dict[str, Any]:
    section = DOC.read_text().split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    block = re.findall(r"^```python\n(.*?)^```$", section, re.S | re.M)[0]
    namespace: dict[str, Any] = {}
    exec(block, namespace)
    settings: dict[str, Any] = namespace["AGENT_SESSIONS"]
    return settings


def test_the_budgets_block_names_every_key_and_passes_the_checks() -> None:
    quotas = settings_block("Budgets")["QUOTAS"]
    assert set(quotas) == set(DEFAULTS)
    with override_settings(AGENT_SESSIONS={"QUOTAS": quotas}):
        assert check_budgets() == []


def test_the_prices_block_passes_the_checks() -> None:
    prices = settings_block("Usage and cost")["PRICES"]
    assert prices
    with override_settings(AGENT_SESSIONS={"PRICES": prices}):
        assert check_budgets() == []
