"""``watch``: a tab keeps checking a run it follows for as long as the run's record says
it goes on, so it learns the run's end within ``FOLLOW_CHECK_SECONDS`` +
``CATCHUP_TIMEOUT_SECONDS`` (docs/wire-protocol.md) even from a channel layer that never
delivers again (a PostgreSQL listener that did not come back, a half-open connection).

The tab is a socket of another worker, simulated in this process (``OtherWorkerSocket``:
it gets the run's events only through the layer); the layer is the repo's lossy Redis
layer, which stops delivering the run's events and every catch-up's question and answer
once the tab has the run's first text. The run goes on past three unanswered catch-ups,
then ends: the tab must show the stored reply, within the bound.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from typing import Any

import pytest
from channels.layers import get_channel_layer

from django_agent_sessions.streaming.delivery import fanout
from django_agent_sessions.streaming.following.relay import CATCHUP_ATTEMPTS
from tests import chat_agent
from tests.scripted import streamed_reply
from tests.streaming.delivery.test_fanout_other_worker import OtherWorkerSocket
from tests.task_workers import ended
from tests.websocket.fanout_helpers import ANSWER, conversation_pk_fixture  # noqa: F401
from tests.websockets import Socket

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.redis,
    pytest.mark.usefixtures("closing_sockets"),
]

TIMERS = {"FOLLOW_CHECK_SECONDS": 0.3, "CATCHUP_TIMEOUT_SECONDS": 0.1, "GAP_TIMEOUT_SECONDS": 0.1}
BOUND = TIMERS["FOLLOW_CHECK_SECONDS"] + TIMERS["CATCHUP_TIMEOUT_SECONDS"]
SLACK = 2.0  # what the bound leaves to a loaded 2-core machine: a database hop, a scheduler
WAIT = 10.0  # for what must happen: far more than BOUND + SLACK


@pytest.fixture
def lossy_layer(settings: Any, use_agent: Any) -> Any:
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        if os.environ.get("CI"):
            pytest.fail("REDIS_URL is not set: CI must run the Redis channel layer tests")
        pytest.skip("REDIS_URL is not set (bin/test starts Redis and sets it)")
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "tests.lossy_layer.LossyRedisChannelLayer",
            "CONFIG": {
                "hosts": [{"address": redis_url, "socket_timeout": None}],
                "prefix": f"deaf-{uuid.uuid4().hex[:8]}:",
            },
        }
    }
    use_agent("tests.chat_agent.make_agent", **TIMERS)
    return get_channel_layer()


def _stored_reply(frame: dict[str, Any], run_id: str) -> str | None:
    """The run's stored reply in a history frame that shows the run over, else None."""
    if frame["type"] != "history" or frame["active_run"] is not None:
        return None
    replies = [item for item in frame["items"] if item.get("run_id") == run_id]
    return replies[-1].get("text") if replies else None


async def test_a_tab_whose_layer_never_delivers_again_learns_the_runs_end_within_the_bound(
    lossy_layer, alice_cookie, session_id, conversation_pk
):
    goes_on = asyncio.Event()
    chat_agent.script(streamed_reply(ANSWER, gate=goes_on, delay=0.005))
    here, there = Socket(session_id, alice_cookie), OtherWorkerSocket(session_id, alice_cookie)
    await here.open()
    await there.open()
    await here.say("Weather?")
    run_id = (await there.until("text.delta"))[-1]["run_id"]  # it follows the run
    # From now on the layer loses every event and catch-up: the tab hears nothing more.
    asked: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def lost(message: dict[str, Any]) -> None:
        remote = not fanout.is_local(str(message.get("reply_to")))
        if message["type"] == "agent.catchup" and remote:
            asked.put_nowait(message)  # a question of the other worker's tab, lost

    lossy_layer.on_drop, lossy_layer.drop = lost, 1.0
    # Its silence makes it ask the run, three times, unanswered; the record says the run
    # goes on, so it asks again: once more proves it did not give up.
    for _question in range(CATCHUP_ATTEMPTS + 1):
        await asyncio.wait_for(asked.get(), WAIT)
    goes_on.set()
    # Recorded, then published (lost there). Read from the record: the sending tab is
    # silent through the gate too, and its own catch-ups are lost as well.
    await ended(run_id, timeout=WAIT)
    ended_at = time.monotonic()
    while (reply := _stored_reply(await there.receive(timeout=WAIT), run_id)) is None:
        pass
    learned = time.monotonic() - ended_at
    assert reply == ANSWER
    print(f"the tab learned the end {learned:.2f} s after it was recorded")
    assert learned <= BOUND + SLACK, learned
