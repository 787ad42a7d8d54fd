"""docs/protocols/chatkit.md: its server runs as written (on a scripted model), and its
conformance tables name every request and item type of the installed ChatKit."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest
from chatkit.types import ChatKitReq, ThreadItem

from django_agent_sessions import DjangoSession
from django_agent_sessions.protocols.chatkit import ChatKitContext
from tests.protocols.chatkit.helpers import create, of_type, streamed
from tests.scripted import ScriptedModel, streamed_reply

DOC = Path(__file__).resolve().parents[3] / "docs" / "protocols" / "chatkit.md"


def _server_block() -> str:
    blocks = re.findall(r"^```python\n(.*?)^```$", DOC.read_text(), re.S | re.M)
    return next(block for block in blocks if "class SupportServer" in block)


@pytest.mark.django_db(transaction=True)
async def test_the_doc_s_server_answers_and_stores(alice):
    namespace: dict = {}
    exec(compile(_server_block(), str(DOC), "exec"), namespace)
    namespace["agent"].model = ScriptedModel([streamed_reply("One sentence.")])
    context = ChatKitContext(user=alice)

    events = await streamed(await namespace["SupportServer"]().process(create("Hi"), context))
    thread_id = of_type(events, "thread.created")[0].thread.id
    assert of_type(events, "thread.item.done")[-1].item.content[0].text == "One sentence."
    stored = await DjangoSession(thread_id).get_items()
    assert [item["role"] for item in stored] == ["user", "assistant"]
    assert callable(namespace["urlpatterns"][0].callback)


def _literals(union) -> set[str]:
    members = typing.get_args(typing.get_args(union)[0])
    return {typing.get_args(member.model_fields["type"].annotation)[0] for member in members}


def test_the_tables_name_every_request_and_item_type():
    table = DOC.read_text().split("## Conformance", 1)[1]
    named = set(re.findall(r"^\| `([a-z_.]+)` \|", table, re.M))
    assert _literals(ChatKitReq) | _literals(ThreadItem) == named
