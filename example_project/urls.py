from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

urlpatterns = [
    path("admin/", admin.site.urls),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(
            next_page="django_agent_sessions:chat", extra_context={"show_demo_hint": settings.DEBUG}
        ),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(next_page="login"), name="logout"),
    # Pages without an icon of their own (the admin's) make browsers ask for this one.
    path("favicon.ico", RedirectView.as_view(url=static("chat/favicon.svg"), permanent=True)),
    # The Vercel AI SDK's useChat over the same runs (DefaultChatTransport's api: "/ai-sdk/chat").
    path("ai-sdk/", include("django_agent_sessions.protocols.ai_sdk.urls")),
    # The packaged chat page, at the site's root.
    path("", include("django_agent_sessions.urls")),
]
