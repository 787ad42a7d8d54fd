"""Settings for the example project's tests: the library's test settings plus the
example's chat app (its pages, static files and demo login command).

Servers these tests start run ``example_project.settings`` itself; this module only
serves the in-process tests (views, commands) and the test database they share.
"""

from __future__ import annotations

from tests.settings import *  # noqa: F403
from tests.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "example_project.chat"]
ROOT_URLCONF = "example_project.urls"
