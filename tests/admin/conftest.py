"""Clients signed in as each kind of admin user: a viewer, a deleter, a superuser."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from tests.admin.helpers import staff


@pytest.fixture
def viewer(client):
    client.force_login(staff("viewer", "view_agentsession"))
    return client


@pytest.fixture
def deleter(client):
    user = staff(
        "deleter", "view_agentsession", "delete_agentsession", "view_sessionitem",
        "delete_sessionitem",
    )  # fmt: skip
    client.force_login(user)
    return client


@pytest.fixture
def superuser(client):
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client
