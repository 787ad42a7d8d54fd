"""What a POST of ``useChat``'s ``DefaultChatTransport`` asks the app to do.

Its body is ``{id, messages, trigger, messageId}`` (and the page's own ``body`` fields):
the chat's id is the conversation's, and only the last message is new (the others are
the client's copy of what the conversation stored; a page may send that one alone as
``message``, with ``prepareSendMessagesRequest``). A person's message becomes the
wire's ``user_message``; an assistant message whose tool parts carry approval
responses becomes one ``approval`` per decided call. Everything is checked as the
wire's frames are, with their error codes (``frames.BadFrame``).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from django_agent_sessions.conf import app_settings
from django_agent_sessions.streaming import frames

CLIENT_ID_MAX_LENGTH = 64  # the wire's (``protocol.CLIENT_ID_MAX_LENGTH``)
# A file part the client got from the chat's upload endpoint (``c/<id>/files/<id>/``).
_FILE_URL = re.compile(r"/files/(\d+)/?$")


@dataclass(frozen=True)
class ChatRequest:
    chat_id: str
    message: dict[str, Any] | None = None  # the ``user_message`` frame, or
    decisions: list[dict[str, Any]] = field(default_factory=list)  # ``approval`` frames
    known_calls: set[str] = field(default_factory=set)  # the calls the client's message shows


def chat_request(body: str) -> ChatRequest:
    # The whole conversation comes along: Django's own request size limit bounds it;
    # the new message is held to MAX_MESSAGE_BYTES below, as a frame of the socket.
    payload = frames.decode_object(body, settings.DATA_UPLOAD_MAX_MEMORY_SIZE or sys.maxsize)
    chat_id = payload.get("id")
    if not isinstance(chat_id, str) or not chat_id:
        raise frames.BadFrame("invalid_frame", _("The chat's id is missing."))
    if payload.get("trigger", "submit-message") != "submit-message":
        message = _("Only new messages can be sent here; a reply cannot be regenerated.")
        raise frames.BadFrame("invalid_frame", message)
    last = payload.get("message")
    if last is None and isinstance(payload.get("messages"), list) and payload["messages"]:
        last = payload["messages"][-1]
    if not isinstance(last, dict) or not isinstance(last.get("parts"), list):
        raise frames.BadFrame("invalid_frame", _("The request has no message to send."))
    parts = [part for part in last["parts"] if isinstance(part, dict)]
    if last.get("role") == "assistant":
        return ChatRequest(chat_id, decisions=_decisions(parts), known_calls=_calls(parts))
    return ChatRequest(chat_id, message=_user_message(last, parts))


def _user_message(last: dict[str, Any], parts: list[dict[str, Any]]) -> dict[str, Any]:
    text = "".join(str(part.get("text", "")) for part in parts if part.get("type") == "text")
    frame: dict[str, Any] = {"type": "user_message", "text": text}
    files = [_file_id(part) for part in parts if part.get("type") == "file"]
    if files:
        frame["files"] = files  # ids, or what the frame's check refuses
    client_id = last.get("id")
    if isinstance(client_id, str) and _usable_client_id(client_id):
        frame["client_id"] = client_id  # stored with the message: loading names it so
    # As the socket's frame of the same message: the same size limit and checks.
    encoded = json.dumps(frame, ensure_ascii=False)
    frames.user_message(frames.decode_object(encoded, app_settings.MAX_MESSAGE_BYTES))
    return frame


def _usable_client_id(client_id: str) -> bool:
    # Kept only when the wire takes it as it is (a longer id is not refused: not kept).
    return 0 < len(client_id) <= CLIENT_ID_MAX_LENGTH and client_id.isprintable()


def _file_id(part: dict[str, Any]) -> Any:
    found = _FILE_URL.search(str(part.get("url", "")))
    return int(found.group(1)) if found else part.get("url")


def _decisions(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    decisions = []
    for part in parts:
        approval = part.get("approval")
        if part.get("state") != "approval-responded" or not isinstance(approval, dict):
            continue
        decision = {
            "type": "approval",
            "call_id": approval.get("id"),
            "approve": approval.get("approved"),
        }
        if approval.get("approved") is False and isinstance(approval.get("reason"), str):
            decision["message"] = approval["reason"]  # what the model reads instead
        frames.approval(decision)  # checked before any is decided
        decisions.append(decision)
    if not decisions:
        raise frames.BadFrame("invalid_frame", _("The request has no message to send."))
    return decisions


def _calls(parts: list[dict[str, Any]]) -> set[str]:
    return {str(part["toolCallId"]) for part in parts if "toolCallId" in part}
