"""``titling``: after a conversation's first exchange, a title is written in the
background (the agent's model, or a function), set only while the title is still the
first message's, and told to every tab as ``conversation.title``; a rename made before
it arrives is kept; later exchanges, other settings and failures write nothing."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from agents.testing import ModelStep, assistant_message
from asgiref.sync import sync_to_async

from django_agent_sessions.models import AgentSession
from django_agent_sessions.store import owned
from django_agent_sessions.streaming.running import active_runs, arrivals, titling
from tests import chat_agent, title_functions
from tests.scripted import streamed_reply
from tests.websockets import Socket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


@pytest.fixture(autouse=True)
def reset_functions():
    title_functions.reset()
    yield
    title_functions.reset()


async def titled(session_id: str) -> tuple[str, str]:
    row = await AgentSession.objects.aget(session_id=session_id)
    return row.title, row.title_source


async def written() -> None:
    """Every title task of this process, done."""
    await asyncio.gather(*titling.writing)


async def exchange(tab: Socket, text: str) -> None:
    """Send ``text`` and wait for its run's task to end, and the title it asked for."""
    await tab.say(text)
    await tab.until("run.started")
    tasks = [run.task for run in active_runs.local_runs() if run.task is not None]
    await tab.until("run.completed")
    await asyncio.gather(*tasks)  # (the title task is started after the end is told)
    await written()


async def test_the_agents_model_titles_the_first_exchange_and_every_tab_hears(
    alice_cookie: bytes, session_id: str, use_agent: Any
) -> None:
    use_agent("tests.chat_agent.make_agent", TITLES="agent")
    model = chat_agent.script(
        streamed_reply("It is sunny in Paris."),
        ModelStep(output=[assistant_message('Title: "Paris weather today."\nmore')]),
        streamed_reply("Tomorrow too."),
    )
    tab, other = Socket(session_id, alice_cookie), Socket(session_id, alice_cookie)
    await tab.open()
    await tab.say("Weather in Paris?")
    await other.open()
    frames = await tab.until("conversation.title")
    assert [f["type"] for f in frames][-2:] == ["run.completed", "conversation.title"]
    assert frames[-1] == {"type": "conversation.title", "title": "Paris weather today"}
    assert (await other.until("conversation.title"))[-1]["title"] == "Paris weather today"
    assert await titled(session_id) == ("Paris weather today", "model")
    # The title model read the exchange, with no tools and none of the history.
    asked = model.calls[1]
    assert "User: Weather in Paris?" in str(asked.input)
    assert "Assistant: It is sunny in Paris." in str(asked.input)
    assert not asked.tools
    # A second exchange writes no title (and asks no model for one).
    await exchange(tab, "And tomorrow?")
    assert len(model.calls) == 3
    assert await titled(session_id) == ("Paris weather today", "model")


async def test_a_rename_made_while_the_title_is_written_is_kept(
    alice: Any, alice_cookie: bytes, session_id: str, use_agent: Any
) -> None:
    use_agent("tests.chat_agent.make_agent", TITLES={"FUNCTION": "tests.title_functions.gated"})
    title_functions.gate, title_functions.entered = asyncio.Event(), asyncio.Event()
    chat_agent.script(streamed_reply("Hello there."))
    tab = Socket(session_id, alice_cookie)
    await tab.open()
    await tab.say("Hi")
    await tab.until("run.started")
    await tab.until("run.completed")
    await asyncio.wait_for(title_functions.entered.wait(), 5)  # the title is being written
    await sync_to_async(owned.rename)(session_id, alice, "My own title")
    title_functions.gate.set()
    await written()
    assert await titled(session_id) == ("My own title", "person")
    assert title_functions.calls == [("Hi", "Hello there.")]
    with pytest.raises(asyncio.TimeoutError):
        await tab.until("conversation.title", timeout=0.2)  # (the task is done: no frame)


