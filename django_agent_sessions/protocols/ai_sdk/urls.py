"""The AI SDK adapter: ``path("ai-sdk/", include("django_agent_sessions.protocols.ai_sdk.urls"))``.

The paths are those ``DefaultChatTransport({api: "/ai-sdk/chat"})`` asks for: its POST
at ``api``, its resume at ``api/<chat id>/stream``; with the history for ``useChat``'s
initial messages and an explicit Stop beside them. No trailing slashes: the client
appends ``/<id>/stream`` to ``api`` as it is.
"""

from __future__ import annotations

from django.urls import path

from django_agent_sessions.protocols.ai_sdk import views

app_name = "agent_sessions_ai_sdk"

urlpatterns = [
    path("chat", views.chat, name="chat"),
    path("chat/<str:chat_id>/stream", views.resume, name="stream"),
    path("chat/<str:chat_id>/messages", views.messages, name="messages"),
    path("chat/<str:chat_id>/cancel", views.cancel, name="cancel"),
]
