"""``manage.py agent_sessions_import``: files that write nothing, and the format a file is
read in, as an operator runs it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from django_agent_sessions.models import AgentSession
from tests.conversations import make_conversation, transcript_items

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_import_names_the_bad_item_and_writes_nothing(tmp_path: Path):
    stamp = "2026-01-02T03:04:05+00:00"
    good = {"created_at": stamp, "item": {"role": "user", "content": "ok"}}
    bad = {"created_at": stamp, "item": "not an item"}
    records = [
        {"session_id": f"c-{n}", "owner": None, "title": "", "metadata": {},
         "created_at": stamp, "updated_at": stamp, "items": items}
        for n, items in enumerate([[good], [good, good, bad, good]])
    ]  # fmt: skip
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    with pytest.raises(CommandError) as error:
        run("agent_sessions_import", str(path))
    assert str(error.value) == (f"{path}: line 2 ('c-1'): item 3: an item must be a dict, not str")
    assert not AgentSession.objects.exists()


def test_import_reports_invalid_json_and_unreadable_files(tmp_path: Path):
    path = tmp_path / "broken.json"
    path.write_text('{"format": "django-agent-sessions", "version": 1, "conv', encoding="utf-8")
    with pytest.raises(CommandError, match=r"broken.json: the file: invalid JSON at line 1"):
        run("agent_sessions_import", str(path))
    with pytest.raises(CommandError, match="Cannot read"):
        run("agent_sessions_import", str(tmp_path / "missing.json"))
    assert not AgentSession.objects.exists()


def test_import_detects_json_lines_whatever_the_file_name(tmp_path: Path):
    make_conversation("c-1", transcript_items())
    make_conversation("c-2", [{"role": "user", "content": "hi"}])
    exported = tmp_path / "export.jsonl"
    run("agent_sessions_export", "c-1", "c-2", "--output", str(exported))
    AgentSession.objects.all().delete()
    renamed = tmp_path / "export.txt"
    renamed.write_text(exported.read_text(encoding="utf-8"), encoding="utf-8")
    assert run("agent_sessions_import", str(renamed)).startswith("Imported 2 conversation(s)")


def test_import_of_one_jsonl_line_says_to_pass_the_format(tmp_path: Path):
    make_conversation("c-1", transcript_items())
    exported = tmp_path / "one.jsonl"
    run("agent_sessions_export", "c-1", "--output", str(exported))
    AgentSession.objects.all().delete()
    renamed = tmp_path / "one.json"
    renamed.write_text(exported.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(CommandError, match="pass --format jsonl"):
        run("agent_sessions_import", str(renamed))
    assert run("agent_sessions_import", str(renamed), "--format", "jsonl").startswith("Imported 1")
