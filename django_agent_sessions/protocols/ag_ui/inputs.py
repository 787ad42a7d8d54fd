"""What an AG-UI request asks of a conversation.

The body is AG-UI's ``RunAgentInput``, checked by the protocol's own model. Its
``threadId`` names the conversation; the client sends its whole copy of the
conversation, of which only the last message counts: the stored history is the truth
(the model reads it from the database, never from the client). A request is one of:

- ``Send``: the last message is the person's: start a run answering it;
- ``Resume``: ``resume`` answers the interrupts of a run waiting for tool approvals;
- ``Load``: neither: the stored history as ``MESSAGES_SNAPSHOT`` (and the run in flight,
  followed to its end), what a client asks when it opens a thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ag_ui.core import RunAgentInput, TextPart, UserMessage
from django.utils.translation import gettext as _
from pydantic import ValidationError

from django_agent_sessions.streaming import frames


@dataclass(frozen=True)
class Send:
    text: str
    client_id: str  # the person's message id, kept on its stored item


@dataclass(frozen=True)
class Decision:
    call_id: str
    approve: bool
    message: str


@dataclass(frozen=True)
class Resume:
    decisions: tuple[Decision, ...]


@dataclass(frozen=True)
class Load:
    pass


Asked = Send | Resume | Load


def parse(body: str, max_bytes: int) -> RunAgentInput:
    """The request's ``RunAgentInput``; ``BadFrame`` (``invalid_frame``) when it is not one."""
    content = frames.decode_object(body, max_bytes)  # size, JSON, depth: the wire's checks
    try:
        return RunAgentInput.model_validate(content)
    except ValidationError:
        raise frames.BadFrame("invalid_frame", _("The request is not a RunAgentInput.")) from None


def asked(run_input: RunAgentInput) -> Asked:
    """What ``run_input`` asks (see the module)."""
    if run_input.resume:
        return Resume(tuple(_decision(entry) for entry in run_input.resume))
    last = run_input.messages[-1] if run_input.messages else None
    if isinstance(last, UserMessage):
        return Send(_text(last.content), _client_id(last.id))
    return Load()


def _decision(entry: Any) -> Decision:
    """A resume entry: ``resolved`` with ``{"approve": bool, "message": str}`` decides;
    ``cancelled`` (the person dismissed the question) rejects."""
    payload = entry.payload if isinstance(entry.payload, dict) else {}
    approve = entry.status == "resolved" and payload.get("approve") is True
    message = payload.get("message", "")
    return Decision(entry.interrupt_id, approve, message if isinstance(message, str) else "")


def _text(content: str | list[Any]) -> str:
    """The message's text: a string, or its text parts joined (media parts are not
    taken: files go through the chat's uploads)."""
    if isinstance(content, str):
        return content
    return "\n".join(part.text for part in content if isinstance(part, TextPart))


def _client_id(message_id: str) -> str:
    """The client's message id as the wire's ``client_id`` when it fits one, so that the
    stored message keeps it and a later snapshot names it as the client did."""
    fits = 0 < len(message_id) <= frames.CLIENT_ID_MAX_LENGTH and message_id.isprintable()
    return message_id if fits else ""
