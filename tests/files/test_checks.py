"""The system checks of ``AGENT_SESSIONS["ATTACHMENTS"]``."""

from __future__ import annotations

import pytest

from django_agent_sessions.files.checks import check_attachments


def _ids(settings, attachments) -> list[str | None]:
    settings.AGENT_SESSIONS = {"ATTACHMENTS": attachments}
    return [message.id for message in check_attachments()]


def test_the_defaults_and_a_valid_dict_pass(settings):
    assert _ids(settings, None) == []
    assert _ids(settings, {"STORAGE": "default", "OFFLOAD_CHARS": 1000}) == []
    no_limits = {"UPLOAD_RATE": None, "MAX_USER_BYTES": None, "UPLOAD_TYPES": []}
    assert _ids(settings, no_limits) == []


@pytest.mark.parametrize(
    ("attachments", "expected"),
    [
        ("default", ["django_agent_sessions.E050"]),
        ({"STORAGES": "default"}, ["django_agent_sessions.E050"]),
        ({"STORAGE": "s3"}, ["django_agent_sessions.E051"]),
        ({"OFFLOAD_CHARS": 0}, ["django_agent_sessions.E052"]),
        ({"CACHE_BYTES": "64MB"}, ["django_agent_sessions.E052"]),
        ({"MAX_UPLOAD_BYTES": None}, ["django_agent_sessions.E052"]),
        ({"MAX_FILES_PER_MESSAGE": True}, ["django_agent_sessions.E052"]),
        ({"MAX_USER_BYTES": -1}, ["django_agent_sessions.E052"]),
        ({"UPLOAD_TYPES": "image/png"}, ["django_agent_sessions.E054"]),
        ({"UPLOAD_RATE": "30 per hour"}, ["django_agent_sessions.E054"]),
    ],
)
def test_each_mistake_is_named(settings, attachments, expected):
    assert _ids(settings, attachments) == expected
