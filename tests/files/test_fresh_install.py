"""A conversation with an image and a PDF, exported by ``agent_sessions_export`` and
imported by ``agent_sessions_import`` into another installation (an empty database and
an empty storage), comes back whole: the same items from ``get_items``, the same bytes
in the storage."""

from __future__ import annotations

import base64
import hashlib
import io
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.core.management import call_command

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentSession, Attachment
from tests.attachment_helpers import files_message, png, stored_files
from tests.conftest import assistant_message

pytestmark = pytest.mark.django_db(transaction=True)

PDF = b"%PDF-1.7\n" + bytes(range(256)) * 400 + b"\n%%EOF\n"


def _message(image: bytes) -> dict[str, object]:
    return files_message(
        "Compare the picture with the report.",
        image=image,
        file=("report.pdf", "application/pdf", PDF),
    )


def test_export_and_import_move_the_files_to_another_database_and_storage(
    fresh_database, file_storage, settings, tmp_path: Path
):
    image = png(300, 300)
    items = [_message(image), assistant_message("They agree.")]
    alice = User.objects.create_user("alice")
    async_to_sync(DjangoSession("c-moved", owner=alice).add_items)(items)
    assert Attachment.objects.count() == 2
    export = tmp_path / "export.json"
    call_command("agent_sessions_export", "c-moved", "-o", str(export))

    # The other installation: its own storage, empty, and its own database, where only
    # the owner exists (an import refuses an owner it cannot find).
    other_storage = tmp_path / "other-media"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(other_storage)},
        },
    }
    assert not AgentSession.objects.using(fresh_database).exists()
    owner = User.objects.db_manager(fresh_database).create_user("alice")
    out = io.StringIO()
    call_command("agent_sessions_import", str(export), "--database", fresh_database, stdout=out)
    assert out.getvalue() == "Imported 1 conversation(s) with 2 item(s).\n"

    moved = DjangoSession("c-moved", owner=owner, using=fresh_database)
    got: list[Any] = list(async_to_sync(moved.get_items)())
    assert got == items
    parts = got[0]["content"]
    assert base64.b64decode(parts[1]["image_url"].split(",", 1)[1]) == image
    assert base64.b64decode(parts[2]["file_data"].split(",", 1)[1]) == PDF
    assert sorted(p.read_bytes() for p in stored_files(other_storage)) == sorted([image, PDF])
    rows = Attachment.objects.using(fresh_database).order_by("content_type")
    assert [(a.content_type, a.name, a.size, a.sha256) for a in rows] == [
        ("application/pdf", "report.pdf", len(PDF), hashlib.sha256(PDF).hexdigest()),
        ("image/png", "", len(image), hashlib.sha256(image).hexdigest()),
    ]
    for attachment in rows:
        assert (other_storage / attachment.storage_name).read_bytes() in (image, PDF)
    # The first installation is as it was.
    assert len(stored_files(file_storage)) == 2
    assert async_to_sync(DjangoSession("c-moved", owner=alice).get_items)() == items
