"""System check of ``AGENT_SESSIONS["FEEDBACK_TAGS"]`` (id E053)."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error

from django_agent_sessions.conf import DEFAULTS, app_settings


def check_feedback_tags(**kwargs: Any) -> list[CheckMessage]:
    tags = app_settings.FEEDBACK_TAGS if app_settings.is_dict() else ()
    if isinstance(tags, list | tuple) and all(_usable(tag) for tag in tags):
        return []
    return [
        Error(
            f"AGENT_SESSIONS['FEEDBACK_TAGS'] is {tags!r}; it must be a list of short, "
            "non-empty texts without commas.",
            hint=f"Remove it to use the default {list(DEFAULTS['FEEDBACK_TAGS'])!r}.",
            id="django_agent_sessions.E053",
        )
    ]


def _usable(tag: Any) -> bool:
    return isinstance(tag, str) and 0 < len(tag) <= 40 and "," not in tag
