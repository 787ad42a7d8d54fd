"""``conf.app_settings``: defaults, the project's values, and ``override_settings``."""

from __future__ import annotations

import pytest
from django.test import override_settings

from django_agent_sessions.conf import DEFAULTS, app_settings


def test_a_value_is_read_once_and_kept():
    app_settings.forget()
    assert DEFAULTS["MAX_ITEM_DEPTH"] == app_settings.MAX_ITEM_DEPTH
    assert app_settings.__dict__["MAX_ITEM_DEPTH"] == DEFAULTS["MAX_ITEM_DEPTH"]


def test_override_settings_replaces_a_kept_value_and_restores_it():
    before = app_settings.MAX_ITEM_BYTES  # kept
    with override_settings(AGENT_SESSIONS={"MAX_ITEM_BYTES": 123}):
        assert app_settings.MAX_ITEM_BYTES == 123
        assert DEFAULTS["MAX_ITEM_DEPTH"] == app_settings.MAX_ITEM_DEPTH
    assert before == app_settings.MAX_ITEM_BYTES


def test_other_settings_changing_keep_the_values(settings):
    assert DEFAULTS["MAX_ITEM_DEPTH"] == app_settings.MAX_ITEM_DEPTH
    settings.USE_I18N = not settings.USE_I18N
    assert "MAX_ITEM_DEPTH" in app_settings.__dict__


def test_the_pytest_settings_fixture_is_seen(settings):
    assert DEFAULTS["RATE_LIMIT"] == app_settings.RATE_LIMIT
    settings.AGENT_SESSIONS = {"RATE_LIMIT": None}
    assert app_settings.RATE_LIMIT is None


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="Unknown AGENT_SESSIONS setting: 'NOPE'"):
        app_settings.NOPE  # noqa: B018
