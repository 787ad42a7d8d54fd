"""Each process knows its own sockets and its own origin: a layer message is this
process's only with its origin, a forked process starts with an origin and sockets of its
own, and a socket that can no longer take an event is forgotten without harm to the others.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from django_agent_sessions.streaming.delivery import fanout
from tests.websocket.fanout_helpers import agent_settings  # noqa: F401 - fixture

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]


# The child takes no lock the parent's threads may hold: it writes to a pipe and leaves.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
async def test_a_forked_process_has_an_origin_and_sockets_of_its_own():
    fanout.watch(1, "parent.socket", lambda message: None)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running the parent's cleanup
        child = f"{fanout.ORIGIN} {fanout.is_local('parent.socket')}"
        os.write(write_end, child.encode())
        os._exit(0)
    os.close(write_end)
    try:
        origin, local = os.read(read_end, 200).decode().split()
        os.waitpid(pid, 0)
        assert origin != fanout.ORIGIN
        assert local == "False"
        assert fanout.is_local("parent.socket")
    finally:
        os.close(read_end)
        fanout.unwatch("parent.socket")


def test_a_layer_message_is_ours_only_with_this_process_origin():
    assert fanout.from_this_process({"origin": fanout.ORIGIN, "event": {}})
    assert not fanout.from_this_process({"origin": "another-process", "event": {}})
    assert not fanout.from_this_process({"event": {}})  # messages of other publishers


def test_a_socket_that_cannot_take_an_event_is_forgotten_and_others_still_get_it():
    got: list[dict[str, Any]] = []

    def closed(message: dict[str, Any]) -> None:
        raise RuntimeError("Event loop is closed")

    fanout.watch(7, "closed.socket", closed)
    fanout.watch(7, "open.socket", got.append)
    try:
        fanout.deliver(7, {"type": "agent.event", "event": {"seq": 1}})
        assert got == [{"type": "agent.event", "event": {"seq": 1}}]
        assert not fanout.is_local("closed.socket")
        assert fanout.is_local("open.socket")
    finally:
        fanout.unwatch("open.socket")
    assert not fanout.is_local("open.socket")
