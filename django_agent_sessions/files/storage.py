"""Attachments' bytes in Django's storage, and their settings.

``AGENT_SESSIONS["ATTACHMENTS"]`` is a dict over ``DEFAULTS``: the ``STORAGES`` alias
(so a project on S3 or GCS through django-storages needs nothing else), how long inline
data must be to be stored as a file, how many bytes of files this process keeps in
memory as base64 text, and what the chat's upload accepts. The cache is what keeps
``get_items`` of a conversation with images about as fast as one without: a file is
read from storage once per process, then its text is reused (files never change: a
name holds one SHA-256's bytes for good).
"""

from __future__ import annotations

import base64
import hashlib
import threading
from collections import OrderedDict
from typing import Any

from django.core.files.base import ContentFile
from django.core.files.storage import Storage, storages
from django.core.signals import setting_changed

from django_agent_sessions.conf import app_settings

DEFAULTS: dict[str, Any] = {
    # The STORAGES alias the files go to.
    "STORAGE": "default",
    # Inline data (base64) longer than this many characters is stored as a file.
    "OFFLOAD_CHARS": 64 * 1024,
    # Characters of stored files' text (data URLs) kept in memory per process, so that
    # get_items reads a file from storage once: ten 5 MB images are 67 million.
    "CACHE_BYTES": 128 * 1024 * 1024,
    # The directory (key prefix) of the files in the storage.
    "DIRECTORY": "agent_sessions",
    # What the chat's upload accepts (chat/uploads.py): types sniffed from the bytes ...
    "UPLOAD_TYPES": (
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "application/pdf",
        "text/plain",
    ),
    # ... at most this many bytes each, at most this many per message ...
    "MAX_UPLOAD_BYTES": 10 * 1024 * 1024,
    "MAX_FILES_PER_MESSAGE": 5,
    # ... at most this many uploads per user (a rate, as RATE_LIMIT), and this many bytes
    # of files kept per user in all (None: no limit).
    "UPLOAD_RATE": "30/h",
    "MAX_USER_BYTES": 200 * 1024 * 1024,
}


def setting(name: str) -> Any:
    configured = app_settings.ATTACHMENTS or {}
    return configured[name] if name in configured else DEFAULTS[name]


def storage() -> Storage:
    return storages[setting("STORAGE")]


def name_for(session_id: str, sha256: str) -> str:
    """Where a conversation's file goes: one directory per conversation (by a hash of its
    id, which may hold any character), one name per content."""
    directory = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]
    return f"{setting('DIRECTORY')}/{directory}/{sha256}"


def save(name: str, data: bytes) -> str:
    """Store ``data``; the name the storage chose (it may differ from ``name``)."""
    return storage().save(name, ContentFile(data))


def delete(names: list[str]) -> None:
    target = storage()
    for name in names:
        target.delete(name)
        _cache.forget(name)


def load_text(name: str, prefix: str) -> str:
    """``prefix`` and a stored file's bytes as base64 text: the string an item held.

    From memory after the first read: the very same string object, so that an item with
    a 7 MB data URL is put back together without copying it.
    """
    key = (name, prefix)
    text = _cache.get(key)
    if text is None:
        with storage().open(name, "rb") as stored:
            text = prefix + base64.b64encode(stored.read()).decode("ascii")
        _cache.put(key, text, int(setting("CACHE_BYTES")))
    return text


class _TextCache:
    """Least recently used base64 texts, bounded in characters; thread-safe (the
    session's reads run on asgiref's thread, a thread pool's, or the caller's)."""

    def __init__(self) -> None:
        self._texts: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> str | None:
        with self._lock:
            text = self._texts.get(key)
            if text is not None:
                self._texts.move_to_end(key)
            return text

    def put(self, key: tuple[str, str], text: str, budget: int) -> None:
        if len(text) > budget:
            return
        with self._lock:
            if key in self._texts:
                return
            self._texts[key] = text
            self._size += len(text)
            while self._size > budget:
                _, dropped = self._texts.popitem(last=False)
                self._size -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._texts.clear()
            self._size = 0

    def forget(self, name: str) -> None:
        """Every text of the file ``name`` (whatever its prefix)."""
        with self._lock:
            for key in [key for key in self._texts if key[0] == name]:
                self._size -= len(self._texts.pop(key))


_cache = _TextCache()


def _forget_on_change(*, setting: str, **kwargs: Any) -> None:
    """Another storage (``override_settings`` in tests) may hold other bytes under the
    same names: what was read from the old one is forgotten."""
    if setting in {"STORAGES", "MEDIA_ROOT", "AGENT_SESSIONS"}:
        _cache.clear()


# Connected at import, as conf.py's receiver: the cache lives in this module.
setting_changed.connect(_forget_on_change, dispatch_uid="django_agent_sessions.files.storage")
