"""Branches (``DjangoSession.fork``): an exact copy up to one item, valid for the model,
linked to its original, and independent of it from then on."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import Agent, Runner
from agents.testing import ModelStep, ScriptedModel, assistant_message
from django.contrib.auth.models import User

from django_agent_sessions import DjangoSession
from django_agent_sessions.exceptions import SessionOwnershipError
from django_agent_sessions.models import AgentSession, Attachment, SessionItem
from tests.attachment_helpers import image_message, png, stored_files

pytestmark = pytest.mark.django_db(transaction=True)


def _call(n: int) -> dict[str, Any]:
    return {"type": "function_call", "call_id": f"c{n}", "name": "add", "arguments": "{}"}


def _output(n: int) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": f"c{n}", "output": str(n)}


def _conversation(turns: int) -> list[Any]:
    """``turns`` turns of a question, a tool call, its output and an answer; then a
    question whose call waits for an approval (no output)."""
    items: list[Any] = []
    for n in range(turns):
        items += [{"role": "user", "content": f"question {n}"}, _call(n), _output(n)]
        items.append({"role": "assistant", "content": f"answer {n}"})
    return [*items, {"role": "user", "content": "send the email"}, _call(99)]


async def _ids(session_id: str) -> list[int]:
    rows = SessionItem.objects.filter(session__session_id=session_id).order_by("id")
    return [pk async for pk in rows.values_list("id", flat=True)]


def _text(items: list[Any]) -> list[str]:
    return [json.dumps(item, sort_keys=False) for item in items]


async def test_a_branch_from_the_third_message_copies_exactly_what_came_before(session_id):
    owner = await User.objects.acreate(username="alice")
    source = DjangoSession(session_id, owner=owner)
    await source.add_items(_conversation(10))  # 40 items of turns, then a waiting call
    third_user_message = (await _ids(session_id))[8]

    branch = await source.fork("branch-1", up_to_item_id=third_user_message)
    copied = await branch.get_items()
    assert _text(copied) == _text((await source.get_items())[:9])
    row = await AgentSession.objects.select_related("branched_from").aget(session_id="branch-1")
    assert (row.owner_id, row.branched_from.session_id) == (owner.pk, session_id)
    assert (row.branched_at_item_id, row.title) == (third_user_message, "question 0 (branch)")

    # Valid input for the Runner, and each conversation goes on by itself.
    model = ScriptedModel([ModelStep(output=[assistant_message("Another way.")])])
    result = await Runner.run(Agent(name="A", model=model), "try again", session=branch)
    assert result.final_output == "Another way."
    assert len(await branch.get_items()) == 11
    assert len(await source.get_items()) == 42


async def test_a_call_is_never_copied_without_its_output(session_id):
    source = DjangoSession(session_id)
    await source.add_items(_conversation(2))
    ids = await _ids(session_id)
    cut_after_call = await source.fork("b-call", up_to_item_id=ids[1])
    assert await cut_after_call.get_items() == [{"role": "user", "content": "question 0"}]
    whole = await source.fork("b-whole")  # the call waiting for approval stays behind
    assert await whole.get_items() == (await source.get_items())[:-1]


async def test_no_reasoning_is_copied_without_what_followed_it(session_id):
    # The model API refuses a reasoning item without the item that followed it: the
    # reasoning of a call left out goes with the call.
    source = DjangoSession(session_id)
    question = {"role": "user", "content": "question 0"}
    thought = {"type": "reasoning", "id": "rs_1", "summary": []}
    answer = {"role": "assistant", "content": "answer 0"}
    await source.add_items([question, thought, _call(0), _output(0), answer, question, thought])
    await source.add_items([_call(1)])  # waiting for an approval
    ids = await _ids(session_id)
    copies = {
        "b-waiting": None,
        "b-at-call": ids[2],
        "b-at-thought": ids[1],
        "b-at-output": ids[3],
    }
    for name, up_to in copies.items():
        await source.fork(name, up_to_item_id=up_to)
    items = await source.get_items()
    assert await DjangoSession("b-waiting").get_items() == [*items[:5], question]
    assert await DjangoSession("b-at-call").get_items() == [question]
    assert await DjangoSession("b-at-thought").get_items() == [question]
    assert await DjangoSession("b-at-output").get_items() == items[:4]
    model = ScriptedModel([ModelStep(output=[assistant_message("Sent.")])])
    branch = DjangoSession("b-waiting")
    result = await Runner.run(Agent(name="A", model=model), "send it", session=branch)
    assert result.final_output == "Sent."


async def test_files_are_the_branchs_own(session_id, file_storage):
    source = DjangoSession(session_id)
    message = image_message(png(300, 300))
    await source.add_items([message, {"role": "assistant", "content": "a picture"}])
    branch = await source.fork("b-files")
    assert await branch.get_items() == await source.get_items()
    assert await Attachment.objects.acount() == 2
    await source.clear_session()
    assert await branch.get_items() == [message, {"role": "assistant", "content": "a picture"}]
    assert len(stored_files(file_storage)) == 1


async def test_only_the_owner_forks_into_a_free_id(session_id):
    alice = await User.objects.acreate(username="alice")
    bob = await User.objects.acreate(username="bob")
    await DjangoSession(session_id, owner=alice).add_items([{"role": "user", "content": "hi"}])
    with pytest.raises(SessionOwnershipError):
        await DjangoSession(session_id, owner=bob).fork("b-bob")
    with pytest.raises(ValueError, match="exists already"):
        await DjangoSession(session_id, owner=alice).fork(session_id)
    with pytest.raises(LookupError):
        await DjangoSession("nothing-here").fork("b-none")
    assert await AgentSession.objects.acount() == 1
