"""Users, logged-in clients and URLs for the conversation admin's tests."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from django_agent_sessions.models import AgentSession

CHANGELIST = reverse("admin:django_agent_sessions_agentsession_changelist")


def change_url(conversation: AgentSession) -> str:
    return reverse("admin:django_agent_sessions_agentsession_change", args=[conversation.pk])


def delete_url(conversation: AgentSession) -> str:
    return reverse("admin:django_agent_sessions_agentsession_delete", args=[conversation.pk])


def staff(username: str, *codenames: str) -> User:
    user: User = User.objects.create_user(username, f"{username}@example.com", "pw", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(
            content_type__app_label="django_agent_sessions", codename__in=codenames
        )
    )
    return user


# Test modules import these by their function names; tests ask for them by fixture name.


@pytest.fixture(name="viewer")
def viewer_client(client):
    client.force_login(staff("viewer", "view_agentsession"))
    return client


@pytest.fixture(name="deleter")
def deleter_client(client):
    user = staff(
        "deleter", "view_agentsession", "delete_agentsession", "view_sessionitem",
        "delete_sessionitem",
    )  # fmt: skip
    client.force_login(user)
    return client


@pytest.fixture(name="superuser")
def superuser_client(client):
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client


def action(client, name: str, conversations: list[AgentSession], **extra: str):
    data = {"action": name, "_selected_action": [c.pk for c in conversations], **extra}
    return client.post(CHANGELIST, data)
