"""The feedback row (``feedback/models.py``): its tags, what it reads as, one per person
per reply, removed with its conversation."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from django_agent_sessions.feedback.models import Feedback
from tests.feedback_helpers import a_replied_conversation

pytestmark = pytest.mark.django_db


def test_a_rating_lists_its_tags_and_reads_as_itself():
    rated = a_replied_conversation()
    row = Feedback.objects.create(
        session=rated.conversation,
        run=rated.run,
        item_id=rated.reply_id,
        user=rated.owner,
        rating=-1,
        tags=",inaccurate,too long,",
        reply="84.",
    )
    assert row.tag_list == ["inaccurate", "too long"]
    assert str(row) == f"bad on item {rated.reply_id}"
    with pytest.raises(IntegrityError), transaction.atomic():
        Feedback.objects.create(
            session=rated.conversation, item_id=rated.reply_id, user=rated.owner, rating=1
        )
    rated.run.delete()
    row.refresh_from_db()
    assert row.run is None  # the rating stays
    rated.conversation.delete()
    assert not Feedback.objects.exists()
