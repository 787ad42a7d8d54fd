"""``SteerMessage``: pending messages of a run, in the order they came, gone with it."""

from __future__ import annotations

import pytest

from django_agent_sessions.models import AgentRun, SteerMessage
from tests.conftest import user_message
from tests.store.helpers import start, write

pytestmark = pytest.mark.django_db


def test_messages_keep_their_order_and_go_with_their_run(session_id: str) -> None:
    started = start(write(session_id, user_message("hi")))
    for text in ("one", "two"):
        SteerMessage.objects.create(run_id=started.pk, text=text, client_id="c")
    assert [m.text for m in SteerMessage.objects.all()] == ["one", "two"]
    assert str(SteerMessage.objects.first()).startswith("one (run ")
    AgentRun.objects.filter(pk=started.pk).delete()
    assert not SteerMessage.objects.exists()
