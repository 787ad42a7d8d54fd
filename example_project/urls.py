from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from example_project.chat.security import content_security_policy

urlpatterns = [
    path("admin/", admin.site.urls),
    path(
        "accounts/login/",
        content_security_policy(
            auth_views.LoginView.as_view(
                next_page="chat:home", extra_context={"show_demo_hint": settings.DEBUG}
            )
        ),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(next_page="login"), name="logout"),
    path("", include("example_project.chat.urls")),
]
