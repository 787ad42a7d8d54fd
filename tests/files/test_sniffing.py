"""A file's type from its bytes."""

from __future__ import annotations

import pytest

from django_agent_sessions.files.sniffing import OCTET_STREAM, content_type
from tests.attachment_helpers import png


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (png(2, 2)[:33], "image/png"),
        (b"\xff\xd8\xff\xe0" + bytes(20), "image/jpeg"),
        (b"GIF89a" + bytes(10), "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"%PDF-1.4\n", "application/pdf"),
        ("Plain words, é and ü.\n".encode(), "text/plain"),
        (b"<!doctype html><script>alert(1)</script>", OCTET_STREAM),
        (b"  <svg xmlns='http://www.w3.org/2000/svg'/>", OCTET_STREAM),
        (b"\xef\xbb\xbf<html>", OCTET_STREAM),
        (b"\x7fELF\x02\x01\x01\x00", OCTET_STREAM),
        (b"text with a \x00 byte", OCTET_STREAM),
    ],
)
def test_the_type_comes_from_the_content(data: bytes, expected: str) -> None:
    assert content_type(data) == expected


def test_text_cut_inside_a_character_is_still_text():
    assert content_type(("a" + "é" * 3000).encode()) == "text/plain"
