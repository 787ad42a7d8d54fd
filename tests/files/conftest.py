"""Fixtures of the files tests: a database of the test's own, and a storage backend of
the tests' own (``tests.files.dict_storage``) under its own ``STORAGES`` alias."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.files.dict_storage import DictStorage, Stored
from tests.files.fresh_database import fresh_database  # noqa: F401 - a database of the test's own


@pytest.fixture
def bucket_name(settings: Any, file_storage: Any) -> Iterator[str]:
    """A bucket of this test's own, the app's storage by its alias; its name."""
    name = uuid.uuid4().hex
    settings.STORAGES = {
        **settings.STORAGES,
        "agent_files": {
            "BACKEND": "tests.files.dict_storage.DictStorage",
            "OPTIONS": {"bucket": name},
        },
    }
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "ATTACHMENTS": {"STORAGE": "agent_files"}}
    yield name
    DictStorage.buckets.pop(name, None)
    DictStorage.deletions.pop(name, None)


@pytest.fixture
def bucket(bucket_name: str) -> dict[str, Stored]:
    """The files of the test's bucket, by name."""
    return DictStorage.buckets.setdefault(bucket_name, {})


@pytest.fixture
def deleted(bucket_name: str) -> list[str]:
    """Every name the app asked the test's bucket to delete, in order (once each, or a
    file was deleted twice)."""
    return DictStorage.deletions.setdefault(bucket_name, [])
