"""Which transcript page holds an item (``admin/positions.py``): its position among its
conversation's items, in pages, counted in one query."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from django_agent_sessions.admin.positions import pages_of
from django_agent_sessions.models import SessionItem
from tests.conversations import make_conversation

pytestmark = pytest.mark.django_db


def test_each_item_is_on_the_page_its_position_falls_in_counted_in_one_query():
    make_conversation("c-other", [{"role": "user", "content": "x"}] * 3)  # ids in between
    conversation = make_conversation("c-1", [{"role": "user", "content": str(n)} for n in range(7)])
    ids = list(SessionItem.objects.filter(session=conversation).values_list("id", flat=True))
    with CaptureQueriesContext(connection) as queries:
        pages = pages_of(
            conversation.pk, [ids[6], ids[0], ids[2], ids[3], ids[0]], 3, using="default"
        )
    assert len(queries) == 1
    assert pages == {ids[0]: 1, ids[2]: 1, ids[3]: 2, ids[6]: 3}
    assert pages_of(conversation.pk, [], 3, using="default") == {}
    # An item no longer there is counted as present: the page it would be on.
    assert pages_of(conversation.pk, [ids[6] + 1000], 50, using="default") == {ids[6] + 1000: 1}
