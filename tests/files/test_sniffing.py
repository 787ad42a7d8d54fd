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


_UTF8_BOM = b"\xef\xbb\xbf"
_MARKUP = [
    "<!DOCTYPE html><script>alert(1)</script>",
    "<html><body onload=alert(1)>",
    "<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>",
    "<?xml version='1.0'?>\n<svg xmlns='http://www.w3.org/2000/svg'/>",
    "<script>alert(1)</script>",
]


@pytest.mark.parametrize("markup", _MARKUP)
@pytest.mark.parametrize(
    "before",
    [
        _UTF8_BOM,
        _UTF8_BOM + b"\n",
        _UTF8_BOM + b" \t\r\n\x0c ",
        b"\n" + _UTF8_BOM + b"\n",
        _UTF8_BOM + _UTF8_BOM + b" ",
        _UTF8_BOM + "\u00a0\u2028\u3000\u200b".encode(),
    ],
    ids=["bom", "bom-newline", "bom-whitespace", "newline-bom", "two-boms", "unicode-spaces"],
)
def test_markup_after_a_utf8_bom_and_whitespace_is_not_text(before: bytes, markup: str) -> None:
    assert content_type(before + markup.encode()) == OCTET_STREAM


@pytest.mark.parametrize("markup", _MARKUP)
@pytest.mark.parametrize(
    "encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"], ids=lambda e: e
)
def test_markup_after_a_utf16_or_utf32_bom_is_not_text(encoding: str, markup: str) -> None:
    assert content_type(("\ufeff \r\n" + markup).encode(encoding)) == OCTET_STREAM


def test_markup_after_more_whitespace_than_is_read_is_not_text():
    assert content_type(_UTF8_BOM + b" " * 10_000 + b"<html>") == OCTET_STREAM


def test_text_after_a_bom_and_whitespace_is_still_text():
    assert content_type(_UTF8_BOM + b"\n  Plain words, 1 < 2.\n") == "text/plain"
    assert content_type(b"   \n") == "text/plain"
