"""``AGENT_SESSIONS["TELEMETRY"]`` read on use, merged over the defaults
(``telemetry/settings.py``)."""

from __future__ import annotations

from django_agent_sessions.telemetry import settings as telemetry_settings
from django_agent_sessions.telemetry.settings import DEFAULTS


def test_without_the_setting_the_defaults_hold(settings):
    settings.AGENT_SESSIONS = {}
    assert telemetry_settings.options() == DEFAULTS
    assert telemetry_settings.enabled() is True
    assert telemetry_settings.trace_messages() is False
    assert telemetry_settings.trace_url("abc") is None


def test_the_setting_is_merged_over_the_defaults_and_read_again_when_it_changes(settings):
    settings.AGENT_SESSIONS = {"TELEMETRY": {"TRACE_URL": "https://traces.example/t/{trace_id}"}}
    assert telemetry_settings.options() == {
        **DEFAULTS,
        "TRACE_URL": "https://traces.example/t/{trace_id}",
    }
    assert telemetry_settings.trace_url("0af7651916cd43dd") == (
        "https://traces.example/t/0af7651916cd43dd"
    )
    assert telemetry_settings.trace_url("") is None  # a run without a trace
    settings.AGENT_SESSIONS = {"TELEMETRY": {"ENABLED": False, "TRACE_MESSAGES": True}}
    assert telemetry_settings.enabled() is False
    assert telemetry_settings.trace_messages() is True
    assert telemetry_settings.trace_url("0af7651916cd43dd") is None
