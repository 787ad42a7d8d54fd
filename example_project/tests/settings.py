"""Settings for the example project's tests: the library's test settings plus the
example's chat app (its pages, static files and demo login command).

Servers these tests start run ``example_project.settings`` itself; this module only
serves the in-process tests (views, commands) and the test database they share.
"""

from __future__ import annotations

from tests.settings import *  # noqa: F403
from tests.settings import INSTALLED_APPS, MIDDLEWARE

# Before the app, as in the example's settings: its chat.html extends the packaged one.
INSTALLED_APPS = [
    *[app for app in INSTALLED_APPS if app != "django_agent_sessions"],
    "example_project.chat",
    "django_agent_sessions",
]
MIDDLEWARE = [*MIDDLEWARE, "example_project.chat.security.ContentSecurityPolicyMiddleware"]
ROOT_URLCONF = "example_project.urls"
