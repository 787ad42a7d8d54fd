"""DjangoSession under the real SDK Runner, driven by ``agents.testing.ScriptedModel``."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from agents import Agent, Runner, function_tool
from agents.extensions.memory import EncryptedSession
from agents.testing import ScriptedModel, assistant_message, function_call

from django_agent_sessions import DjangoSession
from django_agent_sessions.models import SessionItem

pytestmark = pytest.mark.django_db(transaction=True)


@function_tool
def clock() -> str:
    """Tell the time."""
    return "12:00"


class RecordingSession(DjangoSession):
    """A real DjangoSession that also remembers each batch the Runner writes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.batches: list[list[Any]] = []

    async def add_items(self, items: list[Any], **kwargs: Any) -> None:
        self.batches.append(list(items))
        await super().add_items(items, **kwargs)


def agent_with(*steps: Any) -> tuple[Agent[Any], ScriptedModel]:
    model = ScriptedModel(list(steps))
    return Agent(name="assistant", model=model, tools=[clock]), model


def kinds(items: list[Any]) -> list[str]:
    return [item.get("type", "message") + ":" + item.get("role", "") for item in items]


def input_texts(call_input: Any) -> list[str]:
    texts = []
    for item in call_input:
        content = item.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(part.get("text", "") for part in content if isinstance(part, dict))
    return texts


async def test_second_run_sees_the_first_turn(session_id):
    agent, model = agent_with([assistant_message("Sunny.")], [assistant_message("Rain.")])
    session = DjangoSession(session_id)
    first = await Runner.run(agent, "Weather today?", session=session)
    second = await Runner.run(agent, "And tomorrow?", session=session)
    assert (first.final_output, second.final_output) == ("Sunny.", "Rain.")
    assert input_texts(model.calls[1].input) == ["Weather today?", "Sunny.", "And tomorrow?"]
    assert kinds(await session.get_items()) == [
        "message:user",
        "message:assistant",
        "message:user",
        "message:assistant",
    ]


async def test_tool_turn_is_stored_as_call_then_output_in_the_runners_batches(session_id):
    agent, _ = agent_with(
        [function_call("clock", {}, call_id="call-1")], [assistant_message("It is noon.")]
    )
    session = RecordingSession(session_id)
    result = await Runner.run(agent, "What time is it?", session=session)
    assert result.final_output == "It is noon."
    assert [kinds(batch) for batch in session.batches] == [
        ["message:user"],
        ["function_call:", "function_call_output:"],
        ["message:assistant"],
    ]
    stored = await session.get_items()
    assert stored == [item for batch in session.batches for item in batch]
    assert stored[1]["call_id"] == stored[2]["call_id"] == "call-1"
    assert stored[2]["output"] == "12:00"
    columns = [
        row async for row in SessionItem.objects.order_by("id").values_list("item_type", "call_id")
    ]
    assert columns == [
        ("message", ""),
        ("function_call", "call-1"),
        ("function_call_output", "call-1"),
        ("message", ""),
    ]


async def test_run_streamed(session_id):
    agent, _ = agent_with([assistant_message("Streamed hello.")])
    session = DjangoSession(session_id)
    result = Runner.run_streamed(agent, "Hi", session=session)
    event_types = [event.type async for event in result.stream_events()]
    assert "raw_response_event" in event_types
    assert result.final_output == "Streamed hello."
    assert kinds(await session.get_items()) == ["message:user", "message:assistant"]


def test_run_sync_in_worker_threads(session_id):
    outputs: dict[int, Any] = {}

    def chat(index: int) -> None:
        agent, _ = agent_with([assistant_message(f"reply {index}")])
        session = DjangoSession(f"{session_id}-{index}")
        outputs[index] = Runner.run_sync(agent, f"hello {index}", session=session).final_output

    threads = [threading.Thread(target=chat, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert outputs == {i: f"reply {i}" for i in range(3)}
    for index in range(3):
        items = asyncio.run(DjangoSession(f"{session_id}-{index}").get_items())
        assert input_texts(items) == [f"hello {index}", f"reply {index}"]


async def test_a_model_error_leaves_the_user_message_stored(session_id):
    agent, _ = agent_with(RuntimeError("model is down"))
    session = DjangoSession(session_id)
    with pytest.raises(RuntimeError, match="model is down"):
        await Runner.run(agent, "Hello?", session=session)
    assert kinds(await session.get_items()) == ["message:user"]


async def test_encrypted_session_around_django_session(session_id):
    agent, model = agent_with([assistant_message("Secret one.")], [assistant_message("Two.")])
    inner = DjangoSession(session_id)
    session = EncryptedSession(
        session_id=session_id,
        underlying_session=inner,
        encryption_key="a-high-entropy-test-key-0123456789abcdef",
    )
    await Runner.run(agent, "my password is hunter2", session=session)
    await Runner.run(agent, "what did I say?", session=session)
    assert "my password is hunter2" in input_texts(model.calls[1].input)
    payloads = [p async for p in SessionItem.objects.values_list("payload", flat=True)]
    assert len(payloads) == 4
    assert not any("hunter2" in payload for payload in payloads)
    assert (await session.pop_item())["content"][0]["text"] == "Two."  # type: ignore[index]
    assert len(await inner.get_items()) == 3
