"""What the offline demo model says about the files a message carries: each file's name,
type, size and, for an image, its dimensions, read from the bytes the model was given
(the SDK's ``input_image`` data URLs and ``input_file`` data)."""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Mapping
from typing import Any

_DATA = {"input_image": "image_url", "input_file": "file_data"}


def describe_files(message: Mapping[str, Any]) -> str:
    """A sentence per file of ``message`` ("" when it has none)."""
    content = message.get("content")
    parts = (
        [part for part in content if isinstance(part, Mapping)] if isinstance(content, list) else []
    )
    described = [_describe(part) for part in parts if part.get("type") in _DATA]
    if not described:
        return ""
    noun = "file" if len(described) == 1 else "files"
    return f"I received {len(described)} {noun}: " + "; ".join(described) + "."


def _describe(part: Mapping[str, Any]) -> str:
    value = str(part.get(_DATA[str(part.get("type"))]) or "")
    header, _, data = value.partition(";base64,") if value.startswith("data:") else ("", "", value)
    content_type = header[len("data:") :] or "application/octet-stream"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    name = str(
        part.get("filename") or ("an image" if part.get("type") == "input_image" else "a file")
    )
    size = f"{len(raw):,} bytes"
    dimensions = image_size(raw)
    if dimensions:
        size += f", {dimensions[0]} x {dimensions[1]} pixels"
    return f"{name} ({content_type}, {size})"


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) of a PNG, GIF, JPEG or WebP image; None for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return width, height
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return width, height
    if data.startswith(b"\xff\xd8"):
        return _jpeg_size(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data)
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return None
        marker, length = data[at + 1], struct.unpack(">H", data[at + 2 : at + 4])[0]
        # Start-of-frame markers (not DHT, JPG or DAC, which share the range).
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None
