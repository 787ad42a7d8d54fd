"""Staff users, URLs and actions for the conversation admin's tests."""

from __future__ import annotations

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


def action(client, name: str, conversations: list[AgentSession], **extra: str):
    data = {"action": name, "_selected_action": [c.pk for c in conversations], **extra}
    return client.post(CHANGELIST, data)
