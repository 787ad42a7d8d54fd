"""``socket_io``: a socket's inbox, where messages from the channel layer and from runs of
this process come out in the order they arrived, a full inbox sheds text deltas only,
and a run on another thread's event loop wakes the socket at once; a receive that fails
rejoins the socket's groups; and sends to a socket that is closing are dropped.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from django_agent_sessions.streaming.delivery import fanout, socket_io
from django_agent_sessions.streaming.delivery.socket_io import SocketIO
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


async def test_a_send_refused_by_a_closing_socket_drops_it_and_every_later_one():
    from autobahn.exception import Disconnected

    io, sent = SocketIO(), []

    async def server_send(message: dict[str, Any]) -> None:
        if message.get("text") == "refused":
            raise Disconnected("the browser's close handshake began")
        sent.append(message)

    send = io.guarded(server_send)
    await send({"type": "websocket.send", "text": "one"})
    await send({"type": "websocket.send", "text": "refused"})  # no exception for the consumer
    assert io.gone
    await send({"type": "websocket.send", "text": "two"})
    await send({"type": "websocket.close", "code": 1000})
    assert sent == [{"type": "websocket.send", "text": "one"}]


async def test_nothing_is_sent_after_the_consumers_own_close():
    """As ASGI says, and as uvicorn enforces: it raises on a send after a close."""
    io, sent = SocketIO(), []

    async def uvicorn_send(message: dict[str, Any]) -> None:
        if any(earlier["type"] == "websocket.close" for earlier in sent):
            raise RuntimeError(f"Unexpected ASGI message {message['type']!r} after close")
        sent.append(message)

    send = io.guarded(uvicorn_send)
    await send({"type": "websocket.close", "code": 4012})
    await send({"type": "websocket.send", "text": "an event the relay still had"})
    assert sent == [{"type": "websocket.close", "code": 4012}]


async def test_any_other_failure_of_a_send_reaches_the_consumer():
    io = SocketIO()

    async def server_send(message: dict[str, Any]) -> None:
        raise RuntimeError("a real bug")

    with pytest.raises(RuntimeError, match="a real bug"):
        await io.guarded(server_send)({"type": "websocket.send", "text": "x"})
    assert not io.gone


async def test_a_receive_that_fails_rejoins_the_groups_and_waits_again():
    failures = [ConnectionError("Connection closed by server.")] * 2
    rejoined: list[int] = []

    answers = [{"type": "agent.event", "n": 1}]

    async def receive() -> dict[str, Any]:
        if failures:
            raise failures.pop()
        if answers:
            return answers.pop()
        return await asyncio.Event().wait()  # type: ignore[return-value]  # nothing more

    async def rejoin() -> None:
        rejoined.append(len(failures))

    receiver = _Receiver(receive)
    receiver.rejoin_groups = rejoin
    assert await asyncio.wait_for(receiver.next_message(), 5) == {"type": "agent.event", "n": 1}
    assert rejoined == [1, 0]  # after each failure, before waiting again
    assert receiver._pump is not None
    receiver._pump.cancel()


async def test_a_layer_that_stays_down_fails_the_consumers_receive():
    async def receive() -> dict[str, Any]:
        raise ConnectionError("Redis is down")

    receiver = _Receiver(receive)
    with pytest.raises(ConnectionError, match="Redis is down"):
        await asyncio.wait_for(receiver.next_message(), 5)  # then the socket closes (1011)


async def test_a_watching_socket_gets_this_processs_runs_until_it_closes():
    receiver = _Receiver(asyncio.Event().wait)
    receiver.watch(987_654, "test-socket-io.watcher")
    fanout.deliver(987_654, {"type": "agent.event", "n": 1})
    assert receiver.pending == 1
    receiver.close()
    fanout.deliver(987_654, {"type": "agent.event", "n": 2})
    assert receiver.pending == 1
    assert not fanout.is_local("test-socket-io.watcher")


async def test_a_second_close_leaves_the_receives_cleanup_alone():
    """A pub/sub layer's receive unsubscribes its channel when it is cancelled; a second
    close while it does must not cancel that too (channels_redis logs it as an error)."""
    cancels: list[str] = []
    receiving, cleaning = asyncio.Event(), asyncio.Event()
    release, cleaned = asyncio.Event(), asyncio.Event()

    async def receive() -> Any:
        try:
            receiving.set()
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancels.append("receive")
            cleaning.set()
            try:
                await release.wait()  # the unsubscribe's round trip
            except asyncio.CancelledError:
                cancels.append("cleanup")
                raise
            cleaned.set()
            raise

    io = SocketIO()
    io.layer_receive = receive
    reading = asyncio.create_task(io.next_message())
    await asyncio.wait_for(receiving.wait(), 5)
    io.close()
    await asyncio.wait_for(cleaning.wait(), 5)
    io.close()  # the follower closes once more on its way out
    release.set()
    await asyncio.wait_for(cleaned.wait(), 5)
    assert cancels == ["receive"]
    reading.cancel()
