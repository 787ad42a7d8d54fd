"""A stored file as a response (``files/serving.py``): recognised images inline, anything
else a download of ``application/octet-stream``, never sniffed, always sandboxed; under
ASGI, streamed a chunk at a time."""

from __future__ import annotations

import os
import warnings

import pytest
from django.core.files.base import ContentFile
from django.http import Http404
from django.test import AsyncRequestFactory, RequestFactory

from django_agent_sessions.files import storage
from django_agent_sessions.files.models import Attachment
from django_agent_sessions.files.serving import CACHE_CONTROL, CHUNK_BYTES, file_response
from tests.attachment_helpers import png


def _stored(file_storage: object, name: str, content_type: str, data: bytes) -> Attachment:
    stored_as = storage.storage().save(f"files/{name or 'nameless'}", ContentFile(data))
    return Attachment(pk=7, name=name, content_type=content_type, storage_name=stored_as)


WSGI_REQUEST = RequestFactory().get("/file")
ASGI_REQUEST = AsyncRequestFactory().get("/file")


def _body(response: object) -> bytes:
    return b"".join(response.streaming_content)  # type: ignore[attr-defined]


def test_an_image_is_shown_inline_unless_a_download_is_asked_for(file_storage):
    data = png(2, 2)
    image = _stored(file_storage, "cat.png", "image/png", data)
    shown = file_response(image, WSGI_REQUEST)
    assert shown["Content-Type"] == "image/png"
    assert shown["Content-Disposition"].startswith("inline")
    assert _body(shown) == data
    downloaded = file_response(image, WSGI_REQUEST, download=True)
    assert downloaded["Content-Type"] == "application/octet-stream"
    assert downloaded["Content-Disposition"] == 'attachment; filename="cat.png"'
    for response in (shown, downloaded):
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["Content-Security-Policy"] == "default-src 'none'; sandbox"
        assert response["Cache-Control"] == CACHE_CONTROL
        response.file_to_stream.close()  # type: ignore[attr-defined]


def test_html_is_a_download_whatever_its_type_and_a_nameless_file_gets_one(file_storage):
    page = _stored(file_storage, "", "text/html", b"<script>alert(1)</script>")
    response = file_response(page, WSGI_REQUEST)
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"] == 'attachment; filename="attachment-7"'
    response.file_to_stream.close()  # type: ignore[attr-defined]


def test_no_row_or_a_missing_file_is_404(file_storage):
    with pytest.raises(Http404):
        file_response(None, WSGI_REQUEST)
    gone = Attachment(pk=8, name="x.png", content_type="image/png", storage_name="files/gone.png")
    with pytest.raises(Http404):
        file_response(gone, WSGI_REQUEST)


async def test_under_asgi_a_file_streams_in_chunks_without_being_read_whole(file_storage):
    data = os.urandom(3 * CHUNK_BYTES + 5)
    stored = _stored(file_storage, "big.bin", "application/octet-stream", data)
    open_files = len(os.listdir("/proc/self/fd"))
    response = file_response(stored, ASGI_REQUEST)
    assert response.is_async
    assert response["Content-Length"] == str(len(data))
    with warnings.catch_warnings():
        # Django's warning when it reads a sync iterator whole before sending it.
        warnings.simplefilter("error")
        chunks = [chunk async for chunk in response]
    assert [len(chunk) for chunk in chunks] == [CHUNK_BYTES] * 3 + [5]
    assert b"".join(chunks) == data
    response.close()  # as the ASGI handler does once the body is sent
    assert len(os.listdir("/proc/self/fd")) == open_files


def test_under_wsgi_a_file_streams_as_django_streams_it(file_storage):
    stored = _stored(file_storage, "small.bin", "application/octet-stream", b"bytes")
    response = file_response(stored, WSGI_REQUEST)
    assert not response.is_async
    assert _body(response) == b"bytes"
    response.close()
