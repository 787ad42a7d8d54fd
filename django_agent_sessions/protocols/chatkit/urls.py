"""The ChatKit adapter's URLs:
``path("chatkit/", include("django_agent_sessions.protocols.chatkit.urls"))``.

The client's ``api: {url: "/chatkit/"}`` POSTs every request to the include's root;
uploads and previews go to the URLs the attachment store hands out.
"""

from __future__ import annotations

from django.urls import path

from django_agent_sessions.protocols.chatkit import views

app_name = "agent_sessions_chatkit"

urlpatterns = [
    path("", views.chatkit, name="chatkit"),
    path("attachments/<str:attachment_id>/upload", views.upload, name="upload"),
    path("attachments/<str:attachment_id>", views.file, name="file"),
]
