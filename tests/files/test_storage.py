"""Attachments' bytes in the storage the settings name, and the per-process text cache."""

from __future__ import annotations

import base64

import pytest

from django_agent_sessions.files import storage
from tests.attachment_helpers import stored_files


def test_names_are_per_conversation_and_per_content():
    sha = "ab" * 32
    assert storage.name_for("conv-1", sha) == storage.name_for("conv-1", sha)
    assert storage.name_for("conv-1", sha) != storage.name_for("conv-2", sha)
    assert storage.name_for("conv/../1", sha).startswith("agent_sessions/")
    assert storage.name_for("conv/../1", sha).count("/") == 2


def test_settings_override_the_defaults(settings):
    settings.AGENT_SESSIONS = {"ATTACHMENTS": {"DIRECTORY": "uploads", "OFFLOAD_CHARS": 10}}
    assert storage.setting("OFFLOAD_CHARS") == 10
    assert storage.setting("STORAGE") == "default"
    assert storage.name_for("c", "00").startswith("uploads/")


def test_a_file_is_read_once_then_served_from_memory_until_deleted(file_storage):
    name = storage.save("agent_sessions/x/file", b"bytes of a file")
    expected = "data:text/plain;base64," + base64.b64encode(b"bytes of a file").decode()
    first = storage.load_text(name, "data:text/plain;base64,")
    assert first == expected
    (path,) = stored_files(file_storage)
    path.write_bytes(b"changed behind the cache's back")
    assert storage.load_text(name, "data:text/plain;base64,") is first  # not even copied
    storage.delete([name])
    assert stored_files(file_storage) == []
    with pytest.raises(FileNotFoundError):
        storage.load_text(name, "data:text/plain;base64,")


def test_the_cache_keeps_the_most_recently_used_texts_within_its_budget():
    cache = storage._TextCache()
    a, b, c = ("a", ""), ("b", ""), ("c", "data:")
    cache.put(a, "x" * 40, budget=100)
    cache.put(b, "y" * 40, budget=100)
    assert cache.get(a) == "x" * 40  # now the most recent
    cache.put(c, "z" * 40, budget=100)
    assert (cache.get(a), cache.get(b), cache.get(c)) == ("x" * 40, None, "z" * 40)
    cache.put(("huge", ""), "h" * 101, budget=100)
    assert cache.get(("huge", "")) is None
    cache.forget("c")
    assert cache.get(c) is None


def test_another_storage_is_read_afresh(file_storage, settings, tmp_path):
    name = storage.save("agent_sessions/y/file", b"first storage")
    assert storage.load_text(name, "") == base64.b64encode(b"first storage").decode()
    other = tmp_path / "other"
    (other / "agent_sessions" / "y").mkdir(parents=True)
    (other / name).write_bytes(b"second storage")
    default = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**default, "OPTIONS": {"location": str(other)}},
    }
    assert storage.load_text(name, "") == base64.b64encode(b"second storage").decode()
