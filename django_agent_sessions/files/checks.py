"""System checks of ``AGENT_SESSIONS["ATTACHMENTS"]`` (ids E050-E052, E054)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error

from django_agent_sessions.conf import app_settings
from django_agent_sessions.conf.values import parse_rate
from django_agent_sessions.files.storage import DEFAULTS

_ID = "django_agent_sessions"
_POSITIVE = ("OFFLOAD_CHARS", "CACHE_BYTES", "MAX_UPLOAD_BYTES", "MAX_FILES_PER_MESSAGE")
_POSITIVE_OR_NONE = ("MAX_USER_BYTES",)


def check_attachments(**kwargs: Any) -> list[CheckMessage]:
    configured = app_settings.ATTACHMENTS if app_settings.is_dict() else None
    if configured is None:
        return []
    if not isinstance(configured, Mapping):
        return [
            Error(
                f"AGENT_SESSIONS['ATTACHMENTS'] must be a dict, not {type(configured).__name__}.",
                hint=f"Set it to a dict of {', '.join(sorted(DEFAULTS))}, or remove it.",
                id=f"{_ID}.E050",
            )
        ]
    errors: list[CheckMessage] = [
        Error(
            f"AGENT_SESSIONS['ATTACHMENTS'] has an unknown key {key!r}.",
            hint=f"Known keys: {', '.join(sorted(DEFAULTS))}.",
            id=f"{_ID}.E050",
        )
        for key in sorted(set(configured) - set(DEFAULTS))
    ]
    alias = configured.get("STORAGE", DEFAULTS["STORAGE"])
    if alias not in settings.STORAGES:
        errors.append(
            Error(
                f"AGENT_SESSIONS['ATTACHMENTS']['STORAGE'] is {alias!r}, which STORAGES "
                "does not name.",
                hint=f"Use one of: {', '.join(sorted(settings.STORAGES))}.",
                id=f"{_ID}.E051",
            )
        )
    for key in (*_POSITIVE, *_POSITIVE_OR_NONE):
        value = configured.get(key, DEFAULTS[key])
        if value is None and key in _POSITIVE_OR_NONE:
            continue
        if not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
            errors.append(
                Error(
                    f"AGENT_SESSIONS['ATTACHMENTS'][{key!r}] is {value!r}; it must be a "
                    f"positive int{' or None' if key in _POSITIVE_OR_NONE else ''}.",
                    hint=f"Remove it to use the default ({DEFAULTS[key]!r}).",
                    id=f"{_ID}.E052",
                )
            )
    return errors + _upload_errors(configured)


def _upload_errors(configured: Mapping[str, Any]) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    types = configured.get("UPLOAD_TYPES", DEFAULTS["UPLOAD_TYPES"])
    if not isinstance(types, list | tuple) or not all(isinstance(t, str) for t in types):
        errors.append(
            Error(
                f"AGENT_SESSIONS['ATTACHMENTS']['UPLOAD_TYPES'] is {types!r}; it must be a "
                "list of content types.",
                hint="For example ['image/png', 'application/pdf']; [] accepts no upload.",
                id=f"{_ID}.E054",
            )
        )
    rate = configured.get("UPLOAD_RATE", DEFAULTS["UPLOAD_RATE"])
    try:
        if rate is not None:
            parse_rate(rate)
    except ValueError as problem:
        errors.append(
            Error(
                f"AGENT_SESSIONS['ATTACHMENTS']['UPLOAD_RATE']: {problem}.",
                hint="Write it like '30/h', or None for no limit.",
                id=f"{_ID}.E054",
            )
        )
    return errors
