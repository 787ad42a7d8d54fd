"""What a request hands ChatKit's store: who asks.

ChatKit passes a context of the server's choosing to every store call. The stores here
read its ``user`` (a Django user): threads, items and attachments are that user's, and
an anonymous user has none. ``ChatKitContext`` is the one the views build; any object
with a ``user`` attribute does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest


@dataclass
class ChatKitContext:
    """The signed-in user of a ChatKit request, and the request (for ``respond``)."""

    user: Any
    request: HttpRequest | None = field(default=None, repr=False)


def owner_id(context: Any) -> Any:
    """The primary key of the context's user; None for nobody (an anonymous user)."""
    user = getattr(context, "user", None)
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return user.pk
