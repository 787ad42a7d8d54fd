"""What a request asks: a message to send (the last one, the person's), answers to
interrupts, or the thread's history; and what is not a ``RunAgentInput`` at all."""

from __future__ import annotations

import json

import pytest

from django_agent_sessions.protocols.ag_ui import inputs
from django_agent_sessions.streaming import frames
from tests.protocols.ag_ui.requests import run_input


def _asked(body: dict) -> inputs.Asked:
    return inputs.asked(inputs.parse(json.dumps(body), 65536))


def test_the_last_message_is_the_one_sent_and_keeps_its_id():
    body = run_input("t", "Now this")
    body["messages"].insert(0, {"id": "old", "role": "user", "content": "Earlier"})
    assert _asked(body) == inputs.Send("Now this", body["messages"][-1]["id"])


def test_a_message_of_parts_sends_its_text_parts():
    parts = [{"type": "text", "text": "Look"}, {"type": "text", "text": "again"}]
    body = run_input("t", None, messages=[{"id": "m1", "role": "user", "content": parts}])
    assert _asked(body) == inputs.Send("Look\nagain", "m1")


def test_an_id_the_wire_cannot_keep_is_left_out():
    body = run_input("t", None, messages=[{"id": "x" * 65, "role": "user", "content": "Hi"}])
    assert _asked(body) == inputs.Send("Hi", "")


def test_without_a_new_message_the_thread_is_loaded():
    assert _asked(run_input("t")) == inputs.Load()
    answered = [
        {"id": "u", "role": "user", "content": "Hi"},
        {"id": "a", "role": "assistant", "content": "Hello"},
    ]
    assert _asked(run_input("t", None, messages=answered)) == inputs.Load()


def test_resume_entries_are_decisions():
    resume = [
        {"interruptId": "c1", "status": "resolved", "payload": {"approve": True}},
        {"interruptId": "c2", "status": "resolved", "payload": {"approve": False, "message": "No"}},
        {"interruptId": "c3", "status": "cancelled"},
        {"interruptId": "c4", "status": "resolved", "payload": "yes"},  # not an approval
    ]
    assert _asked(run_input("t", "ignored", resume=resume)) == inputs.Resume(
        (
            inputs.Decision("c1", True, ""),
            inputs.Decision("c2", False, "No"),
            inputs.Decision("c3", False, ""),
            inputs.Decision("c4", False, ""),
        )
    )


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("{", "invalid_json"),
        ("[]", "invalid_frame"),
        ('{"threadId": "t"}', "invalid_frame"),
        (json.dumps({**run_input("t"), "messages": [{"role": "robot"}]}), "invalid_frame"),
        (json.dumps(run_input("t", "x" * 70000)), "too_large"),
    ],
)
def test_what_is_not_a_run_agent_input_is_refused_with_the_wires_code(body, code):
    with pytest.raises(frames.BadFrame) as refused:
        inputs.parse(body, 65536)
    assert refused.value.code == code
