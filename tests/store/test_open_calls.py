"""``store.open_calls``: an output for every call a run leaves open, whatever ended it.

How each end (stopped, failed, lost, interrupted) uses it is in ``test_runs.py``.
"""

from __future__ import annotations

import pytest

from django_agent_sessions.models import ToolApproval
from django_agent_sessions.store import open_calls, runs
from tests.conftest import user_message
from tests.store.helpers import call, outputs_of, start, write

pytestmark = pytest.mark.django_db


def test_a_rejected_calls_output_is_its_rejection(session_id: str) -> None:
    conversation = write(session_id, user_message("pay"))
    started = start(conversation)
    write(session_id, call("c1", "pay"), call("c2", "pay"), call("c3", "pay"))
    for call_id, message in (("c1", "Not this one."), ("c2", "")):
        ToolApproval.objects.create(
            run_id=started.pk, call_id=call_id, name="pay", decision="rejected", message=message
        )
    missing = open_calls.close_open_calls(conversation.pk, started.pk, "default", text="Stopped.")
    assert missing == ["c1", "c2", "c3"]
    assert outputs_of(session_id) == {
        "c1": "Not this one.",
        "c2": open_calls.REJECTION_OUTPUT,  # a rejection without a message
        "c3": "Stopped.",
    }
    # Once every call has its output, there is nothing left to close.
    assert open_calls.close_open_calls(conversation.pk, started.pk, "default", text="x") == []
    found = runs.record.sync(started.pk)
    assert (found.session.session_id, found.session.owner) == (session_id, None)
