"""A conversation's stored files: to its owner only, images inline, the rest downloads."""

from __future__ import annotations

import base64

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from django_agent_sessions.files import inline
from django_agent_sessions.models import Attachment
from django_agent_sessions.serialization import EncodedItem
from django_agent_sessions.store import items as stored_items
from tests.attachment_helpers import data_url, png

pytestmark = pytest.mark.django_db(transaction=True)


def _stored(owner: User, part: dict[str, str], session_id: str = "c-files") -> str:
    """The URL of the file ``part`` holds, stored in the owner's conversation."""
    message = {"role": "user", "content": [part]}
    _, files = inline.split_batch([message], 10)
    scope = stored_items.Scope(session_id, owner.pk, "default")
    stored_items.append_items(scope, [EncodedItem("{}", "message", "user", "", "")], "", files)
    attachment = Attachment.objects.latest("id")
    return reverse("django_agent_sessions:attachment", args=[session_id, attachment.pk])


def test_the_owner_sees_an_image_inline_and_nobody_else_sees_it(client, file_storage):
    alice, bob = User.objects.create_user("alice"), User.objects.create_user("bob")
    image = png(40, 40)
    url = _stored(alice, {"type": "input_image", "image_url": data_url(image)})

    client.force_login(alice)
    response = client.get(url)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == image
    assert response["Content-Type"] == "image/png"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in response["Content-Security-Policy"]
    assert response["Content-Disposition"].startswith("inline")

    client.force_login(bob)
    assert client.get(url).status_code == 404
    client.logout()
    assert client.get(url).status_code == 302  # to the login page


@pytest.mark.parametrize(
    ("data", "filename"),
    [
        (b"<html><script>alert(document.cookie)</script></html>", "photo.png"),
        (b"<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>", "logo.svg"),
        (b"%PDF-1.7\n" + bytes(200), "report.pdf"),
    ],
)
def test_anything_but_an_image_is_a_download_whatever_its_name(
    client, file_storage, data, filename
):
    alice = User.objects.create_user("alice")
    part = {
        "type": "input_file",
        "file_data": base64.b64encode(data).decode(),
        "filename": filename,
    }
    url = _stored(alice, part)
    client.force_login(alice)
    response = client.get(url)
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"].startswith("attachment")
    assert filename in response["Content-Disposition"]
    assert response["X-Content-Type-Options"] == "nosniff"


def test_a_missing_file_is_404(client, file_storage):
    alice = User.objects.create_user("alice")
    url = _stored(alice, {"type": "input_image", "image_url": data_url(png(40, 40))})
    client.force_login(alice)
    assert client.get(url.replace(url.split("/")[-2], "999")).status_code == 404
    for path in file_storage.rglob("*"):
        if path.is_file():
            path.unlink()
    assert client.get(url).status_code == 404
