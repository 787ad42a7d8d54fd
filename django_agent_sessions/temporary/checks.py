"""System checks of the temporary chats' settings: ``TEMPORARY_TTL`` (id E130),
``FORCE_TEMPORARY`` (id E131) and ``TEMPORARY_GRACE_SECONDS`` (id E132)."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error

from django_agent_sessions.conf import app_settings
from django_agent_sessions.conf.values import parse_duration
from django_agent_sessions.temporary.settings import forcing

_ID = "django_agent_sessions"


def check_temporary(**kwargs: Any) -> list[CheckMessage]:
    if not app_settings.is_dict():
        return []  # E001 says so
    return [*_ttl(), *_forcing(), *_grace()]


def _ttl() -> list[CheckMessage]:
    try:
        parse_duration(app_settings.TEMPORARY_TTL)
    except ValueError as error:
        hint = "Give an age after the last activity, such as '1d', '12h' or '90min'."
        return [Error(f"AGENT_SESSIONS['TEMPORARY_TTL']: {error}", hint=hint, id=f"{_ID}.E130")]
    return []


def _forcing() -> list[CheckMessage]:
    try:
        forcing()
    except (ImportError, TypeError) as error:
        hint = (
            "Use False, True, or a callable taking the user and returning a bool (or its "
            "dotted path). Until then, every new chat is temporary."
        )
        message = f"AGENT_SESSIONS['FORCE_TEMPORARY'] cannot be used: {error}."
        return [Error(message, hint=hint, id=f"{_ID}.E131")]
    return []


def _grace() -> list[CheckMessage]:
    value = app_settings.TEMPORARY_GRACE_SECONDS
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return []
    message = f"AGENT_SESSIONS['TEMPORARY_GRACE_SECONDS'] is {value!r}."
    hint = "Give a number of seconds (0 or more), e.g. 30: a reload must fit in it."
    return [Error(message, hint=hint, id=f"{_ID}.E132")]
