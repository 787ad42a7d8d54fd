"""Hostile conversation content stays inert on every admin page and in the export."""

from __future__ import annotations

import json

import pytest

from tests.admin.helpers import (
    CHANGELIST,
    action,
    change_url,
    delete_url,
)
from tests.conversations import XSS_IMG, XSS_SCRIPT, add_many_items, make_conversation, xss_items

pytestmark = pytest.mark.django_db


def assert_inert(html: str) -> None:
    for payload in (XSS_SCRIPT, XSS_IMG, "<script>", "<img src=x"):
        assert payload not in html
    assert "&lt;script&gt;" in html


def test_hostile_content_is_inert_on_every_page(superuser):
    conversation = make_conversation("c-<b>x</b>", xss_items(), title=XSS_SCRIPT)
    add_many_items(conversation, 0)
    pages = [
        superuser.get(CHANGELIST),
        superuser.get(CHANGELIST + "?q=script"),
        superuser.get(change_url(conversation)),
        superuser.get(delete_url(conversation)),
        action(superuser, "clear_history", [conversation]),
        action(superuser, "delete_selected", [conversation]),
    ]
    for response in pages:
        assert response.status_code == 200
        assert_inert(response.text)
        assert "<b>x</b>" not in response.text

    export = action(superuser, "export_json", [conversation])
    assert export["Content-Type"] == "application/json"
    assert export["Content-Disposition"].startswith("attachment;")
    assert export["X-Content-Type-Options"] == "nosniff"
    document = json.loads(b"".join(export.streaming_content))
    assert document["conversations"][0]["items"][0]["item"]["content"] == XSS_SCRIPT
