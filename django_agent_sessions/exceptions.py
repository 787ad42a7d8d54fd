"""Exceptions raised by django-agent-sessions."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied


class SessionOwnershipError(PermissionDenied):
    """The conversation exists and belongs to another user (or to nobody).

    Raised by every ``DjangoSession`` method when the session was built with
    ``owner=user`` and the stored row is not that user's. Nothing is read or written.
    Being a ``PermissionDenied``, it becomes a 403 in a Django view.
    """


class ItemRejected(ValueError):
    """An item's value cannot be stored exactly; the message names the item and the reason.

    Raised by ``DjangoSession.add_items`` (and imports) before anything of the batch is
    written: a NaN or infinite number, nesting deeper than ``MAX_ITEM_DEPTH``, or an item
    larger than ``MAX_ITEM_BYTES``. A value of the wrong *type* (not a dict, a non-str key,
    an object JSON cannot hold) raises ``TypeError`` instead.
    """


class FeedbackRejected(ValueError):
    """Feedback that cannot be recorded: the message says what is wrong with it (a rating
    other than +1 or -1, an unknown tag, a comment too long, an item that is not one of
    the assistant's replies in the person's own conversation)."""


class UploadRefused(ValueError):
    """A file the chat does not take, or a message naming a file it cannot use: ``code``
    is stable (``too_large``, ``type_refused``, ``rate_limited``, ``quota_exceeded``,
    ``too_many_files``, ``unknown_file``), the message is for people (translated)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class RunRefused(Exception):
    """A run ``start_run`` could not start: ``code`` is the wire's error code (``busy``:
    the conversation has a run; ``rate_limited``, with ``retry_after`` seconds;
    ``quota_exceeded``, with ``resets_at``; ``unavailable``: the worker is stopping)."""

    def __init__(
        self, code: str, message: str, *, retry_after: int | None = None, resets_at: Any = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.retry_after = retry_after
        self.resets_at = resets_at


class ConversationGone(LookupError):
    """The conversation was deleted after it was looked up (by its owner in another tab,
    the admin, retention, or a temporary chat's end): nothing was written. A chat tab
    whose conversation went gets the ``not_found`` error for its next message."""
