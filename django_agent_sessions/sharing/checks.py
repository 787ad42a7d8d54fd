"""The system check of ``AGENT_SESSIONS["SHARE_LINKS"]`` (id E150)."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error

from django_agent_sessions.conf import app_settings
from django_agent_sessions.sharing.settings import MODES


def check_share_links(**kwargs: Any) -> list[CheckMessage]:
    if not app_settings.is_dict():
        return []  # E001 says so
    value = app_settings.SHARE_LINKS
    if value in MODES:
        return []
    return [
        Error(
            f"AGENT_SESSIONS['SHARE_LINKS'] is {value!r}.",
            hint='Use "off", "login" or "public". Until then, no link is shared.',
            id="django_agent_sessions.E150",
        )
    ]
