"""Recording people's ratings of replies, and reading them back for evaluations.

``give`` is one transaction: the conversation (its owner's only), the reply item, the run
that wrote it, and the one row per person per reply, created or changed. ``ratings_of``
reads a person's ratings of one conversation back for the chat page; ``records`` reads
each rating with the conversation up to its reply, in the SDK's item format.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from django.db import router, transaction
from django.db.models import QuerySet
from django.utils import timezone

from django_agent_sessions import serialization
from django_agent_sessions.conf import app_settings
from django_agent_sessions.exceptions import FeedbackRejected
from django_agent_sessions.feedback.models import Feedback
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem
from django_agent_sessions.signals import feedback_given
from django_agent_sessions.store.owned import NotFound

MAX_COMMENT_CHARS = 2000


def give(
    user: Any,
    session_id: str,
    item_id: int,
    *,
    rating: Any,  # each checked here: a view passes them as a client sent them
    comment: Any = "",
    tags: Any = (),
) -> Feedback:
    """Record (or change) ``user``'s rating of the reply ``item_id``; sends
    ``feedback_given`` once it is saved. Raises ``FeedbackRejected`` naming the problem,
    ``owned.NotFound`` for a conversation that is missing or not the user's."""
    fields = {"rating": _rating(rating), "comment": _comment(comment), "tags": _tags(tags)}
    using = router.db_for_write(Feedback)
    with transaction.atomic(using=using):
        conversation_pk = _own_conversation(user, session_id, using)
        fields["reply"] = _reply_payload(conversation_pk, item_id, using)
        run = (
            AgentRun.objects.using(using)
            .filter(session_id=conversation_pk, history_item_id__lt=item_id)
            .filter(last_item_id__gte=item_id)
            .values_list("pk", "agent_name")
            .first()
        )
        fields.update(run_id=run and run[0], agent_name=run[1] if run else "")
        feedback, created = Feedback.objects.using(using).update_or_create(
            user=user,
            session_id=conversation_pk,
            item_id=item_id,
            defaults={**fields, "updated_at": timezone.now()},
        )
    feedback_given.send(sender=Feedback, feedback=feedback, created=created, user=user)
    saved: Feedback = feedback
    return saved


def ratings_of(user: Any, session_id: str) -> list[dict[str, Any]]:
    """``user``'s ratings of the replies of their conversation ``session_id``, as the
    chat page shows them; raises ``owned.NotFound`` for a conversation not theirs."""
    using = router.db_for_read(Feedback)
    conversation_pk = _own_conversation(user, session_id, using)
    rows = (
        Feedback.objects.using(using)
        .filter(session_id=conversation_pk, user_id=user.pk)
        .order_by("item_id")
        .only("item_id", "rating", "comment", "tags")
    )
    return [
        {"item_id": row.item_id, "rating": row.rating, "comment": row.comment, "tags": row.tag_list}
        for row in rows
    ]


def records(feedback: QuerySet[Feedback]) -> Iterator[dict[str, Any]]:
    """Each rating as an evaluation record: ``input`` (the conversation's items before
    the reply, as ``get_items`` gives them), ``reply``, the rating, comment and tags.
    A temporary chat's ratings are never exported (``store.temporary``)."""
    feedback = feedback.exclude(session__temporary=True)
    for rated in feedback.select_related("session", "run").order_by("id").iterator():
        payloads = SessionItem.objects.filter(session_id=rated.session_id, pk__lt=rated.item_id)
        earlier = payloads.order_by("id").values_list("payload", flat=True)
        reply = serialization.decode_payloads([rated.reply])
        yield {
            "conversation": rated.session.session_id,
            "run_id": str(rated.run.run_id) if rated.run else None,
            "agent": rated.agent_name,
            "item_id": rated.item_id,
            "input": serialization.decode_payloads(earlier.iterator()),
            "reply": reply[0] if reply else None,
            "rating": rated.rating,
            "comment": rated.comment,
            "tags": rated.tag_list,
            "user_id": rated.user_id,
            "given_at": rated.updated_at.isoformat(),
        }


def _own_conversation(user: Any, session_id: str, using: str) -> int:
    found = (
        AgentSession.objects.using(using)
        .filter(session_id=session_id, owner_id=getattr(user, "pk", None))
        .values_list("pk", flat=True)
        .first()
    )
    if found is None or not getattr(user, "is_authenticated", False):
        raise NotFound(session_id)
    return int(found)


def _reply_payload(conversation_pk: int, item_id: Any, using: str) -> str:
    row = (
        SessionItem.objects.using(using)
        .filter(session_id=conversation_pk, pk=item_id)
        .values_list("payload", "item_type", "role")
        .first()
    )
    if row is None or (row[1], row[2]) != ("message", "assistant"):
        raise FeedbackRejected(f"Item {item_id!r} is not one of the assistant's replies here.")
    return str(row[0])


def _rating(rating: Any) -> int:
    if type(rating) is not int or rating not in (1, -1):
        raise FeedbackRejected(f"A rating is 1 (good) or -1 (bad), not {rating!r}.")
    return rating


def _comment(comment: Any) -> str:
    if not isinstance(comment, str):
        raise FeedbackRejected(f"A comment is text, not {type(comment).__name__}.")
    if len(comment) > MAX_COMMENT_CHARS:
        raise FeedbackRejected(f"A comment has at most {MAX_COMMENT_CHARS} characters.")
    return comment.replace("\x00", "")


def allowed_tags() -> list[str]:
    """The tags a rating may carry (``FEEDBACK_TAGS``), in the order a page shows them."""
    return list(app_settings.FEEDBACK_TAGS)


def _tags(tags: Iterable[str]) -> str:
    allowed = allowed_tags()
    if not isinstance(tags, list | tuple):
        raise FeedbackRejected(f"Tags are a list of texts, not {type(tags).__name__}.")
    chosen = list(dict.fromkeys(tags))
    unknown = [tag for tag in chosen if tag not in allowed]
    if unknown:
        raise FeedbackRejected(f"Unknown tag {unknown[0]!r}; the tags are {allowed}.")
    return f",{','.join(chosen)}," if chosen else ""
