from __future__ import annotations

import pytest
from django.conf import settings
from django.test import override_settings

from django_agent_sessions.checks import check_databases, check_settings, database_messages


def ids(messages) -> list[str]:
    return [message.id for message in messages]


def sqlite(options: dict) -> list:
    config = {"ENGINE": "django.db.backends.sqlite3", "NAME": "x", "OPTIONS": options}
    return database_messages("default", config)


def test_the_test_settings_pass():
    assert check_settings() == []
    assert check_databases() == []


@pytest.mark.parametrize("options", [{}, {"transaction_mode": "DEFERRED"}])
def test_sqlite_without_immediate_mode_warns(options):
    (warning,) = sqlite(options)
    assert warning.id == "django_agent_sessions.W001"
    assert "database is locked" in warning.hint


def test_sqlite_with_immediate_mode_is_fine():
    assert sqlite({"transaction_mode": "immediate"}) == []


def test_unsupported_database_warns():
    config = {"ENGINE": "django.db.backends.mysql", "NAME": "x"}
    assert ids(database_messages("other", config)) == ["django_agent_sessions.W002"]


def test_postgresql_is_fine():
    config = {"ENGINE": "django.db.backends.postgresql", "NAME": "x"}
    assert database_messages("default", config) == []


def test_settings_must_be_a_dict():
    with override_settings(AGENT_SESSIONS=["AGENT"]):
        assert ids(check_settings()) == ["django_agent_sessions.E001"]


def test_unknown_keys_are_errors():
    with override_settings(AGENT_SESSIONS={"MAX_ITEMS_BYTES": 10}):
        (error,) = check_settings()
    assert error.id == "django_agent_sessions.E002"
    assert "'MAX_ITEMS_BYTES'" in error.msg
    assert "MAX_ITEM_BYTES" in error.hint


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("MAX_ITEM_BYTES", 0),
        ("MAX_ITEM_BYTES", "1MB"),
        ("MAX_ITEM_DEPTH", None),
        ("MAX_MESSAGE_BYTES", True),
        ("MAX_ITEM_DEPTH", -3),
    ],
)
def test_limits_must_be_positive_ints(key, value):
    with override_settings(AGENT_SESSIONS={key: value}):
        (error,) = check_settings()
    assert error.id == "django_agent_sessions.E003"
    assert key in error.msg


def test_max_item_bytes_may_be_none():
    with override_settings(AGENT_SESSIONS={"MAX_ITEM_BYTES": None}):
        assert check_settings() == []


def test_settings_are_read_lazily():
    from django_agent_sessions.conf import app_settings

    assert app_settings.MAX_ITEM_DEPTH == 100
    with override_settings(AGENT_SESSIONS={"MAX_ITEM_DEPTH": 7}):
        assert app_settings.MAX_ITEM_DEPTH == 7
    with pytest.raises(AttributeError, match="Unknown AGENT_SESSIONS setting"):
        _ = app_settings.NOT_A_SETTING
    assert settings.AGENT_SESSIONS == {}


@pytest.mark.parametrize("value", ["off", {"ENABLED": "false"}, {"ENABLE": False}, {"ENABLED": 0}])
def test_search_setting_is_checked(value):
    with override_settings(AGENT_SESSIONS={"SEARCH": value}):
        assert ids(check_settings()) == ["django_agent_sessions.E031"]


@pytest.mark.parametrize("value", [None, {}, {"ENABLED": False}, {"TOOL_OUTPUTS": True}])
def test_valid_search_settings_pass(value):
    with override_settings(AGENT_SESSIONS={"SEARCH": value}):
        assert check_settings() == []
