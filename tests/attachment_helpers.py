"""Files for the attachment tests: real PNG images, data URLs, and a storage of the
test's own (a directory under ``tmp_path``)."""

from __future__ import annotations

import base64
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest


def png(width: int, height: int) -> bytes:
    """A valid RGB PNG of noise (stored uncompressed: about 3 x width x height bytes)."""
    rows = b"".join(b"\x00" + os.urandom(width * 3) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 0))
        + chunk(b"IEND", b"")
    )


def data_url(data: bytes, content_type: str = "image/png") -> str:
    return f"data:{content_type};base64,{base64.b64encode(data).decode('ascii')}"


def image_message(data: bytes, text: str = "What is in this picture?") -> dict[str, Any]:
    return files_message(text, image=data)


def files_message(
    text: str, *, image: bytes | None = None, file: tuple[str, str, bytes] | None = None
) -> dict[str, Any]:
    """A person's message as the chat sends it: ``text``, then an inline PNG ``image``
    and a ``file`` given as (name, content type, bytes), each if given."""
    content: list[dict[str, Any]] = [{"type": "input_text", "text": text}]
    if image is not None:
        content.append({"type": "input_image", "image_url": data_url(image), "detail": "auto"})
    if file is not None:
        name, content_type, data = file
        content.append(
            {"type": "input_file", "file_data": data_url(data, content_type), "filename": name}
        )
    return {"role": "user", "content": content}


@pytest.fixture
def file_storage(settings: Any, tmp_path: Path) -> Path:
    """The default storage, in a directory of this test's own; its directory."""
    location = tmp_path / "media"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(location)},
        },
    }
    return location


def stored_files(location: Path) -> list[Path]:
    return sorted(path for path in location.rglob("*") if path.is_file())
