"""System checks of the streaming settings and of the websocket deployment."""

from __future__ import annotations

import pytest

from django_agent_sessions.websocket.checks import check_streaming_settings


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
    ],
)
def test_bad_streaming_settings_are_errors(settings, settings_value, check_id):
    settings.AGENT_SESSIONS = settings_value
    assert [m.id for m in check_streaming_settings()] == [f"django_agent_sessions.{check_id}"]


def test_a_valid_streaming_configuration_passes(settings):
    settings.AGENT_SESSIONS = {
        "AGENT": "tests.chat_agent.make_agent",
        "RATE_LIMIT": "5/s",
        "MAX_RUN_BYTES": None,
        "CONTINUE_RUNS_AFTER_DISCONNECT": True,
    }
    assert check_streaming_settings() == []


def test_websocket_deployment_warnings(settings):
    settings.AGENT_SESSIONS = {"AGENT": "tests.chat_agent.make_agent"}
    settings.ALLOWED_HOSTS = ["*"]
    settings.CHANNEL_LAYERS = {}
    assert [m.id for m in check_streaming_settings()] == [
        "django_agent_sessions.W010",
        "django_agent_sessions.W011",
    ]


def test_redis_layers_without_a_read_timeout_setting_warn(settings):
    import redis

    settings.AGENT_SESSIONS = {"AGENT": "tests.chat_agent.make_agent"}
    layer = {"BACKEND": "channels_redis.core.RedisChannelLayer"}
    settings.CHANNEL_LAYERS = {"default": {**layer, "CONFIG": {"hosts": ["redis://x:6379"]}}}
    expected = ["django_agent_sessions.W012"] if int(redis.__version__.split(".")[0]) >= 8 else []
    assert [m.id for m in check_streaming_settings()] == expected
    settings.CHANNEL_LAYERS = {
        "default": {
            **layer,
            "CONFIG": {"hosts": [{"address": "redis://x:6379", "socket_timeout": None}]},
        }
    }
    assert check_streaming_settings() == []
