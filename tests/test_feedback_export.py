"""``manage.py agent_sessions_feedback_export``: JSONL of rated replies."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from django_agent_sessions.store import feedback
from tests.feedback_helpers import a_replied_conversation

pytestmark = pytest.mark.django_db


def _export(*args: str) -> list[dict[str, object]]:
    out = io.StringIO()
    call_command("agent_sessions_feedback_export", *args, stdout=out, stderr=io.StringIO())
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_one_line_per_rated_reply_filtered_by_rating_tag_and_date(tmp_path):
    first = a_replied_conversation("alice", "c-1")
    second = a_replied_conversation("bob", "c-2")
    feedback.give(first.owner, "c-1", first.reply_id, rating=-1, tags=["unsafe"], comment="No.")
    feedback.give(second.owner, "c-2", second.reply_id, rating=1)

    assert [line["conversation"] for line in _export()] == ["c-1", "c-2"]
    (bad,) = _export("--rating", "bad")
    assert (bad["conversation"], bad["comment"], bad["tags"]) == ("c-1", "No.", ["unsafe"])
    assert bad["input"] == [{"role": "user", "content": "What is 12 * 7?"}]
    assert [line["conversation"] for line in _export("--tag", "unsafe")] == ["c-1"]
    assert _export("--since", "2999-01-01") == []
    target = tmp_path / "rated.jsonl"
    _export("--output", str(target))
    assert len(target.read_text().splitlines()) == 2
