"""A person's message as a run takes it: plain text alone, one user message with files."""

from __future__ import annotations

from django_agent_sessions.streaming.running.message import UserInput

IMAGE = {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "auto"}
SHOWN = {"id": 7, "name": "a.png", "content_type": "image/png", "size": 3}


def test_a_message_without_files_is_its_text_as_before():
    message = UserInput("hello")
    assert message.model_input() == "hello"
    assert message.shown("c-1") == {
        "kind": "message",
        "role": "user",
        "text": "hello",
        "client_id": "c-1",
    }


def test_files_follow_the_text_in_one_user_message():
    message = UserInput("look", (IMAGE,), (SHOWN,))
    assert message.model_input() == [
        {"role": "user", "content": [{"type": "input_text", "text": "look"}, IMAGE]}
    ]
    assert message.shown() == {"kind": "message", "role": "user", "text": "look", "files": [SHOWN]}


def test_files_alone_have_no_empty_text_part():
    assert UserInput("", (IMAGE,), (SHOWN,)).model_input() == [{"role": "user", "content": [IMAGE]}]
