"""The Python blocks of docs/attachments.md and docs/feedback.md, run as written."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from django_agent_sessions.files import storage
from django_agent_sessions.files.checks import check_attachments
from django_agent_sessions.models import Feedback
from tests.feedback_helpers import a_replied_conversation

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _python_blocks(name: str) -> list[str]:
    text = (DOCS / name).read_text()
    return re.findall(r"^```python\n(.*?)^```$", text, re.S | re.M)


def test_the_attachments_settings_block_is_the_defaults_and_passes_the_checks(settings):
    namespace: dict[str, Any] = {}
    exec(_python_blocks("attachments.md")[1], namespace)
    assert namespace["AGENT_SESSIONS"]["ATTACHMENTS"] == storage.DEFAULTS
    settings.STORAGES = {**settings.STORAGES, **namespace["STORAGES"]}
    settings.AGENT_SESSIONS = namespace["AGENT_SESSIONS"]
    assert check_attachments() == []


@pytest.mark.django_db
def test_the_feedback_block_records_a_rating():
    rated = a_replied_conversation()
    request = SimpleNamespace(user=rated.owner)
    names = {"request": request, "session_id": "c-rated", "item_id": rated.reply_id}
    exec(_python_blocks("feedback.md")[0], names)
    saved = Feedback.objects.get()
    assert (saved.rating, saved.comment, saved.tag_list) == (-1, "Wrong sum.", ["inaccurate"])
