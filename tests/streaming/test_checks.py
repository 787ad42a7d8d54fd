"""System checks of the streaming settings and of the websocket deployment."""

from __future__ import annotations

import pytest

from django_agent_sessions.conf import transports
from django_agent_sessions.streaming import checks
from django_agent_sessions.streaming.checks import check_streaming_settings


@pytest.mark.parametrize(
    ("settings_value", "check_id"),
    [
        ({"AGENT": "tests.chat_agent.no_such_thing"}, "E010"),
        ({"AGENT": "tests.chat_agent.tool_users"}, "E010"),
        ({"RATE_LIMIT": "lots"}, "E011"),
        ({"RATE_LIMIT": "10/week"}, "E011"),
        ({"DELTA_FLUSH_SECONDS": 0}, "E012"),
        ({"RUN_LEASE_SECONDS": "60"}, "E012"),
        ({"PRESENCE_TIMEOUT_SECONDS": -1}, "E012"),
        ({"SWEEP_SECONDS": True}, "E012"),
        ({"TITLE_WAIT_SECONDS": 0}, "E012"),
        ({"CONTINUE_RUNS_AFTER_DISCONNECT": "yes"}, "E013"),
        ({"SWEEP_IN_WORKERS": 1}, "E013"),
        ({"MAX_RUN_BYTES": -1}, "E003"),
        ({"DELTA_FLUSH_BYTES": None}, "E003"),
        ({"APPROVAL_TIMEOUT": "forever"}, "E040"),
        ({"APPROVAL_TIMEOUT": 3600}, "E040"),
        ({"APPROVAL_TIMEOUT": "0s"}, "E040"),
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
        "APPROVAL_TIMEOUT": "15min",
    }
    assert check_streaming_settings() == []


def test_websocket_deployment_warnings(settings):
    settings.AGENT_SESSIONS = {"AGENT": "tests.chat_agent.make_agent", "TRANSPORT": "websocket"}
    settings.ALLOWED_HOSTS = ["*"]
    settings.CHANNEL_LAYERS = {}
    assert [m.id for m in check_streaming_settings()] == [
        "django_agent_sessions.W010",
        "django_agent_sessions.W011",
    ]


def test_without_channel_layers_the_chat_uses_sse_and_its_wiring_is_not_checked(settings):
    settings.AGENT_SESSIONS = {"AGENT": "tests.chat_agent.make_agent"}
    settings.CHANNEL_LAYERS = {}
    settings.INSTALLED_APPS = [app for app in settings.INSTALLED_APPS if app != "channels"]
    del settings.ASGI_APPLICATION
    assert transports.chat_transport() == "sse"
    assert check_streaming_settings() == []


@pytest.mark.parametrize("transport", ["ws", "", 1])
def test_an_unknown_transport_is_an_error(settings, transport):
    settings.AGENT_SESSIONS = {"TRANSPORT": transport}
    assert [m.id for m in check_streaming_settings()] == ["django_agent_sessions.E019"]


def test_the_websocket_transport_without_channels_says_what_to_install(settings, monkeypatch):
    settings.AGENT_SESSIONS = {"TRANSPORT": "websocket"}
    monkeypatch.setattr(checks, "channels_installed", lambda: False)
    [error] = check_streaming_settings()
    assert error.id == "django_agent_sessions.E020"
    assert "django-agent-sessions[websocket]" in error.hint


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


def test_a_rate_limit_in_a_per_process_cache_with_a_shared_layer_warns(settings):
    from django_agent_sessions.streaming.checks import _check_rate_limit_cache

    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer"}}
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    settings.AGENT_SESSIONS = {"RATE_LIMIT": "30/m"}
    assert [m.id for m in _check_rate_limit_cache()] == ["django_agent_sessions.W013"]
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": ""}
    }
    assert _check_rate_limit_cache() == []
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    settings.AGENT_SESSIONS = {"RATE_LIMIT": None}
    assert _check_rate_limit_cache() == []
    settings.AGENT_SESSIONS = {"RATE_LIMIT": "30/m"}
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    assert _check_rate_limit_cache() == []


AGENT = {"AGENT": "tests.chat_agent.make_agent"}


def ids(messages) -> list[str]:
    return [m.id.removeprefix("django_agent_sessions.") for m in messages]


def test_agent_without_an_asgi_application_is_an_error(settings):
    settings.AGENT_SESSIONS = AGENT
    del settings.ASGI_APPLICATION
    messages = check_streaming_settings()
    assert ids(messages) == ["E014"]
    assert "404" in messages[0].msg


def test_channels_and_daphne_must_be_installed_and_daphne_first(settings):
    settings.AGENT_SESSIONS = AGENT
    apps = [a for a in settings.INSTALLED_APPS if a not in {"daphne", "channels"}]
    settings.INSTALLED_APPS = apps
    assert ids(check_streaming_settings()) == ["E015", "W014"]
    settings.INSTALLED_APPS = [*apps, "channels", "daphne"]  # appended: after staticfiles
    messages = check_streaming_settings()
    assert ids(messages) == ["E016"]
    assert '["daphne", *INSTALLED_APPS' in messages[0].hint
    settings.INSTALLED_APPS = ["daphne", *apps, "channels"]
    assert check_streaming_settings() == []


def test_a_channel_layer_that_cannot_be_imported_is_an_error(settings):
    settings.AGENT_SESSIONS = AGENT
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "not_installed_redis.core.Layer"}}
    messages = check_streaming_settings()
    assert ids(messages) == ["E017"]
    assert "django-agent-sessions[redis]" in messages[0].hint


def test_wiring_is_not_checked_without_an_agent(settings):
    settings.AGENT_SESSIONS = {}
    del settings.ASGI_APPLICATION
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "not_installed.Layer"}}
    assert check_streaming_settings() == []
