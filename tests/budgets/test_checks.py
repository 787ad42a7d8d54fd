"""The system checks of QUOTAS and PRICES: each mistake named, with its id and a hint."""

from __future__ import annotations

import pytest
from django.test import override_settings

from django_agent_sessions.budgets.checks import check_budgets

GOOD = {
    "QUOTAS": {
        "TOKENS_PER_DAY": 100_000,
        "TOKENS_PER_MONTH": None,
        "MODELS": {"gpt-4.1": {"TOKENS_PER_DAY": 0}},
        "EXEMPT_STAFF": False,
        "RUN_TOKENS": 50_000,
        "SHOW_REMAINING": True,
    },
    "PRICES": {"gpt-4.1": {"input": "2.00", "cached_input": 0.5, "output": 8}},
}


def test_good_settings_and_none_pass():
    with override_settings(AGENT_SESSIONS=GOOD):
        assert check_budgets() == []
    with override_settings(AGENT_SESSIONS={}):
        assert check_budgets() == []


@pytest.mark.parametrize(
    ("setting", "code", "named"),
    [
        ({"QUOTAS": 1000}, "E080", "must be a dict"),
        ({"QUOTAS": {"TOKENS_PER_WEEK": 5}}, "E080", "'TOKENS_PER_WEEK'"),
        ({"QUOTAS": {"TOKENS_PER_DAY": "1M"}}, "E081", "['TOKENS_PER_DAY'] is '1M'"),
        ({"QUOTAS": {"RUN_TOKENS": -1}}, "E081", "['RUN_TOKENS'] is -1"),
        ({"QUOTAS": {"TOKENS_PER_DAY": True}}, "E081", "is True"),
        ({"QUOTAS": {"MODELS": ["gpt"]}}, "E081", "['MODELS'] must be a dict"),
        ({"QUOTAS": {"MODELS": {"gpt": {"DAILY": 5}}}}, "E081", "['MODELS']['gpt'] must"),
        ({"QUOTAS": {"MODELS": {"gpt": {"TOKENS_PER_DAY": 1.5}}}}, "E081", "is 1.5"),
        ({"PRICES": ["gpt"]}, "E082", "['PRICES'] must be a dict"),
        ({"PRICES": {"gpt": {"prompt": 1}}}, "E082", "['PRICES']['gpt'] must"),
        ({"PRICES": {"gpt": {"input": "cheap"}}}, "E082", "'cheap' is not a price"),
    ],
)
def test_each_mistake_is_named(setting, code, named):
    with override_settings(AGENT_SESSIONS=setting):
        (error,) = check_budgets()
    assert error.id == f"django_agent_sessions.{code}"
    assert named in error.msg
    assert error.hint
