"""Helpers for the tests of ``django_agent_sessions.store``: conversations written the way
``DjangoSession`` writes them, rows it would never write, and what a conversation holds."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from django_agent_sessions import serialization
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.store import items as stored_items
from django_agent_sessions.store import runs

UNREADABLE = "not json {"  # a hand-edited payload: the store skips it when reading


def scope(session_id: str, owner_id: Any = None) -> stored_items.Scope:
    return stored_items.Scope(session_id, owner_id, "default")


def encode(*items: Any) -> list[serialization.EncodedItem]:
    return serialization.encode_items(list(items), max_bytes=None, max_depth=50)


def write(session_id: str, *items: Any, owner_id: Any = None, title: str = "") -> AgentSession:
    """Append ``items`` as one batch through the store; the conversation row."""
    stored_items.append_items(scope(session_id, owner_id), encode(*items), title)
    row: AgentSession = AgentSession.objects.get(session_id=session_id)
    return row


def add_unreadable(conversation: AgentSession) -> SessionItem:
    """A row whose payload is not JSON (only a hand edit makes one)."""
    row: SessionItem = SessionItem.objects.create(session=conversation, payload=UNREADABLE)
    AgentSession.objects.filter(pk=conversation.pk).update(item_count=conversation.item_count + 1)
    conversation.refresh_from_db()
    return row


def stored(session_id: str) -> list[Any]:
    """Every readable item of the conversation, oldest first, straight from the table."""
    payloads = SessionItem.objects.filter(session__session_id=session_id).order_by("id")
    return serialization.decode_payloads(payloads.values_list("payload", flat=True))


def item_ids(session_id: str) -> list[int]:
    rows = SessionItem.objects.filter(session__session_id=session_id).order_by("id")
    return list(rows.values_list("id", flat=True))


def user(name: str) -> AbstractBaseUser:
    created: AbstractBaseUser = get_user_model().objects.create_user(username=name)
    return created


def call(call_id: str, name: str = "get_weather") -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}


def output(call_id: str, text: str = "done") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def start(conversation: AgentSession, **kwargs: Any) -> runs.StartedRun:
    kwargs.setdefault("lease_seconds", 60.0)
    kwargs.setdefault("agent_name", "Assistant")
    started = runs.start.sync(conversation.pk, **kwargs)
    assert started is not None
    return started


def outputs_of(session_id: str) -> dict[str, Any]:
    found = stored(session_id)
    return {item["call_id"]: item["output"] for item in found if "output" in item}
