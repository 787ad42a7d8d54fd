"""The client's frames, checked before anything happens: each reader returns a frame's
values or raises ``BadFrame`` with the wire's error code. No I/O.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any

from django.utils import formats, timezone
from django.utils.translation import gettext as _

from django_agent_sessions.files import storage
from django_agent_sessions.store.approvals import MAX_MESSAGE_CHARS
from django_agent_sessions.streaming.wire import encoding

CLIENT_ID_MAX_LENGTH = 64
# The client's frame types.
FRAME_TYPES = frozenset(
    {"user_message", "cancel", "approval", "load_older", "queue_edit", "queue_remove"}
)
CALL_ID_MAX_LENGTH = 255


class BadFrame(Exception):
    """A frame the server refuses: the ``error`` frame's code and message."""

    def __init__(self, code: str, message: str, client_id: str = "", **fields: Any) -> None:
        super().__init__(message)
        self.code, self.message, self.client_id = code, message, client_id
        self.fields = fields  # more of the error frame (retry_after)


def busy(client_id: str) -> BadFrame:
    return BadFrame("busy", _("A reply is still being written; wait or cancel it."), client_id)


def quota_exceeded(resets_at: datetime | None, client_id: str) -> BadFrame:
    """Refused for the person's token budget: when it refills, in words and as data."""
    if resets_at is None:  # a budget of zero: never
        return BadFrame(
            "quota_exceeded", _("You have no token budget to send messages."), client_id
        )
    when = formats.date_format(timezone.localtime(resets_at), "DATETIME_FORMAT")
    message = _("You have used your token budget. You can send messages again after %(when)s.")
    seconds = max(0, math.ceil((resets_at - timezone.now()).total_seconds()))
    return BadFrame(
        "quota_exceeded",
        message % {"when": when},
        client_id,
        resets_at=resets_at.astimezone(dt_timezone.utc).isoformat(),
        retry_after=seconds,
    )


def error_frame(code: str, message: str, client_id: str = "", **fields: Any) -> dict[str, Any]:
    """The ``error`` frame the client is sent (over HTTP: the body of an error status)."""
    frame: dict[str, Any] = {"type": "error", "code": code, "message": message, **fields}
    if client_id:
        frame["client_id"] = client_id
    return frame


def decode(text_data: str | None, *, max_bytes: int) -> dict[str, Any]:
    """A client frame: a JSON object of a known type, in a text frame of at most
    ``max_bytes``. Its type is then handled by the consumer's ``frame_<type>``."""
    if text_data is None:
        raise BadFrame("invalid_frame", _("Send JSON text frames."))
    content = decode_object(text_data, max_bytes)
    if not isinstance(content.get("type"), str):
        raise BadFrame("invalid_frame", _("A frame is a JSON object with a type."))
    if content["type"] not in FRAME_TYPES:
        raise BadFrame("unknown_type", _("Unknown frame type."))
    return content


def decode_object(text: str, max_bytes: int) -> dict[str, Any]:
    """A JSON object of at most ``max_bytes`` (a frame, or a POST's body)."""
    if len(text.encode("utf-8", "replace")) > max_bytes:
        raise BadFrame("too_large", _("The message is too long."))
    try:
        content = json.loads(text)
    except (ValueError, RecursionError) as error:  # RecursionError: nested brackets
        raise BadFrame("invalid_json", _("The frame is not valid JSON.")) from error
    if not isinstance(content, dict):
        raise BadFrame("invalid_frame", _("A frame is a JSON object with a type."))
    return content


@dataclass(frozen=True)
class UserMessage:
    text: str
    client_id: str
    files: tuple[int, ...] = ()  # attachment ids (chat/uploads.py), in the order shown
    temporary: bool = False  # a first message: start a temporary chat (store.temporary)


@dataclass(frozen=True)
class Approval:
    call_id: str
    approve: bool
    message: str


def user_message(content: dict[str, Any]) -> UserMessage:
    client_id = content.get("client_id")
    if client_id is not None and (
        not isinstance(client_id, str)
        or not 0 < len(client_id) <= CLIENT_ID_MAX_LENGTH
        or not client_id.isprintable()
    ):
        raise BadFrame("invalid_frame", _("client_id must be a short string."))
    client_id = client_id or ""
    files = _files(content.get("files", []), client_id)
    text = content.get("text")
    if not isinstance(text, str) or not (text.strip() or files):
        raise BadFrame("empty_text", _("Write a message first."), client_id)
    if not encoding.is_valid_unicode(text) or "\x00" in text:
        # A lone surrogate (half an emoji) or NUL: it could be neither relayed (UTF-8,
        # msgpack) nor stored and shown faithfully, so nothing starts or is stored.
        raise BadFrame("invalid_text", _("The message contains invalid characters."), client_id)
    temporary = content.get("temporary", False)
    if not isinstance(temporary, bool):
        raise BadFrame("invalid_frame", _("temporary must be true or false."), client_id)
    return UserMessage(text, client_id, files, temporary)


def _files(files: Any, client_id: str) -> tuple[int, ...]:
    """The attachment ids a message names: distinct, at most ``MAX_FILES_PER_MESSAGE``."""
    if not isinstance(files, list) or not all(
        type(file_id) is int and file_id > 0 for file_id in files
    ):
        raise BadFrame("invalid_frame", _("files must be a list of file ids."), client_id)
    most = int(storage.setting("MAX_FILES_PER_MESSAGE"))
    if len(files) > most:
        message = _("A message may carry %(count)d files at most.") % {"count": most}
        raise BadFrame("too_many_files", message, client_id)
    return tuple(dict.fromkeys(files))


def approval(content: dict[str, Any]) -> Approval:
    call_id, approve = content.get("call_id"), content.get("approve")
    message = content.get("message", "")
    if (
        not isinstance(call_id, str)
        or not 0 < len(call_id) <= CALL_ID_MAX_LENGTH
        or not isinstance(approve, bool)
        or not isinstance(message, str)
        or len(message) > MAX_MESSAGE_CHARS
    ):
        raise BadFrame(
            "invalid_approval",
            _("An approval needs a call_id, approve (true or false) and an optional message."),
        )
    return Approval(call_id, approve, message)


def cancel(content: dict[str, Any]) -> str | None:
    """The run to cancel; None for the conversation's run, whichever it is."""
    run_id = content.get("run_id")
    if run_id is not None and not isinstance(run_id, str):
        # Not "no run_id": a cancel meant for one run must never stop another.
        raise BadFrame("invalid_frame", _("run_id must be a string."))
    return run_id


def load_older(content: dict[str, Any]) -> int:
    """The item id the page of older items ends before."""
    before = content.get("before")
    if isinstance(before, bool) or not isinstance(before, int) or before < 1:
        raise BadFrame("invalid_frame", _("before must be an item id."))
    return before
