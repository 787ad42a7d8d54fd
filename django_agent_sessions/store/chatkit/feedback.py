"""ChatKit's feedback on items, recorded as the app's ``Feedback`` (``store.feedback``).

ChatKit rates items by their ChatKit ids; the app rates the SDK items of assistant
replies. Each rated assistant message is found by its mirror (``ChatKitItem
.session_item_id``) and rated as the packaged chat rates it, so ratings from both front
ends are one list in the admin and one export.
"""

from __future__ import annotations

from typing import Any

from django.db import router, transaction

from django_agent_sessions.models import ChatKitItem, SessionItem
from django_agent_sessions.store import feedback
from django_agent_sessions.store.chatkit.threads import owned_pk
from django_agent_sessions.store.hops import hop

# ChatKit's FeedbackKind, as the app's rating.
RATINGS = {"positive": 1, "negative": -1}


@hop(write=True)
def give(user: Any, thread_id: str, item_ids: list[str], kind: str) -> int:
    """Rate the assistant messages among ``item_ids`` (the rest are not replies: a
    user's message, a widget, a workflow); how many were rated. Raises ``Missing`` for a
    thread that is not the user's, and ``FeedbackRejected`` for an unknown kind."""
    using = router.db_for_write(ChatKitItem)
    with transaction.atomic(using=using):
        pk = owned_pk(getattr(user, "pk", None), thread_id, using)
        # A reply's SDK item: its mirror, or the message it stands for (adopted.SDK).
        named = ChatKitItem.objects.using(using).filter(session_id=pk, item_id__in=item_ids)
        mirrors = named.exclude(session_item_id=None).values_list("session_item_id", flat=True)
        replies = SessionItem.objects.using(using).filter(session_id=pk, role="assistant")
        rated = list(replies.filter(pk__in=list(mirrors)).values_list("pk", flat=True))
        for session_item_id in rated:
            feedback.give(user, thread_id, session_item_id, rating=RATINGS.get(kind, kind))
    return len(rated)
