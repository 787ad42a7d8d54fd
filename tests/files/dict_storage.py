"""A storage backend of the tests' own, written the way a project writes one for a
service Django has no backend for: the few methods of Django's ``Storage`` API, over a
dict of buckets (keys to bytes and a modification time) in this process. Each bucket
also logs the names it was asked to delete, so that a test can tell a file deleted twice."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any, ClassVar

from django.core.files.base import ContentFile, File
from django.core.files.storage import Storage
from django.utils import timezone


@dataclass
class Stored:
    data: bytes
    modified: datetime


class DictStorage(Storage):
    """Files of ``bucket`` (an ``OPTIONS`` key), kept for the process: a new instance
    (Django makes one per settings change) sees what an earlier one saved."""

    buckets: ClassVar[dict[str, dict[str, Stored]]] = {}
    deletions: ClassVar[dict[str, list[str]]] = {}

    def __init__(self, bucket: str = "default") -> None:
        self.files = self.buckets.setdefault(bucket, {})
        self.deleted = self.deletions.setdefault(bucket, [])

    def _save(self, name: str, content: File[Any]) -> str:
        content.seek(0)
        self.files[name] = Stored(b"".join(content.chunks()), timezone.now())
        return name

    def _open(self, name: str, mode: str = "rb") -> IO[Any]:
        if name not in self.files:
            raise FileNotFoundError(name)
        return ContentFile(self.files[name].data, name=name)  # type: ignore[return-value]

    def delete(self, name: str) -> None:
        self.deleted.append(name)
        self.files.pop(name, None)

    def exists(self, name: str) -> bool:
        return name in self.files

    def size(self, name: str) -> int:
        return len(self.files[name].data)

    def get_modified_time(self, name: str) -> datetime:
        return self.files[name].modified

    def listdir(self, path: str) -> tuple[list[str], list[str]]:
        prefix = path.rstrip("/") + "/"
        below = [name.removeprefix(prefix) for name in self.files if name.startswith(prefix)]
        if not below:
            raise FileNotFoundError(path)
        folders = sorted({rest.split("/", 1)[0] for rest in below if "/" in rest})
        return folders, sorted(rest for rest in below if "/" not in rest)
