"""A file's content type from its first bytes, never from its name or what a client says.

Only the types the chat accepts are recognised (images, PDF, text); everything else is
``application/octet-stream``, which is served only as a download. A signature table
this short needs no library (a full magic database would also name types the app never
serves inline).
"""

from __future__ import annotations

OCTET_STREAM = "application/octet-stream"

_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
)


def content_type(data: bytes) -> str:
    """The type ``data`` is, by its signature: an image type, PDF, ``text/plain`` for
    UTF-8 text without markup, else ``application/octet-stream``."""
    for signature, kind in _SIGNATURES:
        if data.startswith(signature):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if _is_plain_text(data[:4096]):
        return "text/plain"
    return OCTET_STREAM


def _is_plain_text(head: bytes) -> bool:
    """UTF-8 without NUL bytes or markup (HTML and SVG are never "text": a browser shown
    them as text/plain could still be talked into rendering them elsewhere)."""
    if b"\x00" in head:
        return False
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        try:  # the head may end inside a multi-byte character
            text = head[:-3].decode("utf-8")
        except UnicodeDecodeError:
            return False
    lowered = text.lstrip().lower()
    return not lowered.startswith(("<", "\ufeff<"))
