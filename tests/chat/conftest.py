"""The user whose conversations the packaged chat's view tests open."""

from __future__ import annotations

import pytest


@pytest.fixture
def alice(make_user):
    return make_user("alice")
