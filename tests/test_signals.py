"""The signals projects connect to (``signals.py``): three of them, each sent by what its
docstring says; ``feedback_given`` here, the run signals in
``tests/websocket/test_consumer_signals.py``."""

from __future__ import annotations

from typing import Any

import pytest
from django.dispatch import Signal

from django_agent_sessions import signals
from django_agent_sessions.models import Feedback
from django_agent_sessions.store import feedback
from tests.feedback_helpers import a_replied_conversation


def test_the_three_signals_are_distinct_signals():
    sent = [signals.run_started, signals.run_finished, signals.feedback_given]
    assert all(isinstance(signal, Signal) for signal in sent)
    assert len({id(signal) for signal in sent}) == 3


@pytest.mark.django_db
def test_feedback_given_is_sent_by_the_feedback_model_with_the_documented_arguments():
    rated = a_replied_conversation()
    heard: list[dict[str, Any]] = []

    def receiver(sender: Any, **kwargs: Any) -> None:
        heard.append({"sender": sender, **kwargs})

    signals.feedback_given.connect(receiver)
    try:
        given = feedback.give(rated.owner, "c-rated", rated.reply_id, rating=1)
    finally:
        signals.feedback_given.disconnect(receiver)
    (sent,) = heard
    assert sent["sender"] is Feedback
    assert (sent["feedback"], sent["created"], sent["user"]) == (given, True, rated.owner)
