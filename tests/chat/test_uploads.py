"""The chat's upload: what it takes (by the bytes), what it refuses and how it says so."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from django_agent_sessions.models import AgentSession, Attachment
from tests.attachment_helpers import png, stored_files

pytestmark = pytest.mark.django_db(transaction=True)


def _upload(client: Client, data: bytes, name: str = "f.png", session_id: str = "c-up") -> object:
    url = reverse("django_agent_sessions:upload", args=[session_id])
    return client.post(url, {"file": SimpleUploadedFile(name, data, "image/png")})


def test_an_image_is_stored_and_served_to_its_owner(client, alice, file_storage):
    client.force_login(alice)
    image = png(12, 7)
    response = _upload(client, image, "dot.png")

    assert response.status_code == 201
    body = response.json()
    row = Attachment.objects.get()
    assert body == {
        "id": row.pk,
        "name": "dot.png",
        "content_type": "image/png",
        "size": len(image),
        "url": reverse("django_agent_sessions:attachment", args=["c-up", row.pk]),
    }
    assert AgentSession.objects.get().owner_id == alice.pk
    served = client.get(body["url"])
    assert b"".join(served.streaming_content) == image


@pytest.mark.parametrize(
    "data",
    [
        b"<!doctype html><script>alert(1)</script>",
        b'<svg xmlns="http://www.w3.org/2000/svg"/>',
        # A byte order mark and whitespace before the markup change nothing.
        b"\xef\xbb\xbf\n<!DOCTYPE html><script>alert(1)</script>",
        b'\xef\xbb\xbf \r\n<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>',
        "\ufeff\n<html><script>alert(1)</script>".encode("utf-16-le"),
    ],
    ids=["html", "svg", "bom-html", "bom-svg", "utf16-html"],
)
def test_markup_is_refused_whatever_its_name_says(client, alice, file_storage, data):
    client.force_login(alice)
    response = _upload(client, data, "innocent.png")
    assert response.status_code == 415
    assert response.json()["code"] == "type_refused"
    assert "application/octet-stream" in response.json()["error"]
    assert not Attachment.objects.exists()
    assert stored_files(file_storage) == []


def test_a_file_over_the_size_limit_is_refused_before_it_is_stored(
    settings, client, alice, file_storage
):
    settings.AGENT_SESSIONS = {
        **settings.AGENT_SESSIONS,
        "ATTACHMENTS": {"MAX_UPLOAD_BYTES": 1000},
    }
    client.force_login(alice)
    response = _upload(client, png(30, 30))
    assert response.status_code == 413
    assert response.json() == {"error": "A file may be 1000\xa0bytes at most.", "code": "too_large"}
    assert not AgentSession.objects.exists()
    assert stored_files(file_storage) == []


def test_a_type_the_settings_leave_out_is_refused(settings, client, alice, file_storage):
    settings.AGENT_SESSIONS = {
        **settings.AGENT_SESSIONS,
        "ATTACHMENTS": {"UPLOAD_TYPES": ["application/pdf"]},
    }
    client.force_login(alice)
    assert _upload(client, png(4, 4)).status_code == 415


def test_a_post_without_a_file_says_so(client, alice, file_storage):
    client.force_login(alice)
    response = client.post(reverse("django_agent_sessions:upload", args=["c-up"]))
    assert response.status_code == 400
    assert response.json()["code"] == "no_file"


def test_someone_elses_conversation_answers_404(client, alice, file_storage):
    AgentSession.objects.create(session_id="c-bob", owner=User.objects.create_user("bob"))
    client.force_login(alice)
    assert _upload(client, png(4, 4), session_id="c-bob").status_code == 404
    assert stored_files(file_storage) == []


def test_uploads_need_a_signed_in_person_and_the_csrf_token(alice, file_storage):
    anonymous = Client()
    assert _upload(anonymous, png(4, 4)).status_code == 302  # to the login page
    checked = Client(enforce_csrf_checks=True)
    checked.force_login(alice)
    assert _upload(checked, png(4, 4)).status_code == 403
    assert not Attachment.objects.exists()
