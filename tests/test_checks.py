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


# Websocket streaming settings -------------------------------------------------------


@pytest.mark.parametrize(
    ("settings_value", "check_id"),
    [
        ({"AGENT": "tests.chat_agent.no_such_thing"}, "E010"),
        ({"AGENT": "tests.chat_agent.tool_users"}, "E010"),
        ({"RATE_LIMIT": "lots"}, "E011"),
        ({"RATE_LIMIT": "10/week"}, "E011"),
        ({"DELTA_FLUSH_SECONDS": 0}, "E012"),
        ({"RUN_LEASE_SECONDS": "60"}, "E012"),
        ({"CONTINUE_RUNS_AFTER_DISCONNECT": "yes"}, "E013"),
        ({"MAX_RUN_BYTES": -1}, "E003"),
        ({"DELTA_FLUSH_BYTES": None}, "E003"),
        ({"APPROVAL_TIMEOUT": "forever"}, "E040"),
        ({"APPROVAL_TIMEOUT": 3600}, "E040"),
        ({"APPROVAL_TIMEOUT": "0s"}, "E040"),
    ],
)
def test_bad_streaming_settings_are_errors(settings, settings_value, check_id):
    settings.AGENT_SESSIONS = settings_value
    assert [m.id for m in check_settings()] == [f"django_agent_sessions.{check_id}"]


def test_a_valid_streaming_configuration_passes(settings):
    settings.AGENT_SESSIONS = {
        "AGENT": "tests.chat_agent.make_agent",
        "RATE_LIMIT": "5/s",
        "MAX_RUN_BYTES": None,
        "CONTINUE_RUNS_AFTER_DISCONNECT": True,
        "APPROVAL_TIMEOUT": "15m",
    }
    assert check_settings() == []


def test_websocket_deployment_warnings(settings):
    settings.AGENT_SESSIONS = {"AGENT": "tests.chat_agent.make_agent"}
    settings.ALLOWED_HOSTS = ["*"]
    settings.CHANNEL_LAYERS = {}
    assert [m.id for m in check_settings()] == [
        "django_agent_sessions.W010",
        "django_agent_sessions.W011",
    ]


def test_redis_layers_without_a_read_timeout_setting_warn(settings):
    import redis

    settings.AGENT_SESSIONS = {"AGENT": "tests.chat_agent.make_agent"}
    layer = {"BACKEND": "channels_redis.core.RedisChannelLayer"}
    settings.CHANNEL_LAYERS = {"default": {**layer, "CONFIG": {"hosts": ["redis://x:6379"]}}}
    expected = ["django_agent_sessions.W012"] if int(redis.__version__.split(".")[0]) >= 8 else []
    assert [m.id for m in check_settings()] == expected
    settings.CHANNEL_LAYERS = {
        "default": {
            **layer,
            "CONFIG": {"hosts": [{"address": "redis://x:6379", "socket_timeout": None}]},
        }
    }
    assert check_settings() == []
