"""Users, clients, items and URLs for the packaged chat's view tests."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from django_agent_sessions import DjangoSession


# Test modules import this by its function name; tests ask for it by fixture name.
@pytest.fixture(name="alice")
def alice_user():
    return get_user_model().objects.create_user(username="alice", password="pw-alice")


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def add(session_id: str, owner, *items) -> None:
    async_to_sync(DjangoSession(session_id, owner=owner).add_items)(list(items))


def items_of(session_id: str) -> list:
    return async_to_sync(DjangoSession(session_id).get_items)()


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict:
    return {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "id": "msg_1",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def url(name: str, session_id: str) -> str:
    return reverse(f"django_agent_sessions:{name}", args=[session_id])
