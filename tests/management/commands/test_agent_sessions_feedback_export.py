"""``manage.py agent_sessions_feedback_export``: JSONL of rated replies."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from agents import Agent, Runner
from agents.testing import ModelStep, ScriptedModel, assistant_message
from asgiref.sync import sync_to_async
from django.core.management import call_command
from jsonschema import Draft202012Validator

from django_agent_sessions.store import feedback
from tests.feedback_helpers import a_replied_conversation

pytestmark = pytest.mark.django_db


def _export(*args: str) -> list[dict[str, object]]:
    out = io.StringIO()
    call_command("agent_sessions_feedback_export", *args, stdout=out, stderr=io.StringIO())
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_one_line_per_rated_reply_filtered_by_rating_tag_and_date(tmp_path):
    first = a_replied_conversation("alice", "c-1")
    second = a_replied_conversation("bob", "c-2")
    feedback.give(first.owner, "c-1", first.reply_id, rating=-1, tags=["unsafe"], comment="No.")
    feedback.give(second.owner, "c-2", second.reply_id, rating=1)

    assert [line["conversation"] for line in _export()] == ["c-1", "c-2"]
    (bad,) = _export("--rating", "bad")
    assert (bad["conversation"], bad["comment"], bad["tags"]) == ("c-1", "No.", ["unsafe"])
    assert bad["input"] == [{"role": "user", "content": "What is 12 * 7?"}]
    assert [line["conversation"] for line in _export("--tag", "unsafe")] == ["c-1"]
    assert _export("--since", "2999-01-01") == []
    target = tmp_path / "rated.jsonl"
    _export("--output", str(target))
    assert len(target.read_text().splitlines()) == 2


def _documented_schema() -> dict[str, object]:
    text = (Path(__file__).resolve().parents[3] / "docs" / "feedback.md").read_text()
    (block,) = re.findall(r"^```json\n(.*?)^```$", text, re.S | re.M)
    schema: dict[str, object] = json.loads(block)
    return schema


def test_each_line_validates_against_the_documented_schema():
    rated = a_replied_conversation()
    feedback.give(rated.owner, "c-rated", rated.reply_id, rating=-1, tags=["inaccurate"])
    validator = Draft202012Validator(_documented_schema())
    (line,) = _export()
    assert [error.message for error in validator.iter_errors(line)] == []
    assert [error.message for error in validator.iter_errors({**line, "rating": 0})]


@pytest.mark.django_db(transaction=True)
async def test_a_lines_input_replays_the_turn_through_the_runner_unchanged():
    rated = await sync_to_async(a_replied_conversation)()
    await sync_to_async(feedback.give)(rated.owner, "c-rated", rated.reply_id, rating=1)
    (line,) = await sync_to_async(_export)()
    model = ScriptedModel([ModelStep(output=[assistant_message("84, again.")])])
    result = await Runner.run(Agent(name="Replay", model=model), line["input"])
    assert result.final_output == "84, again."
    assert model.last_call is not None
    assert model.last_call.input == line["input"]
