"""A socket's inbox: messages from the channel layer and from runs of this process come
out in the order they arrived, a full inbox sheds text deltas only, and a run on another
thread's event loop wakes the socket at once.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from django_agent_sessions.streaming import socket_io
from django_agent_sessions.streaming.socket_io import SocketIO
from tests.websocket.fanout_helpers import agent_settings  # noqa: F401 - fixture

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


def _Receiver(receive: Any) -> SocketIO:
    """The inbox alone, on a channel layer receive given by the test."""
    io = SocketIO()
    io.layer_receive = receive
    return io


async def test_the_inbox_dispatches_layer_and_local_messages_in_arrival_order():
    layer_messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    receiver = _Receiver(layer_messages.get)
    receiver.deliver_local({"n": 1})
    await layer_messages.put({"n": 2})
    first = await receiver.next_message()
    second = await receiver.next_message()
    receiver.deliver_local({"n": 3})
    assert [first, second, await receiver.next_message()] == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert receiver._pump is not None
    receiver._pump.cancel()


def _delta(seq: int) -> dict[str, Any]:
    return {"type": "agent.event", "event": {"type": "text.delta", "seq": seq, "delta": "x"}}


async def test_a_full_inbox_drops_text_deltas_and_keeps_everything_else():
    receiver = _Receiver(asyncio.Event().wait)
    for seq in range(socket_io.INBOX_CAPACITY + 5):
        receiver.deliver_local(_delta(seq))
    assert receiver.pending == socket_io.INBOX_CAPACITY
    end = {"type": "agent.event", "event": {"type": "run.completed", "seq": 10**6}}
    receiver.deliver_local(end)
    receiver.deliver_local({"type": "agent.snapshot", "snapshot": {}})
    assert receiver.pending == socket_io.INBOX_CAPACITY + 2


async def test_a_run_on_another_threads_event_loop_wakes_the_socket():
    receiver = _Receiver(asyncio.Event().wait)
    waiting = asyncio.ensure_future(receiver.next_message())
    await asyncio.sleep(0.01)  # the socket waits on its inbox
    release = threading.Event()

    def other_loop() -> None:
        async def publish() -> None:
            receiver.deliver_local(_delta(1))

        asyncio.run(publish())
        release.wait(5)  # nothing else may wake the socket's event loop meanwhile

    thread = threading.Thread(target=other_loop)
    started = time.monotonic()
    thread.start()
    try:
        assert await asyncio.wait_for(waiting, 10) == _delta(1)
        # Woken by the delivery, not by the next thing that happened to wake the loop
        # (here the 10 s timeout: an asyncio queue woken from another thread is not).
        assert time.monotonic() - started < 5
    finally:
        release.set()
        thread.join()
    assert receiver._pump is not None
    receiver._pump.cancel()
