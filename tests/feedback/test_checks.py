"""The system check of ``AGENT_SESSIONS["FEEDBACK_TAGS"]``."""

from __future__ import annotations

import pytest

from django_agent_sessions.feedback.checks import check_feedback_tags


@pytest.mark.parametrize(
    ("tags", "ok"),
    [
        (["wrong", "slow"], True),
        ((), True),
        ("wrong", False),
        (["a,b"], False),
        ([""], False),
        ([1], False),
    ],
)
def test_tags_are_a_list_of_short_texts(settings, tags, ok):
    settings.AGENT_SESSIONS = {"FEEDBACK_TAGS": tags}
    assert [message.id for message in check_feedback_tags()] == (
        [] if ok else ["django_agent_sessions.E053"]
    )
