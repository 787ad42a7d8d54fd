"""``manage.py agent_sessions_export``: conversations to JSON or JSONL (and back through
``agent_sessions_import``), as an operator runs it."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from django_agent_sessions.models import AgentSession, SessionItem
from tests.conversations import make_conversation, transcript_items

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_export_to_stdout_and_import_back(tmp_path: Path):
    make_conversation("c-1", transcript_items(), title="Weather")
    make_conversation("c-2", [{"role": "user", "content": "hi"}])
    text = run("agent_sessions_export", "c-1", "c-2")
    document = json.loads(text)
    assert [c["session_id"] for c in document["conversations"]] == ["c-1", "c-2"]
    payloads = list(SessionItem.objects.order_by("id").values_list("payload", flat=True))
    AgentSession.objects.all().delete()
    path = tmp_path / "export.json"
    path.write_text(text, encoding="utf-8")
    assert run("agent_sessions_import", str(path)) == (
        "Imported 2 conversation(s) with 8 item(s).\n"
    )
    assert list(SessionItem.objects.order_by("id").values_list("payload", flat=True)) == payloads
    assert AgentSession.objects.get(session_id="c-1").title == "Weather"


def test_export_to_a_jsonl_file(tmp_path: Path):
    make_conversation("c-1", transcript_items())
    path = tmp_path / "out.jsonl"
    assert run("agent_sessions_export", "c-1", "--output", str(path)) == ""
    (line,) = path.read_text(encoding="utf-8").splitlines()
    assert len(json.loads(line)["items"]) == 7
    AgentSession.objects.all().delete()
    assert run("agent_sessions_import", str(path)).startswith("Imported 1 conversation(s)")


def test_export_names_a_missing_session():
    make_conversation("c-1", [])
    with pytest.raises(CommandError, match="No conversation with session id 'c-nope'"):
        run("agent_sessions_export", "c-1", "c-nope")


def test_export_by_owner_all_and_since_for_a_data_request():
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    alice = users.create_user(username="alice")
    bob = users.create_user(username="bob")
    now = timezone.now()
    make_conversation("a-old", transcript_items(), owner=alice, updated_at=now - timedelta(days=40))
    make_conversation("a-new", transcript_items(), owner=alice, updated_at=now - timedelta(days=1))
    make_conversation("b-1", transcript_items(), owner=bob)

    def ids(*args: str) -> list[str]:
        document = json.loads(run("agent_sessions_export", *args))
        return [c["session_id"] for c in document["conversations"]]

    assert ids("--owner", "alice") == ["a-old", "a-new"]
    assert ids("--owner", "alice", "--since", "30d") == ["a-new"]
    day = (now - timedelta(days=2)).date().isoformat()
    assert ids("--all", "--since", day) == ["a-new", "b-1"]
    assert ids("--all") == ["a-old", "a-new", "b-1"]
    with pytest.raises(CommandError, match="No user 'carol'"):
        run("agent_sessions_export", "--owner", "carol")
    with pytest.raises(CommandError, match="Choose what to export"):
        run("agent_sessions_export")
    with pytest.raises(CommandError, match="Choose what to export"):
        run("agent_sessions_export", "a-new", "--all")
    with pytest.raises(CommandError, match="--since 'yesterday'"):
        run("agent_sessions_export", "--all", "--since", "yesterday")
