"""``sharing.settings``: off by default; a bad value shares nothing."""

from __future__ import annotations

from django_agent_sessions.sharing.settings import enabled, mode


def test_off_by_default(settings):
    settings.AGENT_SESSIONS = {}
    assert mode() == "off"
    assert not enabled()


def test_the_modes_and_a_mistake(settings):
    settings.AGENT_SESSIONS = {"SHARE_LINKS": "login"}
    assert mode() == "login"
    assert enabled()
    settings.AGENT_SESSIONS = {"SHARE_LINKS": "public"}
    assert mode() == "public"
    settings.AGENT_SESSIONS = {"SHARE_LINKS": "yes"}
    assert mode() == "off"
    assert not enabled()
