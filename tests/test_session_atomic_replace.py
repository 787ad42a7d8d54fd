"""A manual compaction (the SDK's ``run_compaction()``) replaces the whole history in one
transaction (``DjangoSession._atomic_replace_items``): no reader ever sees it empty."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest
from agents.memory import OpenAIResponsesCompactionSession
from asgiref.sync import async_to_sync
from django import db

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import AgentSession, Attachment
from django_agent_sessions.store import items as stored_items
from tests.attachment_helpers import image_message, png, stored_files

pytestmark = pytest.mark.django_db(transaction=True)

HISTORY: list[Any] = [
    {"role": "user", "content": "What is 2 + 2?"},
    {"role": "assistant", "content": "4"},
]
SUMMARY: list[Any] = [{"role": "user", "content": "Earlier: 2 + 2 = 4."}]


def _compacting(session: DjangoSession, output: list[Any]) -> OpenAIResponsesCompactionSession:
    async def compact(**kwargs: Any) -> SimpleNamespace:  # the compaction API's answer
        return SimpleNamespace(output=output, usage=None)

    client = SimpleNamespace(responses=SimpleNamespace(compact=compact))
    return OpenAIResponsesCompactionSession(session.session_id, session, client=client)  # type: ignore[arg-type]


def _read_elsewhere(session_id: str) -> list[Any]:
    """The history as another process would read it: another thread, its own connection."""
    seen: list[Any] = []

    def read() -> None:
        try:
            seen.extend(async_to_sync(DjangoSession(session_id).get_items)())
        finally:
            db.connection.close()

    reader = threading.Thread(target=read)
    reader.start()
    reader.join()
    return seen


async def test_a_reader_sees_the_old_history_until_the_new_one_is_there(session_id, monkeypatch):
    session = DjangoSession(session_id)
    await session.add_items(HISTORY)
    during: list[list[Any]] = []
    insert = stored_items._insert_items

    def observed_insert(*args: Any) -> Any:
        # Inside the replacement's transaction: the old rows are deleted, not committed.
        during.append(_read_elsewhere(session_id))
        return insert(*args)

    monkeypatch.setattr(stored_items, "_insert_items", observed_insert)
    await _compacting(session, SUMMARY).run_compaction({"force": True})

    assert during == [HISTORY]  # the SDK's clear-then-add would have shown []
    assert await session.get_items() == SUMMARY
    conversation = await AgentSession.objects.aget(session_id=session_id)
    assert conversation.item_count == 1


async def test_an_item_that_cannot_be_stored_deletes_nothing(session_id):
    session = DjangoSession(session_id)
    await session.add_items(HISTORY)
    with pytest.raises(TypeError):
        await session._atomic_replace_items([{"content": object()}])
    assert await session.get_items() == HISTORY


async def test_an_empty_output_leaves_an_empty_history(session_id):
    session = DjangoSession(session_id)
    await session.add_items(HISTORY)
    assert await session._atomic_replace_items([]) is True
    assert await session.get_items() == []
    assert (await AgentSession.objects.aget(session_id=session_id)).item_count == 0


async def test_files_of_the_old_history_go_and_those_of_the_new_are_stored(
    session_id, file_storage
):
    session = DjangoSession(session_id)
    await session.add_items([image_message(png(300, 300))])
    kept = image_message(png(301, 300), text="the one to keep")
    assert await session._atomic_replace_items([kept]) is True
    assert await session.get_items() == [kept]
    assert await Attachment.objects.acount() == 1
    assert len(stored_files(file_storage)) == 1


class CountingSession(DjangoSession):
    """A subclass that transforms nothing but counts: its own methods must be used."""

    adds = 0
    clears = 0

    async def add_items(self, items: list[Any], **kwargs: Any) -> None:
        self.adds += 1
        await super().add_items(items, **kwargs)

    async def clear_session(self, **kwargs: Any) -> None:
        self.clears += 1
        await super().clear_session(**kwargs)


async def test_a_subclass_that_overrides_storage_gets_the_sdks_own_path(session_id):
    session = CountingSession(session_id)
    await session.add_items(HISTORY)
    assert await session._atomic_replace_items(SUMMARY) is False
    await _compacting(session, SUMMARY).run_compaction({"force": True})
    assert (session.adds, session.clears) == (2, 1)
    assert await session.get_items() == SUMMARY
