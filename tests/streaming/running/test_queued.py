"""``queued``: the markers a ``StreamedRun``'s queue holds besides the SDK's events."""

from __future__ import annotations

from django_agent_sessions.streaming.running.queued import End, FlushDue, Shown


def test_the_markers_carry_what_they_name() -> None:
    assert End().error is None
    assert FlushDue(3).batch == 3
    assert Shown({"kind": "message"}).item == {"kind": "message"}
