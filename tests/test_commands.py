"""The management commands, as an operator runs them."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import timezone

from django_agent_sessions.models import AgentSession, SessionItem
from tests.conversations import make_conversation, transcript_items

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture
def idle_and_active():
    now = timezone.now()
    make_conversation("c-idle", transcript_items(), updated_at=now - timedelta(days=45))
    make_conversation("c-active", transcript_items(), updated_at=now - timedelta(hours=2))


def test_prune_dry_run_then_for_real(idle_and_active):
    out = run("agent_sessions_prune", "--older-than", "30d", "--dry-run")
    assert out.startswith("Would delete 1 conversation(s) with 7 item(s) (no activity since ")
    assert AgentSession.objects.count() == 2
    out = run("agent_sessions_prune", "--older-than", "30d", "--batch-size", "1", "--no-input")
    assert out.startswith("Deleted 1 conversation(s) with 7 item(s)")
    assert list(AgentSession.objects.values_list("session_id", flat=True)) == ["c-active"]


def test_prune_short_age_reaches_recent_conversations(idle_and_active):
    out = run("agent_sessions_prune", "--older-than", "90min", "--no-input")
    assert out.startswith("Deleted 2 ")


@override_settings(AGENT_SESSIONS={"RETENTION": "30d"})
def test_prune_defaults_to_the_retention_setting(idle_and_active):
    assert run("agent_sessions_prune", "--no-input").startswith("Deleted 1 conversation(s)")


def test_prune_asks_before_deleting(idle_and_active, monkeypatch):
    prompts: list[str] = []
    answers = iter(["no", "yes"])
    monkeypatch.setattr("builtins.input", lambda prompt: prompts.append(prompt) or next(answers))
    assert run("agent_sessions_prune", "--older-than", "30d") == "Nothing deleted.\n"
    assert "This deletes 1 conversation(s) with 7 item(s)" in prompts[0]
    assert AgentSession.objects.count() == 2
    assert run("agent_sessions_prune", "--older-than", "30d").startswith("Deleted 1 ")
    assert AgentSession.objects.count() == 1
    # Nothing to delete: no question.
    assert run("agent_sessions_prune", "--older-than", "30d").startswith("No conversation ")
    assert len(prompts) == 2


def test_prune_refuses_an_ambiguous_month_or_minute():
    with pytest.raises(CommandError, match=r"Ambiguous duration '1m': write minutes as 'min'"):
        run("agent_sessions_prune", "--older-than", "1m", "--no-input")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), r"Pass --older-than \(e\.g\. 30d\) or set AGENT_SESSIONS\['RETENTION'\]"),
        (("--older-than", "soon"), "Invalid duration 'soon'"),
        (("--older-than", "1d", "--batch-size", "0"), "batch_size must be at least 1"),
    ],
)
def test_prune_errors(args, message):
    with pytest.raises(CommandError, match=message):
        run("agent_sessions_prune", *args)


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
