"""The attachment row (``files/models.py``): one per file's bytes per conversation, what
it reads as, removed with its conversation."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from django_agent_sessions.files.models import Attachment
from tests.conversations import make_conversation

pytestmark = pytest.mark.django_db

SHA = "ab" * 32


def test_one_row_per_bytes_per_conversation_named_by_its_file():
    first, second = make_conversation("c-1", []), make_conversation("c-2", [])
    fields = {"content_type": "image/png", "size": 3, "sha256": SHA, "storage_name": "f/ab.png"}
    row = Attachment.objects.create(session=first, name="cat.png", **fields)
    assert str(row) == "cat.png"
    assert str(Attachment(storage_name="f/ab.png")) == "f/ab.png"
    with pytest.raises(IntegrityError), transaction.atomic():
        Attachment.objects.create(session=first, **fields)
    Attachment.objects.create(session=second, **fields)  # another conversation: its own row
    first.delete()
    assert list(Attachment.objects.values_list("session__session_id", flat=True)) == ["c-2"]
