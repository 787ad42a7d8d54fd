"""``DjangoChatKitStore`` passes openai-chatkit's own store suite (``suite_threads``,
``suite_items``), with the library's default ids and with overridden ones, as the
library runs it against its SQLite example store; on SQLite and PostgreSQL alike
(``AGENT_SESSIONS_TEST_DB``)."""

from __future__ import annotations

import pytest
from chatkit.types import ThreadMetadata

from django_agent_sessions.protocols.chatkit import DjangoChatKitStore
from tests.protocols.chatkit.suite_items import ItemTests
from tests.protocols.chatkit.suite_threads import (
    DEFAULT_CONTEXT,
    ThreadTests,
    make_thread,
    signed_in,
)

pytestmark = pytest.mark.django_db(transaction=True)


class TestStore(ThreadTests, ItemTests):
    """The library's ``TestStore``; the two users of its contexts made for each test."""

    @pytest.fixture(autouse=True)
    def _users(self, make_user):
        signed_in(make_user)


class TestDjangoChatKitStore(TestStore):
    # ported: TestSqliteStore
    def setup_method(self, method):
        self.store = DjangoChatKitStore()

    def teardown_method(self, method):
        pass

    @pytest.mark.asyncio
    async def test_default_id_generators_use_default_prefixes(self):
        ctx = DEFAULT_CONTEXT
        thread_id = self.store.generate_thread_id(ctx)
        assert thread_id.startswith("thr_")

        thread = make_thread(thread_id=thread_id)
        assert self.store.generate_item_id("message", thread, ctx).startswith("msg_")
        assert self.store.generate_item_id("tool_call", thread, ctx).startswith("tc_")
        assert self.store.generate_item_id("task", thread, ctx).startswith("tsk_")
        assert self.store.generate_item_id("workflow", thread, ctx).startswith("wf_")


class TestDjangoChatKitStoreCustomIds(TestStore):
    # ported: TestSqliteStoreCustomIds
    def setup_method(self, method):
        class CustomStore(DjangoChatKitStore):
            def __init__(self):
                super().__init__()
                self.counter = 0

            def generate_thread_id(self, context) -> str:
                self.counter += 1
                return f"thr_custom_{self.counter}"

            def generate_item_id(self, item_type: str, thread: ThreadMetadata, context) -> str:
                self.counter += 1
                return f"{item_type}_custom_{self.counter}_{thread.id}"

        self.store = CustomStore()

    def teardown_method(self, method):
        pass

    @pytest.mark.asyncio
    async def test_overridden_id_generators_are_used(self):
        ctx = DEFAULT_CONTEXT
        thread_id = self.store.generate_thread_id(ctx)
        assert thread_id == "thr_custom_1"

        thread = make_thread(thread_id=thread_id)
        msg_id = self.store.generate_item_id("message", thread, ctx)
        tool_call_id = self.store.generate_item_id("tool_call", thread, ctx)
        task_id = self.store.generate_item_id("task", thread, ctx)

        assert msg_id == "message_custom_2_thr_custom_1"
        assert tool_call_id == "tool_call_custom_3_thr_custom_1"
        assert task_id == "task_custom_4_thr_custom_1"

        thread2 = make_thread(thread_id=self.store.generate_thread_id(ctx))
        assert thread2.id == "thr_custom_5"
        msg_id2 = self.store.generate_item_id("message", thread2, ctx)
        tool_call_id2 = self.store.generate_item_id("tool_call", thread2, ctx)
        task_id2 = self.store.generate_item_id("task", thread2, ctx)

        assert msg_id2 == "message_custom_6_thr_custom_5"
        assert tool_call_id2 == "tool_call_custom_7_thr_custom_5"
        assert task_id2 == "task_custom_8_thr_custom_5"
