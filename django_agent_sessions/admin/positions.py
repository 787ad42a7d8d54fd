"""Which page of a conversation's transcript holds an item: the links to an item from
the feedback list and from the find in a transcript.

The transcript pages by position in primary key order (``AgentSessionAdmin.
_transcript``), so an item's page is the count of the conversation's items up to it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from django.db.models import Count, Q

from django_agent_sessions.models import SessionItem


def pages_of(
    session_pk: int, item_ids: Iterable[int], per_page: int, *, using: str
) -> dict[int, int]:
    """The transcript page of each of ``item_ids`` (each counted as present), in one
    query: one count per item over the conversation's (session, id) index."""
    wanted = sorted(set(item_ids))
    if not wanted:
        return {}
    counts = (
        SessionItem.objects.using(using)
        .filter(session_id=session_pk, id__lte=wanted[-1])
        .aggregate(**{f"up_to_{pk}": Count("id", filter=Q(id__lte=pk)) for pk in wanted})
    )
    return {pk: max(1, math.ceil(counts[f"up_to_{pk}"] / per_page)) for pk in wanted}
