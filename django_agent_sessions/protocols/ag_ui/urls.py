"""The AG-UI endpoint's URL: include it where AG-UI clients should post.

``path("ag-ui/", include("django_agent_sessions.protocols.ag_ui.urls"))`` serves
``POST ag-ui/`` (URL name ``agent_sessions_ag_ui:run``).
"""

from __future__ import annotations

from django.urls import path

from django_agent_sessions.protocols.ag_ui import views

app_name = "agent_sessions_ag_ui"

urlpatterns = [path("", views.run, name="run")]