async def test_a_rename_before_the_exchange_ends_asks_for_no_title(
    alice: Any, alice_cookie: bytes, session_id: str, use_agent: Any
) -> None:
    use_agent("tests.chat_agent.make_agent", TITLES={"FUNCTION": "tests.title_functions.gated"})
    gate = asyncio.Event()
    chat_agent.script(streamed_reply("A long answer", gate=gate))
    tab = Socket(session_id, alice_cookie)
    await tab.open()
    await tab.say("Hi")
    await tab.until("run.started")
    [run] = active_runs.local_runs()
    await tab.until("text.delta")  # the reply is being written
    await sync_to_async(owned.rename)(session_id, alice, "Named first")
    gate.set()
    await tab.until("run.completed")
    assert run.task is not None
    await run.task
    await written()
    assert title_functions.calls == []
    assert await titled(session_id) == ("Named first", "person")


async def test_without_the_setting_no_title_is_asked_for(
    alice_cookie: bytes, session_id: str, use_agent: Any
) -> None:
    use_agent("tests.chat_agent.make_agent")
    chat_agent.script(streamed_reply("One."))
    tab = Socket(session_id, alice_cookie)
    await tab.open()
    await exchange(tab, "First message")
    assert not titling.writing
    assert await titled(session_id) == ("First message", "")


async def test_a_failing_function_is_logged_and_changes_nothing(
    alice_cookie: bytes, session_id: str, use_agent: Any, caplog: Any
) -> None:
    use_agent("tests.chat_agent.make_agent", TITLES={"FUNCTION": "tests.title_functions.failing"})
    chat_agent.script(streamed_reply("One."), streamed_reply("Two."))
    tab = Socket(session_id, alice_cookie)
    await tab.open()
    with caplog.at_level(logging.ERROR, logger=titling.__name__):
        await exchange(tab, "First message")
    assert title_functions.calls == [("First message", "One.")]
    assert "Could not write a title" in caplog.text
    assert await titled(session_id) == ("First message", "")
    await exchange(tab, "Second")  # not the first exchange: the function is not asked again
    assert len(title_functions.calls) == 1


async def test_a_title_ready_before_the_next_replys_first_token_waits_for_it(
    alice_cookie: bytes, session_id: str, use_agent: Any
) -> None:
    use_agent("tests.chat_agent.make_agent", TITLES={"FUNCTION": "tests.title_functions.gated"})
    title_functions.gate, title_functions.entered = asyncio.Event(), asyncio.Event()
    pace = asyncio.Semaphore(0)  # the second reply's tokens, one per release
    chat_agent.script(streamed_reply("Hello there."), streamed_reply("Again.", pace=pace))
    tab = Socket(session_id, alice_cookie)
    await tab.open()
    await tab.say("Hi")
    await tab.until("run.completed")
    await asyncio.wait_for(title_functions.entered.wait(), 5)  # the title is being written
    await tab.say("And now?")  # answered at once, as the title is written
    await tab.until("item.completed")  # the message, stored; the reply has no token yet
    title_functions.gate.set()  # the title is ready
    assert await tab.nothing_more(0.5)  # no title frame,
    assert await titled(session_id) == ("Hi", "")  # and none written
    pace.release()
    frames = await tab.until("conversation.title")
    assert "text.delta" in [frame["type"] for frame in frames]  # the first token went first
    assert await titled(session_id) == ("About Hi", "model")
    for _token in range(20):
        pace.release()
    await tab.until("run.completed")


async def test_a_worker_never_quiet_writes_the_title_after_its_bound(
    alice_cookie: bytes, session_id: str, use_agent: Any
) -> None:
    use_agent(
        "tests.chat_agent.make_agent",
        TITLES={"FUNCTION": "tests.title_functions.gated"},
        TITLE_WAIT_SECONDS=0.05,
    )
    chat_agent.script(streamed_reply("Hello there."))
    tab = Socket(session_id, alice_cookie)
    await tab.open()
    # Another message of this worker, on its way for good: the worker is never quiet.
    with arrivals.on_its_way(lambda: None):
        await tab.say("Hi")
        await tab.until("conversation.title")
        assert await titled(session_id) == ("About Hi", "model")
