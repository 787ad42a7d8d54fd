"""``AGENT_SESSIONS["SHARE_LINKS"]``, read on use (never at import).

- ``"off"`` (the default): no links; every share URL answers 404 and the chat shows no
  Share action.
- ``"login"``: a link's page is for signed-in people only (others go to the login page).
- ``"public"``: anyone with the link may read it; continuing it as a copy still needs a
  signed-in person (the copy is theirs).
"""

from __future__ import annotations

from django_agent_sessions.conf import app_settings

MODES = ("off", "login", "public")


def mode() -> str:
    """The setting, or ``"off"`` for a value that is none of ``MODES`` (the system check
    reports it): a mistake shares nothing."""
    value = app_settings.SHARE_LINKS
    return value if value in MODES else "off"


def enabled() -> bool:
    return mode() != "off"
