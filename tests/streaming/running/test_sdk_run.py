"""``SdkRun``: the SDK's streamed run, started, its events queued, then an ``End``."""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Agent
from agents.stream_events import RawResponsesStreamEvent

from django_agent_sessions.streaming.running.queued import End
from django_agent_sessions.streaming.running.sdk_run import SdkRun
from tests.scripted import ScriptedModel, streamed_reply


def agent(*steps: Any) -> Agent:
    return Agent(name="Assistant", model=ScriptedModel(list(steps)))


async def drained(queue: asyncio.Queue[Any]) -> list[Any]:
    events = [await asyncio.wait_for(queue.get(), 30)]
    while not isinstance(events[-1], End):
        events.append(await asyncio.wait_for(queue.get(), 30))
    return events


async def test_the_sdks_events_are_queued_then_its_end() -> None:
    queue: asyncio.Queue[Any] = asyncio.Queue()
    sdk = SdkRun(queue)
    assert sdk.begin(agent(streamed_reply("Hello there", token_size=2)), "Hi") is None
    events = await drained(queue)
    deltas = [e.data.delta for e in events if isinstance(e, RawResponsesStreamEvent)
              and e.data.type == "response.output_text.delta"]  # fmt: skip
    assert "".join(deltas) == "Hello there"
    await sdk.stop()
    assert sdk.end() == End()
    assert sdk.result.final_output == "Hello there"


async def test_what_the_sdk_raises_at_the_start_is_returned_and_nothing_runs() -> None:
    queue: asyncio.Queue[Any] = asyncio.Queue()
    sdk = SdkRun(queue)
    refused = sdk.begin(agent(streamed_reply("x")), "Hi", hooks="not RunHooks")
    assert isinstance(refused, Exception)
    assert "hooks" in str(refused).lower()
    assert (sdk.task, sdk.result, queue.empty()) == (None, None, True)
    await sdk.stop()  # nothing to stop
    assert sdk.end() == End()


async def test_stop_cancels_a_run_still_going_and_waits_for_its_end() -> None:
    gate = asyncio.Event()  # never set: the model waits after its first token
    queue: asyncio.Queue[Any] = asyncio.Queue()
    sdk = SdkRun(queue)
    assert sdk.begin(agent(streamed_reply("abcd", token_size=2, gate=gate)), "Hi") is None
    while not isinstance(await asyncio.wait_for(queue.get(), 30), RawResponsesStreamEvent):
        pass
    await sdk.stop()
    assert sdk.task is not None
    assert sdk.task.done()
    assert sdk.result.is_complete
    assert isinstance(sdk.end(), End)


async def test_a_run_cancelled_before_it_began_is_cancelled_at_once() -> None:
    queue: asyncio.Queue[Any] = asyncio.Queue()
    sdk = SdkRun(queue)
    assert sdk.begin(agent(streamed_reply("never")), "Hi", cancelled=True) is None
    events = await drained(queue)
    assert not any(isinstance(e, RawResponsesStreamEvent) for e in events)
    assert sdk.result.final_output is None
