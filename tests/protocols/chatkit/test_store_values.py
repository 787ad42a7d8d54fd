"""``DjangoChatKitStore`` keeps any text ChatKit gives it exactly, on both databases
(PostgreSQL's text refuses a NUL character; ChatKit's JSON escapes it), and hands the
same text to ``DjangoSession``."""

from __future__ import annotations

from datetime import datetime

import pytest
from chatkit.types import InferenceOptions, ThreadMetadata, UserMessageItem, UserMessageTextContent

from django_agent_sessions import DjangoSession
from django_agent_sessions.protocols.chatkit import ChatKitContext, DjangoChatKitStore

pytestmark = pytest.mark.django_db(transaction=True)

TEXT = "nul \x00, emoji 🐱, RTL שלום, " + "long " * 20_000


async def test_any_text_round_trips_through_the_store_and_the_session(alice):
    store, context = DjangoChatKitStore(), ChatKitContext(user=alice)
    thread = ThreadMetadata(id="thr_1", title=TEXT[:300], created_at=datetime.now())
    item = UserMessageItem(
        id="msg_1",
        thread_id="thr_1",
        created_at=datetime.now(),
        content=[UserMessageTextContent(text=TEXT)],
        inference_options=InferenceOptions(),
    )
    await store.save_thread(thread, context)
    await store.add_thread_item("thr_1", item, context)

    assert await store.load_item("thr_1", "msg_1", context) == item
    assert (await store.load_thread("thr_1", context)).title == TEXT[:300]
    (stored,) = await DjangoSession("thr_1").get_items()
    assert stored["content"][0]["text"] == TEXT
