"""The share links' authorization matrix (docs/conversations.md, "Share links"), run on
Django's test client and on two real workers (``tests/chat/test_shared_workers.py``).

A cell is (mode, link state, person, action); its answer is ``OK``, ``LOGIN`` (the login
page) or ``GONE`` (404). Every refusal is checked for leaks too: nothing of the
conversation (its text, its title, its file's bytes) is in the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.urls import reverse
from django.utils import timezone

from django_agent_sessions import serialization
from django_agent_sessions.files import inline
from django_agent_sessions.models import AgentSession, Attachment, SharedLink
from django_agent_sessions.store.items import Scope, append_items
from tests.attachment_helpers import files_message, png
from tests.chat.helpers import add
from tests.conftest import assistant_message

OK, LOGIN, GONE = "ok", "login", "404"
MODES = ("off", "login", "public")
STATES = ("live", "revoked", "expired")
PEOPLE = ("owner", "other", "anonymous", "staff")
ACTIONS = ("view", "file", "copy", "revoke")
SECRET = "Zebra-secret-words"  # said in the conversation
TITLE = "Quokka-title"
TOOL_SECRET = "Platypus-tool-output"  # a tool's output: hidden by default
IMAGE = png(8, 8)


def expected(mode: str, state: str, person: str, action: str) -> str:
    """The documented answer of one cell."""
    if mode == "off":
        return GONE
    signed_in = person != "anonymous"
    if action == "revoke":  # the creator's own, live or not; anyone else's is not there
        if not signed_in:
            return LOGIN
        return OK if person == "owner" else GONE
    if not signed_in and (mode == "login" or action == "copy"):
        return LOGIN  # asked before the token is looked up: nothing is learnt
    return OK if state == "live" else GONE


def conversation(owner: Any, session_id: str = "shared-talk") -> tuple[AgentSession, int]:
    """A conversation with a message and an image, a tool call and its output, a reply;
    and the image's attachment id."""
    with_file(owner, session_id, files_message(f"Look {SECRET}", image=IMAGE))
    add(
        session_id,
        owner,
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": TOOL_SECRET},
        assistant_message(f"Reply {SECRET}"),
    )
    row = AgentSession.objects.get(session_id=session_id)
    AgentSession.objects.filter(pk=row.pk).update(title=TITLE)
    return row, Attachment.objects.filter(session=row).get().pk


def link_in(row: AgentSession, owner: Any, state: str) -> SharedLink:
    newest = row.items.order_by("-id").values_list("id", flat=True).first()
    now = timezone.now()
    return SharedLink.objects.create(
        session=row,
        created_by=owner,
        up_to_item_id=newest,
        revoked_at=now if state == "revoked" else None,
        expires_at=now - timedelta(seconds=1) if state == "expired" else None,
    )


def with_file(owner: Any, session_id: str, message: Any) -> None:
    """Store ``message`` with its files as the chat does (each file an attachment)."""
    batch, files = inline.split_batch([message], 0)
    encoded = serialization.encode_items(batch, max_bytes=None, max_depth=100)
    append_items(Scope(session_id, owner.pk, "default"), encoded, "", files)


@dataclass
class Answer:
    status: int
    location: str
    body: bytes


# One request: (method, path) -> Answer, as some person.
Ask = Callable[[str, str], Answer]


def paths(token: str, attachment_id: int) -> dict[str, tuple[str, str]]:
    def url(name: str, *args: Any) -> str:
        return reverse(f"django_agent_sessions:{name}", args=[token, *args])

    return {
        "view": ("GET", url("shared")),
        "file": ("GET", url("shared_file", attachment_id)),
        "copy": ("POST", url("share_copy")),
        "revoke": ("POST", url("share_revoke")),
    }


def check(answer: Answer, want: str, action: str, cell: tuple[str, ...]) -> None:
    """The answer is the documented one, and a refusal shows nothing of the conversation."""
    if want == OK:
        ok = {"view": 200, "file": 200, "copy": 302, "revoke": 302}[action]
        assert answer.status == ok, cell
        if action == "view":
            assert SECRET.encode() in answer.body, cell
            assert TOOL_SECRET.encode() not in answer.body, cell  # tools hidden
        if action == "file":
            assert answer.body == IMAGE, cell
        if action == "copy":
            assert "/c/" in answer.location, cell
        return
    if want == LOGIN:
        assert answer.status == 302, cell
        assert "login" in answer.location, cell
    else:
        assert answer.status == 404, cell
    for leak in (SECRET, TITLE, TOOL_SECRET):
        assert leak.encode() not in answer.body, cell
    assert IMAGE not in answer.body, cell
