"""A file's content type from its first bytes, never from its name or what a client says.

Only the types the chat accepts are recognised (images, PDF, text); everything else is
``application/octet-stream``, which is served only as a download. A signature table
this short needs no library (a full magic database would also name types the app never
serves inline).
"""

from __future__ import annotations

import re

OCTET_STREAM = "application/octet-stream"

_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
)

# Byte order marks of UTF-16 and UTF-32 (UTF-32 LE's starts with UTF-16 LE's). A browser
# that finds one reads the file in that encoding, markup included; "text" here is UTF-8.
_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")

# What may come before markup and leave it markup to a browser: whitespace, byte order
# marks (U+FEFF, any number of them) and the zero-width characters.
_LEADING = re.compile(r"\A[\s\ufeff\u200b\u200c\u200d\u2060]+")
_HEAD_BYTES = 4096


def content_type(data: bytes) -> str:
    """The type ``data`` is, by its signature: an image type, PDF, ``text/plain`` for
    UTF-8 text without markup, else ``application/octet-stream``."""
    for signature, kind in _SIGNATURES:
        if data.startswith(signature):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if _is_plain_text(data):
        return "text/plain"
    return OCTET_STREAM


def _is_plain_text(data: bytes) -> bool:
    """UTF-8 without NUL bytes or markup (HTML and SVG are never "text": a browser shown
    them as text/plain could still be talked into rendering them elsewhere). Markup is
    found after any byte order marks and whitespace, as a browser finds it."""
    head = data[:_HEAD_BYTES]
    if b"\x00" in head or head.startswith(_WIDE_BOMS):
        return False
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        try:  # the head may end inside a multi-byte character
            text = head[:-3].decode("utf-8")
        except UnicodeDecodeError:
            return False
    rest = _LEADING.sub("", text, count=1)
    if not rest and len(data) > len(head):
        return False  # a head of nothing but whitespace: what follows may be markup
    return not rest.startswith("<")
