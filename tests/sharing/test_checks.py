"""``sharing.checks``: E150 for a ``SHARE_LINKS`` that is not one of the three modes."""

from __future__ import annotations

import pytest

from django_agent_sessions.sharing.checks import check_share_links


@pytest.mark.parametrize("value", ["off", "login", "public"])
def test_the_three_modes_pass(settings, value):
    settings.AGENT_SESSIONS = {"SHARE_LINKS": value}
    assert check_share_links() == []


@pytest.mark.parametrize("value", ["on", True, None, "Public"])
def test_anything_else_is_e150_with_a_hint(settings, value):
    settings.AGENT_SESSIONS = {"SHARE_LINKS": value}
    [error] = check_share_links()
    assert error.id == "django_agent_sessions.E150"
    assert error.hint
    assert repr(value) in error.msg


def test_the_app_registers_it(settings):
    from django.core.checks import run_checks

    settings.AGENT_SESSIONS = {"SHARE_LINKS": "everyone"}
    assert "django_agent_sessions.E150" in {message.id for message in run_checks()}
