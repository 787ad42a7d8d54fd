"""Clients, items and URLs for the packaged chat's view tests."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from django.test import Client
from django.urls import reverse

from django_agent_sessions import DjangoSession


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def add(session_id: str, owner, *items) -> None:
    async_to_sync(DjangoSession(session_id, owner=owner).add_items)(list(items))


def items_of(session_id: str) -> list:
    return async_to_sync(DjangoSession(session_id).get_items)()


def url(name: str, session_id: str) -> str:
    return reverse(f"django_agent_sessions:{name}", args=[session_id])
