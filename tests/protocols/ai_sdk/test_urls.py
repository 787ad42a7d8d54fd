"""The adapter's URLs are the ones ``DefaultChatTransport({api})`` asks for."""

from __future__ import annotations

from django.urls import resolve, reverse

from django_agent_sessions.protocols.ai_sdk import views


def test_the_transport_s_paths_resolve_to_the_views():
    api = reverse("agent_sessions_ai_sdk:chat")
    assert api == "/ai-sdk/chat"
    # The client's reconnect URL is ``api`` + ``/<id>/stream``, as it is.
    assert resolve(f"{api}/conv-1/stream").func is views.resume
    assert resolve(f"{api}/conv-1/messages").func is views.messages
    assert resolve(f"{api}/conv-1/cancel").func is views.cancel
    assert resolve(api).func is views.chat
