"""The client's frames on queued messages (``WHILE_RUNNING = "queue"``): ``queue_edit``
and ``queue_remove``, checked before anything happens. No I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from django_agent_sessions.streaming.wire import encoding
from django_agent_sessions.streaming.wire.frames import BadFrame


@dataclass(frozen=True)
class QueueEdit:
    pk: int
    text: str


def queued_id(content: dict[str, Any]) -> int:
    """The queued message a ``queue_edit`` or ``queue_remove`` names."""
    pk = content.get("id")
    if isinstance(pk, bool) or not isinstance(pk, int) or pk < 1:
        raise BadFrame("invalid_frame", _("id must be a queued message's id."))
    return pk


def queue_edit(content: dict[str, Any]) -> QueueEdit:
    pk, text = queued_id(content), content.get("text")
    if not isinstance(text, str) or not text.strip():
        raise BadFrame("empty_text", _("Write a message first."))
    if not encoding.is_valid_unicode(text) or "\x00" in text:
        raise BadFrame("invalid_text", _("The message contains invalid characters."))
    return QueueEdit(pk, text)
