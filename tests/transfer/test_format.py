"""The names export and import share (``transfer/format.py``)."""

from __future__ import annotations

import json

import pytest

from django_agent_sessions import transfer
from django_agent_sessions.models import AgentSession
from tests.conversations import make_conversation


def test_format_follows_the_file_name():
    assert transfer.format_for("dump.JSONL") == "jsonl"
    assert transfer.format_for("dump.ndjson") == "jsonl"
    assert transfer.format_for("dump.json") == "json"
    assert transfer.format_for("-") == "json"


@pytest.mark.django_db
def test_an_export_names_the_format_and_version_an_import_checks():
    make_conversation("c-1", [{"role": "user", "content": "hi"}])
    text = "".join(transfer.export_chunks(AgentSession.objects.all(), "json"))
    document = json.loads(text)
    assert (document["format"], document["version"]) == (transfer.FORMAT, transfer.VERSION)
    assert transfer.FORMATS == ("json", "jsonl")
    wrong = json.dumps({**document, "version": transfer.VERSION + 1})
    with pytest.raises(transfer.TransferError, match=f"version {transfer.VERSION + 1}"):
        transfer.parse(wrong, "json")
