"""The example project's settings, read from the environment (imported in a subprocess,
so that each case starts from a clean module and environment)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from example_project.tests.servers import REPO_ROOT

SHOW = """
import json, example_project.settings as s
print(json.dumps({
    "debug": s.DEBUG, "hosts": s.ALLOWED_HOSTS, "secret": s.SECRET_KEY,
    "db": {k: str(v) for k, v in s.DATABASES["default"].items() if k in ("ENGINE", "NAME",
          "USER", "PASSWORD", "HOST", "PORT", "OPTIONS", "CONN_MAX_AGE",
          "CONN_HEALTH_CHECKS")},
    "layer": s.CHANNEL_LAYERS["default"], "agent": s.AGENT_SESSIONS["AGENT"],
    "apps": s.INSTALLED_APPS, "secure": s.SESSION_COOKIE_SECURE,
}))
"""

CLEARED = {
    "DATABASE_URL",
    "REDIS_URL",
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "SECURE_COOKIES",
    "CONN_MAX_AGE",
    "CHANNEL_LAYER",
}


def settings_with(**env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in CLEARED}
    return subprocess.run(
        [sys.executable, "-c", SHOW],
        cwd=REPO_ROOT,
        env={**base, "PYTHONPATH": str(REPO_ROOT), **env},
        capture_output=True,
        text=True,
        check=False,
    )


def read(**env: str) -> dict:
    done = settings_with(**env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_defaults_are_a_local_development_site():
    values = read()
    assert values["debug"] is True
    assert values["hosts"] == ["127.0.0.1", "localhost"]
    assert values["db"]["ENGINE"] == "django.db.backends.sqlite3"
    assert values["db"]["NAME"].endswith("db.sqlite3")
    assert "'transaction_mode': 'IMMEDIATE'" in values["db"]["OPTIONS"]
    assert "journal_mode=WAL" in values["db"]["OPTIONS"]
    assert values["layer"] == {"BACKEND": "channels.layers.InMemoryChannelLayer"}
    assert values["apps"][0] == "daphne"
    assert values["agent"] == "example_project.agent.build_agent"


def test_production_mode_from_the_environment():
    values = read(
        DATABASE_URL="postgres://chat:p%40ss@db.internal:6543/chat",
        REDIS_URL="redis://cache.internal:6379/2",
        DEBUG="0",
        SECRET_KEY="s3cret",
        ALLOWED_HOSTS="chat.example.com, www.chat.example.com",
    )
    assert values["debug"] is False
    assert values["secret"] == "s3cret"
    assert values["hosts"] == ["chat.example.com", "www.chat.example.com"]
    assert values["secure"] is True
    db = values["db"]
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["NAME"], db["USER"], db["PASSWORD"]) == ("chat", "chat", "p@ss")
    assert (db["HOST"], db["PORT"]) == ("db.internal", "6543")
    assert (db["CONN_MAX_AGE"], db["CONN_HEALTH_CHECKS"]) == ("600", "True")
    assert values["layer"] == {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            "hosts": [
                {
                    "address": "redis://cache.internal:6379/2",
                    "socket_timeout": None,
                    "max_connections": 1000,
                }
            ],
            "capacity": 10_000,
            "prefix": "asgi",
        },
    }


def test_the_pub_sub_layer_is_one_variable_away():
    values = read(REDIS_URL="redis://cache.internal:6379/2", CHANNEL_LAYER="pubsub")
    assert values["layer"] == {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
        "CONFIG": {
            "hosts": [{"address": "redis://cache.internal:6379/2", "socket_timeout": None}],
            "prefix": "asgi",
        },
    }


def test_sqlite_database_urls_keep_the_locking_options():
    values = read(DATABASE_URL="sqlite:////tmp/elsewhere.sqlite3")
    assert values["db"]["NAME"] == "/tmp/elsewhere.sqlite3"
    assert "'transaction_mode': 'IMMEDIATE'" in values["db"]["OPTIONS"]


def test_connection_age_is_configurable():
    values = read(DATABASE_URL="postgres://chat@db/chat", CONN_MAX_AGE="0")
    assert values["db"]["CONN_MAX_AGE"] == "0"
    done = settings_with(DATABASE_URL="postgres://chat@db/chat", CONN_MAX_AGE="soon")
    assert done.returncode != 0
    assert "CONN_MAX_AGE must be a whole number of seconds, not 'soon'" in done.stderr


def test_bad_values_are_refused_by_name():
    done = settings_with(DEBUG="0")
    assert done.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in done.stderr
    done = settings_with(DEBUG="maybe")
    assert done.returncode != 0
    assert "DEBUG must be 1/0, true/false, yes/no or on/off, not 'maybe'" in done.stderr
