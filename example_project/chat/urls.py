from __future__ import annotations

from django.urls import path

from example_project.chat import views

app_name = "chat"

urlpatterns = [
    path("", views.home, name="home"),
    path("new/", views.new_conversation, name="new"),
    path("conversations/", views.conversation_list, name="list"),
    path("c/<str:session_id>/", views.conversation, name="conversation"),
    path("c/<str:session_id>/clear/", views.clear_conversation, name="clear"),
]
