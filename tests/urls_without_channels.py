"""The chat's URLs in a project without Channels (``tests/test_wheel.py``)."""

from django.urls import include, path

urlpatterns = [path("chat/", include("django_agent_sessions.urls"))]
