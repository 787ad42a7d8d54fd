from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ChatConfig(AppConfig):
    """The example's touches on the packaged chat: login, icon, demo hint, demo login command."""

    name = "example_project.chat"
    label = "example_chat"
    verbose_name = _("Example chat")
