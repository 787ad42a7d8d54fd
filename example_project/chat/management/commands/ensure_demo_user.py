"""``manage.py ensure_demo_user``: the login ``bin/run`` prints.

Creates the user (a superuser, so that the admin link works) when it is missing and
leaves an existing one alone, so running it again changes nothing.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

DEFAULT_USERNAME = "demo"
DEFAULT_PASSWORD = "demo"  # noqa: S105 - a local demo login, printed on purpose


class Command(BaseCommand):
    help = "Create the demo login for the example project if it does not exist yet."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default=DEFAULT_USERNAME)
        parser.add_argument("--password", default=DEFAULT_PASSWORD)

    def handle(self, *args: Any, username: str, password: str, **options: Any) -> None:
        User = get_user_model()
        if User._default_manager.filter(**{User.USERNAME_FIELD: username}).exists():
            self.stdout.write(
                f"Demo login: {username} / {password} "
                "(created earlier; if you changed that password since, yours is kept)"
            )
            return
        User._default_manager.create_superuser(  # type: ignore[attr-defined]
            username=username, email="", password=password
        )
        self.stdout.write(f"Demo login: {username} / {password}")
