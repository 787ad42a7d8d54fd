from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("chat/", include("django_agent_sessions.urls")),
    path("ag-ui/", include("django_agent_sessions.protocols.ag_ui.urls")),
    path("ai-sdk/", include("django_agent_sessions.protocols.ai_sdk.urls")),
    path("chatkit/", include("django_agent_sessions.protocols.chatkit.urls")),
]
