"""The packaged chat: ``path("chat/", include("django_agent_sessions.urls"))``.

Every URL name is namespaced ``django_agent_sessions:``. The websocket the page opens is
served separately, by ``django_agent_sessions.routing.websocket_urlpatterns`` in the
project's ``asgi.py``.
"""

from __future__ import annotations

from django.urls import path

from django_agent_sessions.chat import views

app_name = "django_agent_sessions"

urlpatterns = [
    path("", views.chat, name="chat"),
    path("new/", views.new_conversation, name="new"),
    path("conversations/", views.conversation_list, name="list"),
    path("c/<str:session_id>/", views.conversation, name="conversation"),
    path("c/<str:session_id>/rename/", views.rename_conversation, name="rename"),
    path("c/<str:session_id>/delete/", views.delete_conversation, name="delete"),
    path("c/<str:session_id>/clear/", views.clear_conversation, name="clear"),
    path("c/<str:session_id>/rewind/", views.rewind_conversation, name="rewind"),
]
