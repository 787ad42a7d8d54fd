"""The adapter's URLs: ChatKit's endpoint at the include's root, and its files."""

from __future__ import annotations

from django.urls import resolve, reverse

from django_agent_sessions.protocols.chatkit import views


def test_the_paths_resolve_to_the_views():
    assert reverse("agent_sessions_chatkit:chatkit") == "/chatkit/"
    assert resolve("/chatkit/").func is views.chatkit
    upload = reverse("agent_sessions_chatkit:upload", args=["atc_1"])
    assert upload == "/chatkit/attachments/atc_1/upload"
    assert resolve(upload).func is views.upload
    assert resolve("/chatkit/attachments/atc_1").func is views.file
